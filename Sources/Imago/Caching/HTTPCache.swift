import Foundation

/// HTTP caching (RFC 9111, a private cache) over a ``DiskCaching`` store (``DiskCache`` by default): whether a stored entry may be
/// served under a request's cache policy, the conditional request that revalidates a stale one,
/// and what a `200` or a `304` writes back. Writes wait (``PendingWrite``) until the bytes have
/// validated, so bytes that crash or fail a decoder are never stored and replayed.
struct HTTPCache: Sendable {
    let disk: any DiskCaching
    /// The lifetime of a response that says nothing of freshness (see ``HTTPFreshness``).
    let heuristicLifetime: Duration

    /// What the disk holds for a key, judged under a cache policy.
    enum Lookup: Sendable {
        /// Servable with no request to the origin.
        case fresh(CacheEntry)
        /// Stored, but to be revalidated (or replaced) by a request.
        case stale(CacheEntry)
        case miss
    }

    /// A write to the disk cache that waits for its bytes to validate.
    struct PendingWrite: Sendable {
        enum Write: Sendable {
            /// New bytes from a 200 response.
            case store(CacheMetadata)
            /// A 304's headers for the stored bytes.
            case refresh(CacheMetadata)
        }
        let disk: any DiskCaching
        let key: String
        /// Nil when nothing is to be written (served from disk as stored).
        var write: Write?

        /// Settles the entry once its bytes are judged: `valid` bytes are written (or their entry
        /// refreshed); invalid ones are not, and an entry that held them is removed, so an entry
        /// known to fail is never served again.
        func settle(_ data: Data, valid: Bool) {
            switch (valid, write) {
            case (false, _): disk.remove(key)
            case (true, .store(let metadata)): disk.store(data, for: key, metadata: metadata)
            case (true, .refresh(let metadata)): disk.refresh(metadata, for: key)
            case (true, nil): break
            }
        }
    }

    /// What a response means for the cache: its freshness as stored, whether any cache may keep it,
    /// and the write that waits for its bytes.
    struct Received: Sendable {
        var metadata: CacheMetadata
        var isStorable: Bool
        var pendingWrite: PendingWrite?
    }

    /// The entry for `key`, judged under `policy` at `now`.
    func lookup(_ key: String, policy: ImageRequest.CachePolicy, now: Date) -> Lookup {
        guard policy != .reloadIgnoringCache, let entry = disk.entry(for: key) else { return .miss }
        return Self.servesWithoutRequest(entry.metadata, policy: policy, now: now) ? .fresh(entry) : .stale(entry)
    }

    /// Whether an entry answers a request with no request to the origin.
    static func servesWithoutRequest(_ metadata: CacheMetadata, policy: ImageRequest.CachePolicy, now: Date) -> Bool {
        let fresh = metadata.isFresh(at: now)
        switch policy {
        case .returnCacheDataDontLoad: return true
        case .refreshCached: return fresh && metadata.freshness.isImmutable
        case .useProtocolCachePolicy: return fresh
        case .reloadIgnoringCache: return false
        }
    }

    /// The headers that make a request revalidate `stale`.
    static func validationHeaders(for stale: CacheEntry?) -> HeaderFields {
        stale?.metadata.freshness.validationHeaders ?? [:]
    }

    /// The entry served as stored: nothing to write, but removed if its bytes fail.
    func served(_ key: String) -> PendingWrite {
        PendingWrite(disk: disk, key: key)
    }

    /// What a response received at `receivedAt` says of caching, whether or not there is a cache.
    static func metadata(of response: ResponseHead, receivedAt: Date, heuristicLifetime: Duration) -> CacheMetadata {
        let freshness = HTTPFreshness(headers: response.headers, receivedAt: receivedAt, heuristicLifetime: heuristicLifetime)
        return CacheMetadata(contentType: response.headers["Content-Type"], receivedAt: receivedAt, freshness: freshness)
    }

    /// The response headers a stored entry is served with: its Content-Type, if it had one.
    static func headers(of entry: CacheEntry) -> HeaderFields {
        entry.metadata.contentType.map { ["Content-Type": $0] } ?? [:]
    }

    /// A `200` (or other full response) received at `receivedAt` for `key`. With `writes`, a
    /// storable 200 is to be stored, and a `no-store` response removes what the key held.
    func received(_ response: ResponseHead, at receivedAt: Date, key: String, writes: Bool) -> Received {
        let metadata = Self.metadata(of: response, receivedAt: receivedAt, heuristicLifetime: heuristicLifetime)
        let freshness = metadata.freshness
        var pendingWrite: PendingWrite?
        if writes {
            if freshness.isStorable && response.statusCode == 200 {
                pendingWrite = PendingWrite(disk: disk, key: key, write: .store(metadata))
            } else if !freshness.isStorable {
                disk.remove(key)
            }
        }
        return Received(metadata: metadata, isStorable: freshness.isStorable, pendingWrite: pendingWrite)
    }

    /// A `304` received at `receivedAt` in answer to revalidating `stale`: its headers update the
    /// stored ones (RFC 9111 §4.3.4), validators it omits are kept.
    func revalidated(_ head: ResponseHead, stale: CacheEntry, at receivedAt: Date, key: String, writes: Bool) -> Received {
        var headers = head.headers
        if head.headers["ETag"] == nil, let etag = stale.metadata.freshness.etag { headers.append(name: "ETag", value: etag) }
        if head.headers["Last-Modified"] == nil, let modified = stale.metadata.freshness.lastModified { headers.append(name: "Last-Modified", value: modified) }
        let freshness = HTTPFreshness(headers: headers, receivedAt: receivedAt, heuristicLifetime: heuristicLifetime)
        let metadata = CacheMetadata(contentType: stale.metadata.contentType, receivedAt: receivedAt, freshness: freshness)
        var pendingWrite = served(key)
        if writes {
            if freshness.isStorable {
                pendingWrite.write = .refresh(metadata)
            } else {
                disk.remove(key)
            }
        }
        return Received(metadata: metadata, isStorable: freshness.isStorable, pendingWrite: pendingWrite)
    }
}
