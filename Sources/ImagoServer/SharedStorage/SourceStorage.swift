import Foundation
import Imago

/// The fleet's tier of originals (`--source-storage`, thumbor's `STORAGE`): the pipeline's disk
/// cache of sources, seen through the store the nodes share. Before a variant is made (holding no
/// worker), ``prepare(_:)`` looks for its source: on the node's disk, then in the store, where a
/// source another node fetched is read (and kept on the disk); when no node has it, this node takes
/// the store's lease, or waits for the node that holds it, so the origin sees one fetch. The
/// pipeline then reads what was prepared through this ``DiskCaching``, and applies HTTP caching
/// over it as over its own disk: a stored original that is stale is revalidated with its
/// validators, one the origin sent with `no-store` is never stored (nor, in the store the fleet
/// shares, one sent `private`: RFC 9111 keeps those out of shared caches). What the pipeline stores for a
/// source this node fetched for the fleet (a `200`, or a `304`'s new freshness) is written to the
/// store after it decoded, and the write ends the lease.
///
/// Only http(s) sources fetched by the server's rules alone are shared: a request with a client's
/// cookies or headers skips every disk cache, and object-store sources are stores already.
final class SourceStorage: DiskCaching {
    let storage: SharedStorage
    /// The node's own disk cache, if it has one.
    let local: (any DiskCaching)?
    private let prepared = Locked<[String: Prepared]>([:])
    /// One look in the store per source at a time on this node.
    private let lookups = SingleFlight<String, Void>()

    /// A source some make on this node is about to read or reads now.
    private struct Prepared {
        /// Makes that prepared it and have not ended.
        var users = 0
        /// What the store gave (and, without a disk, what the fetch gave), handed to the pipeline.
        var entry: CacheEntry?
        /// This node fetches it for the fleet: what the pipeline stores is written to the store.
        var fetches = false
        /// The look in the store is done.
        var looked = false

        /// Whether what the pipeline stores with `metadata` goes to the store: once, when this
        /// node fetches for the fleet and the origin did not say `private`. Otherwise the lease
        /// stays to be ended by ``SourceStorage/ended(_:)``.
        mutating func takeWrite(_ metadata: CacheMetadata) -> Bool {
            guard fetches, !metadata.freshness.isPrivate else { return false }
            fetches = false
            return true
        }
    }

    init(storage: SharedStorage, local: (any DiskCaching)?) {
        self.storage = storage
        self.local = local
    }

    /// Gets `key`'s source ready for a make: from the node's disk when fresh there, else from the
    /// store, else the fleet's lease is taken (or waited on) and this node fetches it. Every call
    /// is matched by one ``ended(_:)`` once its make has ended.
    func prepare(_ key: String) async {
        prepared.withLock { $0[key, default: Prepared()].users += 1 }
        _ = try? await lookups.value(for: key) { await self.lookUp(key) }
    }

    /// A make that prepared `key` has ended; when it was the last, what was handed is dropped
    /// and a lease this node still holds (the fetch stored nothing: it failed, or `no-store` or
    /// `private`) ends.
    func ended(_ key: String) async {
        let fetched = prepared.withLock { prepared -> Bool in
            guard var entry = prepared[key] else { return false }
            entry.users -= 1
            guard entry.users <= 0 else {
                prepared[key] = entry
                return false
            }
            prepared[key] = nil
            return entry.fetches
        }
        if fetched { await storage.releaseNow(key: key) }
    }

    private func lookUp(_ key: String) async {
        if prepared.withLock({ $0[key]?.looked == true }) { return }
        defer { update(key) { $0.looked = true } }
        if let entry = local?.entry(for: key), entry.metadata.isFresh(at: Date()) { return }
        var found: StoredObject?
        switch await storage.read(key: key) {
        case .result(let object): found = object
        case .failed: break
        case .absent:
            if case .found(let object) = await storage.lookUpAfterMiss(key: key) { found = object }
        }
        guard let found else {
            // No node has it: this one fetches it, and what it stores goes to the store.
            update(key) { $0.fetches = true }
            return
        }
        let entry = Self.entry(found, key: key)
        local?.store(entry.data, for: key, metadata: entry.metadata)
        // A stale original is revalidated by the pipeline: the new freshness goes back to the store.
        // Without a disk, it waits in memory for the makes that prepared it.
        let hands = local == nil
        update(key) {
            if hands { $0.entry = entry }
            $0.fetches = !entry.metadata.isFresh(at: Date())
        }
    }

