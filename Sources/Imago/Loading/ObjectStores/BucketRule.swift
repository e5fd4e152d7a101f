import Foundation

/// Which buckets an object-store loader may read (imgproxy 4's `*_ALLOWED_BUCKETS` and
/// `*_DENIED_BUCKETS`): with an allowed list, only those; never a denied one. Checked before any
/// request is made.
public struct BucketRule: Sendable, Equatable {
    /// The only buckets allowed; nil or empty allows any bucket not denied (imgproxy's rule).
    public var allowed: [String]?
    /// Buckets never read.
    public var denied: [String]

    /// A rule from the two lists; the default allows every bucket.
    public init(allowed: [String]? = nil, denied: [String] = []) {
        self.allowed = allowed
        self.denied = denied
    }

    /// Whether `bucket` may be read.
    public func allows(_ bucket: String) -> Bool {
        if let allowed, !allowed.isEmpty, !allowed.contains(bucket) { return false }
        return !denied.contains(bucket)
    }

    /// Throws `sourceRefused` naming the store and the bucket when `bucket` may not be read.
    func check(_ bucket: String, store: String, url: URL) throws(ImagoError) {
        guard allows(bucket) else { throw ImagoError(.sourceRefused("access to the \(store) bucket \(bucket) is denied"), url: url) }
    }
}
