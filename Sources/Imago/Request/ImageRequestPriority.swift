extension ImageRequest {
    /// How urgent a request is. Higher priorities leave the download queue first.
    public enum Priority: Int, Sendable, Hashable, Comparable, CaseIterable {
        case veryLow = 0
        case low = 1
        case normal = 2
        case high = 3
        case veryHigh = 4

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}
