import Crypto
import Foundation
import Imago
import Logging

/// A store a fleet's nodes share: of made variants (`--result-storage`: after the node's memory
/// and disk and before any work, a variant another node, or this one before a restart, made is
/// read from it; a variant made here is written there after it has been answered), or of originals
/// (`--source-storage`, ``SourceStorage``). The store is a cache, never a dependency: a read that
/// fails, takes longer than its timeout or gives bytes that do not validate (``StoredObject``) is
/// a miss, and the node makes the variant (fetches the source), whose write replaces the bad
/// object. Objects are named by the SHA-256 of their key (a variant's: the plan and the server's
/// output identity, never a URL's signature, so keys can rotate).
final class SharedStorage: Sendable {
    /// What the store holds: each kind is counted and logged as its own.
    let kind: StoredObject.Kind
    let store: any SharedStore
    let settings: SharedStorageSettings
    let metrics: ServerMetrics
    let logger: Logger
    private let pending = Locked(Pending())
    /// Reads under way at once: ``SharedStorageSettings/concurrentReads`` of at most
    /// ``SharedStorageSettings/maxObjectBytes`` each.
    private let readSlots: ReadSlots
    /// This node's leases: keys it is making for the fleet.
    let heldLeases = Locked<Set<String>>([])
    /// Who this node is in a lease it takes.
    let holder = UUID().uuidString
    /// Requests waiting on another node's lease now, and who waits for their number.
    let leaseWaits = Locked(LeaseWaits())

    /// Writes not yet ended: their bytes, and who waits for none to be left.
    private struct Pending {
        var bytes = 0
        var count = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The storage `settings` name; an object store signs as the sources' (`s3`, `gcs`, `swift`)
    /// unless the settings name their own.
    init(
        _ kind: StoredObject.Kind, _ settings: SharedStorageSettings, s3: S3Configuration, gcs: GCSConfiguration, swift: SwiftConfiguration,
        network: NetworkEnvironment, metrics: ServerMetrics,
        logger: Logger
    ) throws(ServerError) {
        self.kind = kind
        self.settings = settings
        readSlots = ReadSlots(settings.concurrentReads)
        self.metrics = metrics
        self.logger = logger
        switch settings.location {
        case .folder(let root): store = FolderStore(root: root)
        case .s3, .gcs, .swift: store = try Self.objectStore(settings, s3: s3, gcs: gcs, swift: swift, network: network)
        }
    }

    /// The S3, GCS or Swift store `settings` name, signing as the sources do unless the settings name their own.
    private static func objectStore(
        _ settings: SharedStorageSettings, s3: S3Configuration, gcs: GCSConfiguration, swift: SwiftConfiguration, network: NetworkEnvironment
    ) throws(ServerError) -> any SharedStore {
        #if HTTPClientLoader
            let call = ObjectStoreCall(network: network, timeoutWithoutBytes: settings.readTimeout)
            switch settings.location {
            case .s3(let bucket): return S3Store(bucket: bucket, s3: S3DataLoader(settings.s3 ?? s3), call: call)
            case .gcs(let bucket): return GCSStore(bucket: bucket, gcs: GCSDataLoader(settings.gcs ?? gcs), call: call)
            case .swift(let container): return SwiftStore(container: container, swift: SwiftDataLoader(settings.swift ?? swift), call: call)
            case .folder(let root): return FolderStore(root: root)
            }
        #else
            throw ServerError(status: 500, "the store \(settings.description): this build has no HTTP client (HTTPClientLoader)")
        #endif
    }

    /// The object name and key digest of the object keyed `key`.
    func object(for key: String) -> (name: String, digest: String) {
        let digest = StoredObject.hex(SHA256.hash(data: Data(key.utf8)))
        let name = (settings.prefix.isEmpty ? "" : settings.prefix + "/") + digest.prefix(2) + "/" + digest
        return (name, digest)
    }

    /// What a read of the store found.
    enum Found {
        /// An object that validates and has not expired.
        case result(StoredObject)
        /// None, or one that does not validate or has expired: made (fetched) anew.
        case absent
        /// The store failed or did not answer in time: it is not asked again for this request.
        case failed
    }

