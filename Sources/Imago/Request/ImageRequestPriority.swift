extension ImageRequest {
    /// How urgent a request is. Higher priorities leave the download queue first.
    public enum Priority: Int, Sendable, Hashable, Comparable, CaseIterable {
        /// Last of all (prefetching far ahead, say).
        case veryLow = 0
        /// After normal requests (prefetching).
        case low = 1
        /// The default.
        case normal = 2
        /// Before normal requests (visible images).
        case high = 3
        /// First of all (the image the user is looking at).
        case veryHigh = 4

        /// Lower priorities order first.
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}
