import Foundation

/// The kept bytes of transfers that broke off (``ResumableData``), by disk-cache key, until the
/// next transfer of the same image takes them: in memory up to a byte limit (the oldest dropped
/// first), and beside the entries of a disk cache when there is one, so that another process (a
/// second `imago fetch`) resumes too.
///
/// A kept prefix is never served as an image: it only starts a body whose whole bytes are then
/// validated as any other before the disk cache stores them.
final class ResumableDataStore: Sendable {
    private struct State {
        var entries: [String: (kept: ResumableData, sequence: UInt64)] = [:]
        var bytes = 0
        var sequence: UInt64 = 0
    }

    /// Bytes kept in memory at most; 0 keeps none.
    let limit: Int
    private let state = Locked(State())

    /// Entries kept in memory at most, whatever their size: each costs a key besides its bytes.
    static let maxEntries = 256

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Keeps `kept` for `key`, replacing what was kept for it; too large for the limit, it is not.
    func keep(_ kept: ResumableData, for key: String) {
        guard kept.data.count <= limit else { return }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.kept.data.count }
            while state.bytes + kept.data.count > limit || state.entries.count >= Self.maxEntries,
                let oldest = state.entries.min(by: { $0.value.sequence < $1.value.sequence })
            {
                state.entries.removeValue(forKey: oldest.key)
                state.bytes -= oldest.value.kept.data.count
            }
            state.sequence += 1
            state.entries[key] = (kept, state.sequence)
            state.bytes += kept.data.count
        }
    }

    /// Takes what is kept for `key` out of memory: the transfer that takes it owns it.
    func take(_ key: String) -> ResumableData? {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: key) else { return nil }
            state.bytes -= entry.kept.data.count
            return entry.kept
        }
    }

    /// Drops everything kept in memory (what is beside the disk cache stays).
    func removeAllFromMemory() {
        state.withLock { $0 = State() }
    }

    /// Bytes kept in memory now.
    var bytes: Int {
        state.withLock { $0.bytes }
    }

    // MARK: - On disk

    /// The disk-cache key of `key`'s kept bytes: no request's key ends so (a header line has a
    /// colon, and parentheses are not allowed in a header name).
    static func diskKey(for key: String) -> String {
        key + "\n(partial)"
    }

    /// The kept bytes for `key` in `disk`, if any that may be resumed.
    static func read(_ key: String, from disk: any DiskCaching) -> ResumableData? {
        guard let entry = disk.entry(for: diskKey(for: key)) else { return nil }
        let freshness = entry.metadata.freshness
        guard let validator = freshness.etag ?? freshness.lastModified else { return nil }
        return ResumableData(data: entry.data, validator: validator)
    }

    /// Writes `kept` for `key` into `disk`, its validator where an entry's validators go.
    static func write(_ kept: ResumableData, for key: String, to disk: any DiskCaching, at now: Date) {
        let freshness = HTTPFreshness(
            isStorable: true, lifetime: .zero, initialAge: .zero, isImmutable: false, requiresRevalidation: true,
            etag: kept.isEntityTag ? kept.validator : nil, lastModified: kept.isEntityTag ? nil : kept.validator)
        disk.store(kept.data, for: diskKey(for: key), metadata: CacheMetadata(contentType: nil, receivedAt: now, freshness: freshness))
    }

    /// Removes `key`'s kept bytes from `disk`.
    static func remove(_ key: String, from disk: any DiskCaching) {
        disk.remove(diskKey(for: key))
    }
}