    /// The stored object for `key` when the store has one that validates and has not expired
    /// (each outcome counted; a `quiet` read, which looks again for what a read just missed,
    /// counts only a hit or an error).
    func read(key: String, quiet: Bool = false) async -> Found {
        let (name, digest) = object(for: key)
        let (store, maxBytes) = (self.store, settings.maxObjectBytes)
        let data: Data?
        do {
            let slots = readSlots
            data = try await WorkDeadline.value(
                of: Task { try await slots.withSlot { try await store.read(name, maxBytes: maxBytes) } }, within: settings.readTimeout)
        } catch {
            count("error")
            let said = error as? ServerError == .workTimedOut ? "no answer within \(settings.readTimeout)" : "\(error)"
            logger.warning("\(kind.rawValue) storage read failed: made without it", metadata: ["store": "\(store.description)", "error": "\(said)"])
            return .failed
        }
        guard let data else {
            if !quiet { count("miss") }
            return .absent
        }
        guard let result = StoredObject(decoding: data, kind: kind, keyDigest: digest) else {
            if quiet { return .absent }
            count("invalid")
            logger.warning("\(kind.rawValue) storage object does not validate: made anew", metadata: ["store": "\(store.description)", "object": "\(name)"])
            return .absent
        }
        if let ttl = settings.timeToLive, Date().timeIntervalSince1970 - Double(result.storedAt) > ttl.inSeconds {
            if quiet { return .absent }
            count("expired")
            if case .folder = settings.location { try? await store.remove(name) }
            return .absent
        }
        count("hit")
        return .result(result)
    }

    /// Writes `object` for `key` on its own task (never on a request's time); an object larger
    /// than the largest object, or one that would take the bytes waiting past their bound, is not
    /// stored. The write ends this node's lease on `key`.
    func write(_ object: StoredObject, key: String) {
        let body = object.body
        guard body.count <= settings.maxObjectBytes - StoredObject.maxHeadBytes else {
            count("skipped")
            release(key: key)
            return
        }
        let admitted = pending.withLock { pending in
            guard pending.bytes + body.count <= settings.maxPendingBytes else { return false }
            pending.bytes += body.count
            pending.count += 1
            return true
        }
        guard admitted else {
            count("skipped")
            release(key: key)
            return
        }
        let (name, digest) = self.object(for: key)
        var named = object
        named.keyDigest = digest
        let result = named
        let store = self.store
        Task {
            do {
                // A store that takes bytes slower than this frees its memory anyway.
                try await WorkDeadline.value(of: Task { try await store.write(name, result.encoded()) }, within: .seconds(60))
                self.count("written")
            } catch {
                self.count("write_error")
                self.logger.warning("\(self.kind.rawValue) storage write failed", metadata: ["store": "\(store.description)", "error": "\(error)"])
            }
            // The object is there (or cannot be): nodes waiting on the lease read it or make it.
            await self.releaseNow(key: key)
            self.ended(bytes: body.count)
        }
    }

    /// Counts what the store did (`/metrics`, by kind).
    func count(_ outcome: String) { metrics.sharedStorage(kind, outcome) }

    private func ended(bytes: Int) {
        let waiters = pending.withLock { pending -> [CheckedContinuation<Void, Never>] in
            pending.bytes -= bytes
            pending.count -= 1
            guard pending.count == 0 else { return [] }
            defer { pending.waiters = [] }
            return pending.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no write is under way (at once when none is): a graceful stop, or a test,
    /// waits for the variants made to be stored.
    func untilWritten() async {
        await withCheckedContinuation { continuation in
            let now = pending.withLock { pending -> Bool in
                guard pending.count > 0 else { return true }
                pending.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Removes expired objects from a folder store (object stores expire by their lifecycle
    /// rules); returns how many.
    @discardableResult
    func removeExpired(now: Date = Date()) -> Int {
        guard let ttl = settings.timeToLive, let folder = store as? FolderStore else { return 0 }
        return folder.removeExpired(olderThan: now.addingTimeInterval(-ttl.inSeconds))
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
