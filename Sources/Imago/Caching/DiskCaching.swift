import Foundation

/// What the pipeline needs of a cache of original bytes: ``DiskCache`` is Imago's, on local disk;
/// implement this to plug in another tier (a cache shared by several hosts, say). The pipeline
/// applies HTTP caching over it (``ImagePipeline/Configuration/diskCache``): it decides freshness
/// from the metadata, and writes only bytes that decoded.
///
/// Every byte an implementation returns is treated as untrusted, as the network's are.
public protocol DiskCaching: Sendable {
    /// The entry stored under `key`, or nil. Called on the pipeline's cache stage, never on Swift's
    /// cooperative pool, so it may block on I/O.
    func entry(for key: String) -> CacheEntry?
    /// Stores `data` under `key`, replacing what was there.
    func store(_ data: Data, for key: String, metadata: CacheMetadata)
    /// Replaces the metadata of the entry under `key`, keeping its bytes (after a `304`).
    func refresh(_ metadata: CacheMetadata, for key: String)
    /// Removes the entry under `key`.
    func remove(_ key: String)
    /// Returns once every change made so far is stored.
    func flush()
    /// The placeholder bytes recorded beside the entry under `key` (a ``ThumbHash``), read without
    /// the entry's payload; nil when none. The default records none.
    func placeholder(for key: String) -> Data?
    /// Records `placeholder` beside the entry under `key`, if there is one; storing new bytes
    /// under the key drops it. The default records nothing.
    func storePlaceholder(_ placeholder: Data, for key: String)
}

extension DiskCaching {
    /// None recorded.
    public func placeholder(for key: String) -> Data? { nil }
    /// Nothing recorded.
    public func storePlaceholder(_ placeholder: Data, for key: String) {}
}

/// What is known of a cached response besides its bytes: what HTTP caching decides from.
public struct CacheMetadata: Sendable, Hashable {
    /// The response's Content-Type, if it sent one.
    public var contentType: String?
    /// When the response was received (or last revalidated).
    public var receivedAt: Date
    /// Freshness and validators from the response headers.
    public var freshness: HTTPFreshness

    /// Makes metadata.
    public init(contentType: String?, receivedAt: Date, freshness: HTTPFreshness) {
        self.contentType = contentType
        self.receivedAt = receivedAt
        self.freshness = freshness
    }

    /// Whether the entry may be served without revalidation at `now`.
    public func isFresh(at now: Date) -> Bool {
        freshness.isFresh(storedAt: receivedAt, now: now)
    }
}

/// A cached payload and its metadata, as a ``DiskCaching`` tier returns it.
public struct CacheEntry: Sendable {
    /// The key it was stored under.
    public var key: String
    /// The bytes, verified against the stored size and checksum.
    public var data: Data
    /// What is known of the response.
    public var metadata: CacheMetadata

    /// Makes an entry.
    public init(key: String, data: Data, metadata: CacheMetadata) {
        self.key = key
        self.data = data
        self.metadata = metadata
    }
}
