import Foundation
import Imago

/// One make per variant across the fleet: a node that misses a variant takes a lease in the store
/// (an object created only if absent: S3's conditional `PUT`, `O_EXCL` in a folder) before it
/// makes it; a node that finds the lease taken waits for the variant to appear, holding no worker,
/// until the lease expires (its holder died) or its own bound passes, and then makes it itself.
/// The holder removes the lease once the variant is written.
extension SharedStorage {
    /// What a node does about a variant the store does not have.
    enum Lookup {
        /// Another node made it while this one waited.
        case found(StoredObject)
        /// This node holds the lease: it makes the variant, and ``write(_:key:)`` ends the lease.
        case makeHoldingLease
        /// This node makes it without a lease (the store failed, or the wait passed its bound).
        case make
    }

    /// The lease's body: who holds it and when it ends (whole seconds since 1970).
    struct LeaseRecord: Equatable {
        var holder: String
        var expires: Int64

        var encoded: Data { Data("imago-lease 1\nholder \(holder)\nexpires \(expires)\n".utf8) }

        init(holder: String, expires: Int64) {
            (self.holder, self.expires) = (holder, expires)
        }

        /// The record in `data`; nil for anything else (a lease that cannot be read has no holder).
        init?(_ data: Data) {
            guard data.count <= 256 else { return nil }
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
            guard lines.count == 3, lines[0] == "imago-lease 1", lines[1].hasPrefix("holder "), lines[2].hasPrefix("expires "),
                let expires = Int64(lines[2].dropFirst("expires ".count))
            else { return nil }
            self.init(holder: String(lines[1].dropFirst("holder ".count)), expires: expires)
        }
    }

    /// Requests waiting on another node's lease, and who waits for their number (tests).
    struct LeaseWaits {
        var count = 0
        var waiters: [(id: UUID, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func satisfied() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { $0.count == count }.map(\.continuation)
            waiters.removeAll { $0.count == count }
            return ready
        }
    }

    /// The lease object's name for `key`.
    func leaseName(for key: String) -> String {
        let digest = object(for: key).digest
        return (settings.prefix.isEmpty ? "" : settings.prefix + "/") + "leases/" + digest
    }

    /// After a miss (``read(key:)`` found nothing usable): take the lease, or wait for the node
    /// that holds it. A variant this node makes already is joined by the service (`.make`); an
    /// original this node fetches or writes already is waited for like another node's.
    func lookUpAfterMiss(key: String) async -> Lookup {
        if kind == .result, heldLeases.withLock({ $0.contains(key) }) { return .make }
        switch await takeLease(key: key) {
        case .some(true): return await afterTaking(key: key)
        case .none: return .make
        case .some(false): break
        }
        count("lease_wait")
        changeWaits(by: 1)
        defer { changeWaits(by: -1) }
        let bound = ContinuousClock.now + min(settings.leaseDuration, settings.maxLeaseWait)
        var interval = Duration.milliseconds(50)
        while ContinuousClock.now < bound {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return .make
            }
            interval = min(interval * 2, .milliseconds(500))
            switch await read(key: key) {
            case .result(let result):
                count("lease_waited")
                return .found(result)
            case .failed:
                return .make
            case .absent:
                // The holder ended without a variant (it failed), or its lease expired: take it over.
                switch await takeLease(key: key) {
                case .some(true): return await afterTaking(key: key)
                case .none: return .make
                case .some(false): continue
                }
            }
        }
        count("lease_wait_ended")
        return .make
    }

    /// With the lease just taken: a holder that wrote the object after this node's read missed it,
    /// and then removed its lease, has left the object to read (a holder writes before it lets go),
    /// so it is read once more rather than made or fetched a second time.
    private func afterTaking(key: String) async -> Lookup {
        guard case .result(let found) = await read(key: key, quiet: true) else { return .makeHoldingLease }
        await releaseNow(key: key)
        return .found(found)
    }

    /// Creates the lease: true when this node now holds it, false when a live one is there, nil
    /// when the store cannot give one. An expired lease (its holder died) is removed and taken.
    private func takeLease(key: String) async -> Bool? {
        let name = leaseName(for: key)
        let record = LeaseRecord(holder: holder, expires: Int64(Date().timeIntervalSince1970 + settings.leaseDuration.inSeconds))
        do {
            if try await store.create(name, record.encoded) {
                guard try await holds(name) else { return false }
                heldLeases.withLock { _ = $0.insert(key) }
                count("lease_taken")
                return true
            }
            let current = try await store.read(name, maxBytes: 256).flatMap(LeaseRecord.init)
            // Gone since (its holder released it): the next read finds the variant or takes the lease.
            guard let current else { return false }
            guard current.expires < Int64(Date().timeIntervalSince1970) else { return false }
            count("lease_expired")
            try await store.remove(name)
            guard try await store.create(name, record.encoded), try await holds(name) else { return false }
            heldLeases.withLock { _ = $0.insert(key) }
            count("lease_taken")
            return true
        } catch {
            count("lease_error")
            logger.warning("\(kind.rawValue) storage lease failed: made without it", metadata: ["store": "\(store.description)", "error": "\(error)"])
            return nil
        }
    }

    /// Whether the lease `name` this node has just created is its own: at once where creates are
    /// exclusive; else (Swift) read back after the time a create that overlapped this one takes to
    /// land, the holder it names being the one that won. That narrows Swift's race to creates
    /// further apart than that, and cannot close it: there a lease is best effort.
    private func holds(_ name: String) async throws -> Bool {
        guard !store.createIsExclusive else { return true }
        try await Task.sleep(for: Self.overlappingCreateSettles)
        return try await store.read(name, maxBytes: 256).flatMap(LeaseRecord.init)?.holder == holder
    }

    /// How long a create that overlapped this one may take to land (Swift).
    static let overlappingCreateSettles = Duration.milliseconds(100)

    /// Ends this node's lease on `key` (the variant could not be made), on its own task.
    func release(key: String) {
        guard heldLeases.withLock({ $0.contains(key) }) else { return }
        Task { await releaseNow(key: key) }
    }

    /// Removes this node's lease on `key`, if it holds one and the lease is still its own.
    func releaseNow(key: String) async {
        guard heldLeases.withLock({ $0.remove(key) }) != nil else { return }
        let name = leaseName(for: key)
        if let current = try? await store.read(name, maxBytes: 256).flatMap(LeaseRecord.init), current.holder != holder { return }
        try? await store.remove(name)
    }

    private func changeWaits(by change: Int) {
        let ready = leaseWaits.withLock { waits in
            waits.count += change
            return waits.satisfied()
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once exactly `count` requests wait on other nodes' leases: how a test knows they
    /// wait, without polling.
    /// A cancelled caller returns at once.
    func untilWaitingOnLeases(_ count: Int) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = leaseWaits.withLock { waits -> Bool in
                    guard waits.count != count, !Task.isCancelled else { return true }
                    waits.waiters.append((id, count, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = leaseWaits.withLock { waits -> CheckedContinuation<Void, Never>? in
                guard let index = waits.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return waits.waiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }
}