    private func update(_ key: String, _ change: (inout Prepared) -> Void) {
        prepared.withLock { prepared in
            guard var entry = prepared[key] else { return }
            change(&entry)
            prepared[key] = entry
        }
    }

    // MARK: - DiskCaching

    func entry(for key: String) -> CacheEntry? {
        prepared.withLock { $0[key]?.entry } ?? local?.entry(for: key)
    }

    func store(_ data: Data, for key: String, metadata: CacheMetadata) {
        local?.store(data, for: key, metadata: metadata)
        let hands = local == nil
        let fetched = prepared.withLock { prepared -> Bool in
            guard var entry = prepared[key] else { return false }
            defer { prepared[key] = entry }
            // Without a disk, the other makes of this source on this node read it from here.
            if hands { entry.entry = CacheEntry(key: key, data: data, metadata: metadata) }
            return entry.takeWrite(metadata)
        }
        if fetched { storage.write(Self.object(data, metadata), key: key) }
    }

    func refresh(_ metadata: CacheMetadata, for key: String) {
        let handed = prepared.withLock { $0[key]?.entry }
        let data = handed?.data ?? local?.entry(for: key)?.data
        local?.refresh(metadata, for: key)
        let fetched = prepared.withLock { prepared -> Bool in
            guard var entry = prepared[key] else { return false }
            defer { prepared[key] = entry }
            entry.entry?.metadata = metadata
            return entry.takeWrite(metadata)
        }
        if fetched, let data { storage.write(Self.object(data, metadata), key: key) }
    }

    func remove(_ key: String) {
        local?.remove(key)
        update(key) { $0.entry = nil }
    }

    func flush() { local?.flush() }

    func placeholder(for key: String) -> Data? { local?.placeholder(for: key) }

    func storePlaceholder(_ placeholder: Data, for key: String) { local?.storePlaceholder(placeholder, for: key) }

    // MARK: - Objects

    /// The object an original is stored as: its bytes, validators and freshness.
    static func object(_ data: Data, _ metadata: CacheMetadata) -> StoredObject {
        let freshness = metadata.freshness
        var directives = ["max-age=\(Int64(freshness.lifetime.inSeconds))"]
        if freshness.isImmutable { directives.append("immutable") }
        if freshness.requiresRevalidation { directives.append("must-revalidate") }
        // What the origin said, only as far as a stored head may carry it.
        func printable(_ text: String?, max: Int) -> String? {
            guard let text, !text.isEmpty, text.count <= max, text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
            return text
        }
        let type = metadata.contentType.map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased() }
        return StoredObject(
            kind: .source, storedAt: Int64(metadata.receivedAt.timeIntervalSince1970),
            contentType: type.flatMap { StoredObject.isMediaType($0) ? $0 : nil } ?? "application/octet-stream",
            etag: printable(freshness.etag, max: 128), lastModified: printable(freshness.lastModified, max: 64),
            cacheControl: directives.joined(separator: ", "), age: Int64(freshness.initialAge.inSeconds), body: data)
    }

    /// The cache entry `object` stands for, its freshness read back through HTTP's own rules.
    static func entry(_ object: StoredObject, key: String) -> CacheEntry {
        var headers: HeaderFields = ["Content-Type": object.contentType]
        if let cacheControl = object.cacheControl { headers["Cache-Control"] = cacheControl }
        if let age = object.age { headers["Age"] = String(age) }
        if let etag = object.etag { headers["ETag"] = etag }
        if let lastModified = object.lastModified { headers["Last-Modified"] = lastModified }
        let receivedAt = Date(timeIntervalSince1970: Double(object.storedAt))
        let metadata = CacheMetadata(
            contentType: object.contentType, receivedAt: receivedAt, freshness: HTTPFreshness(headers: headers, receivedAt: receivedAt))
        return CacheEntry(key: key, data: object.body, metadata: metadata)
    }
}
