// Built with the `DiskCache` trait (on by default): GRDB and SQLite.
#if DiskCache

    import Foundation
    import GRDB
    import Logging

    /// Original image bytes on disk, with what HTTP said about their freshness.
    ///
    /// An SQLite index (WAL, so readers never wait on the writer) holds one row per entry: key, size,
    /// checksum, created and last-access times, content type, validators and freshness. Payloads live
    /// in sharded files named at random; each is written to a temporary file, synced and renamed before
    /// its row commits, and every read checks size and checksum, so a crash (kill -9 mid-write) leaves
    /// either the old entry, the new one or none, never a torn payload. Two processes may share a
    /// directory: SQLite serialises their writes and file names never collide.
    ///
    /// Writes are queued and made in batches on a background queue; a queued entry is already served
    /// by ``entry(for:)``. Past the size limit the least recently used entries are evicted down to 80%
    /// of it; entries older than the maximum age are dropped. Access times are recorded to the minute.
    public final class DiskCache: Sendable {
        /// Where and how much a disk cache keeps.
        public struct Configuration: Sendable {
            /// The cache's directory, made if missing.
            public var directory: URL
            /// Payload bytes kept at most. Default 512 MB.
            public var sizeLimit: Int
            /// Entries created longer ago than this are dropped. Default 30 days.
            public var maxAge: Duration
            /// Whether each payload is synced to storage before its row commits (survives power loss,
            /// not only a crash). Default true.
            public var syncsWrites: Bool
            /// Payload bytes queued for the writer at most. A store past it is not made (and any
            /// older queued bytes for its key are dropped with it), so a disk slower than the traffic
            /// costs cache entries, not memory. Default 64 MB.
            public var maxPendingBytes: Int

            /// Makes a configuration; the directory defaults to ``defaultDirectory``.
            public init(
                directory: URL = DiskCache.defaultDirectory, sizeLimit: Int = 512 << 20, maxAge: Duration = .seconds(30 * 24 * 3600), syncsWrites: Bool = true,
                maxPendingBytes: Int = 64 << 20
            ) {
                self.directory = directory
                self.sizeLimit = sizeLimit
                self.maxAge = maxAge
                self.syncsWrites = syncsWrites
                self.maxPendingBytes = maxPendingBytes
            }
        }

        /// A change not yet in the index; readers see it at once.
        enum Change: Sendable {
            case write(Data, CacheMetadata)
            case refresh(CacheMetadata)
            case remove

            /// The payload bytes the change holds until it is written.
            var payloadBytes: Int {
                if case .write(let data, _) = self { data.count } else { 0 }
            }
        }

        struct State {
            var sequence: UInt64 = 0
            var pending: [String: (change: Change, sequence: UInt64)] = [:]
            /// The payload bytes in ``pending``.
            var pendingBytes = 0
            var touches: [String: Double] = [:]
            /// Placeholders to record, written after the batch that may create their rows.
            var placeholders: [String: Data] = [:]
            var isWriting = false
            var hasWarnedOfWriteFailure = false
            /// Rows recently read, so a repeated read skips the index. A remembered row is only a
            /// hint: payload file names are never reused, so once its entry is replaced or removed
            /// (here or by another process) its file is gone and the read falls back to the index.
            /// CacheMetadata another process refreshed is not seen until then: at worst this process
            /// revalidates an entry once more itself.
            var rows: [String: DiskIndex.Row] = [:]

            mutating func remember(_ row: DiskIndex.Row) {
                if rows.count >= DiskCache.rememberedRows, rows[row.key] == nil { rows.remove(at: rows.startIndex) }
                rows[row.key] = row
            }
        }

        /// Rows kept in ``State/rows`` at most (about 200 bytes each).
        static let rememberedRows = 16_384

        /// The cache's settings.
        public let configuration: Configuration
        let index: DiskIndex
        let readers: IndexReaders
        let files: PayloadFiles
        let state = Locked(State())
        let writer = DispatchQueue(label: "imago.disk-cache.writer", qos: .utility)
        let now: @Sendable () -> Date
        let logger: Logger

        /// `$XDG_CACHE_HOME/imago`, else `~/.cache/imago`.
        public static var defaultDirectory: URL {
            if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
                return URL(fileURLWithPath: xdg).appendingPathComponent("imago")
            }
            return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/imago")
        }

        /// Opens (or makes) the cache in `configuration.directory`. Trimming, expiry and the sweep of
        /// files and rows a crash left behind start in the background. `now` is the clock for
        /// freshness, access times and expiry.
        public init(
            configuration: Configuration = Configuration(), logger: Logger = Logger(label: "imago.disk-cache"), now: @escaping @Sendable () -> Date = { Date() }
        ) throws {
            self.configuration = configuration
            self.logger = logger
            self.now = now
            try FileManager.default.createDirectory(at: configuration.directory, withIntermediateDirectories: true)
            self.files = try PayloadFiles(directory: configuration.directory, syncs: configuration.syncsWrites)
            let indexPath = configuration.directory.appendingPathComponent("index.sqlite").path
            self.index = try DiskIndex(path: indexPath)
            self.readers = IndexReaders(path: indexPath)
            writer.setSpecific(key: Self.onWriter, value: true)
            writer.async { [self] in
                maintain()
                sweepOrphans(olderThan: .seconds(600))
            }
        }

        // MARK: - Reading

        /// How stale a recorded access time may be before a read records a new one.
        static let accessResolution: Double = 60

        /// The entry stored under `key`, or nil. A payload whose size or checksum does not match its
        /// row is dropped and reported as a miss.
        public func entry(for key: String) -> CacheEntry? {
            let (pending, remembered) = state.withLock { ($0.pending[key]?.change, $0.rows[key]) }
            var refreshed: CacheMetadata?
            switch pending {
            case .write(let data, let metadata): return CacheEntry(key: key, data: data, metadata: metadata)
            case .remove: return nil
            case .refresh(let metadata): refreshed = metadata
            case nil: break
            }
            var row = remembered
            var data = row.flatMap { files.read($0.file, size: $0.size, checksum: $0.checksum) }
            let fromIndex = data == nil
            if fromIndex {
                // Not remembered, or its file was replaced or removed (by this process or another).
                if remembered != nil { state.withLock { _ = $0.rows.removeValue(forKey: key) } }
                do {
                    row = try readers.row(for: key)
                } catch {
                    logger.warning("disk cache index read failed: \(error)")
                    return nil
                }
                guard let row else { return nil }
                data = files.read(row.file, size: row.size, checksum: row.checksum)
                guard data != nil else {
                    logger.warning("disk cache payload for \(key) is missing or corrupt; dropping it")
                    enqueue(.remove, for: key)
                    return nil
                }
            }
            guard var row, let data else { return nil }
            // Access times are recorded to the minute: LRU needs no finer order, and a hot entry read
            // thousands of times a second then costs no write at all.
            let time = now().timeIntervalSince1970
            let touched = time - row.accessed >= Self.accessResolution
            if touched { row.accessed = time }
            if fromIndex || touched {
                let shouldFlush = state.withLock { state -> Bool in
                    state.remember(row)
                    guard touched else { return false }
                    state.touches[key] = time
                    return state.touches.count >= 512 && !state.isWriting
                }
                if shouldFlush { writer.async { [self] in flushTouches() } }
            }
            return CacheEntry(key: key, data: data, metadata: refreshed ?? row.metadata)
        }

        /// The number of entries in the index.
        public var count: Int {
            (try? index.count()) ?? 0
        }

        /// What the cache holds in memory now: the rows it remembers to skip the index on a repeated
        /// read (at most 16,384, about 200 bytes each) and the payload bytes queued for the writer (at
        /// most ``Configuration-swift.struct/maxPendingBytes``).
        public var inMemory: (rows: Int, pendingBytes: Int) {
            state.withLock { ($0.rows.count, $0.pendingBytes) }
        }

        /// The payload bytes the index accounts for.
        public var totalSize: Int {
            (try? index.totalSize()) ?? 0
        }

        // MARK: - Writing

        /// Stores `data` under `key`, replacing what was there. Returns at once; the entry is served
        /// from memory until it is on disk.
        public func store(_ data: Data, for key: String, metadata: CacheMetadata) {
            enqueue(.write(data, metadata), for: key)
        }

        /// Replaces the metadata of `key` (after a revalidation), keeping its bytes.
        public func refresh(_ metadata: CacheMetadata, for key: String) {
            enqueue(.refresh(metadata), for: key)
        }

        /// Removes the entry under `key`.
        public func remove(_ key: String) {
            state.withLock { _ = $0.placeholders.removeValue(forKey: key) }
            enqueue(.remove, for: key)
        }

        /// The most placeholder bytes read back: a ThumbHash takes at most 25 plus its AC terms.
        static let maxPlaceholderSize = 64

        /// The placeholder recorded beside `key`'s entry, from the index alone (its payload is not
        /// read); nil when none, when the entry is being replaced or removed, or when the stored value
        /// is larger than a placeholder can be.
        public func placeholder(for key: String) -> Data? {
            let (waiting, change) = state.withLock { ($0.placeholders[key], $0.pending[key]?.change) }
            if let waiting { return waiting }
            switch change {
            case .write, .remove: return nil
            case .refresh, nil: break
            }
            do {
                return try index.placeholder(for: key, limit: Self.maxPlaceholderSize)
            } catch {
                logger.warning("disk cache index read failed: \(error)")
                return nil
            }
        }

        /// Records `placeholder` beside the entry under `key`; nothing when there is none by the time
        /// it is written. New bytes stored under the key drop it.
        public func storePlaceholder(_ placeholder: Data, for key: String) {
            guard placeholder.count <= Self.maxPlaceholderSize else { return }
            let schedule = state.withLock { state -> Bool in
                state.placeholders[key] = placeholder
                defer { state.isWriting = true }
                return !state.isWriting
            }
            if schedule { writer.async { [self] in drain() } }
        }

        /// Removes every entry.
        public func removeAll() {
            writer.sync {
                state.withLock {
                    $0.pending = [:]
                    $0.pendingBytes = 0
                    $0.touches = [:]
                    $0.placeholders = [:]
                    $0.rows = [:]
                }
                do {
                    try index.removeAll()
                    files.removeAllPayloads()
                } catch {
                    logger.warning("disk cache removeAll failed: \(error)")
                }
            }
        }

        /// Waits until every queued change, access time and trim is on disk.
        public func flush() {
            writer.sync {
                drain()
                flushTouches()
            }
        }

        /// Evicts least recently used entries down to 80% of the size limit when over it, and drops
        /// entries past the maximum age. Runs on its own after writes; this runs it now.
        public func trim() {
            writer.sync { maintain() }
        }

        private func enqueue(_ change: Change, for key: String) {
            let limit = configuration.maxPendingBytes
            let schedule = state.withLock { state -> Bool in
                var change = change
                let replaced = state.pending[key]?.change.payloadBytes ?? 0
                // Over the bound the new bytes are not kept, nor the older ones queued for the key:
                // its entry is removed instead, so no stale version is written after a newer one.
                if state.pendingBytes - replaced + change.payloadBytes > limit { change = .remove }
                state.pendingBytes += change.payloadBytes - replaced
                state.sequence += 1
                state.pending[key] = (change, state.sequence)
                defer { state.isWriting = true }
                return !state.isWriting
            }
            if schedule { writer.async { [self] in drain() } }
        }

        /// Writes queued changes in batches until none is left, then trims. Runs on `writer`.
        private func drain() {
            var wrote = false
            while true {
                let (batch, placeholders) = state.withLock { state -> ([(key: String, change: Change, sequence: UInt64)], [String: Data]) in
                    // Placeholders wait until no write is pending: the row they belong to may be in it.
                    let placeholders = state.pending.isEmpty ? state.placeholders : [:]
                    if state.pending.isEmpty {
                        state.placeholders = [:]
                        state.isWriting = false
                    }
                    return (state.pending.prefix(256).map { ($0.key, $0.value.change, $0.value.sequence) }, placeholders)
                }
                if !placeholders.isEmpty {
                    do { try index.setPlaceholders(placeholders) } catch { logger.warning("disk cache placeholder write failed: \(error)") }
                }
                guard !batch.isEmpty else { break }
                apply(batch)
                wrote = true
                state.withLock { state in
                    for item in batch {
                        state.rows[item.key] = nil
                        if state.pending[item.key]?.sequence == item.sequence {
                            state.pending[item.key] = nil
                            state.pendingBytes -= item.change.payloadBytes
                        }
                    }
                }
            }
            if wrote { maintain() }
        }

        /// Writes the payloads of a batch to their files, then commits all its rows in one transaction,
        /// then deletes the files the rows replaced.
        private func apply(_ batch: [(key: String, change: Change, sequence: UInt64)]) {
            let time = now().timeIntervalSince1970
            var changes: [DiskIndex.Change] = []
            var written: [String] = []
            for item in batch {
                switch item.change {
                case .write(let data, let metadata):
                    do {
                        let file = try files.write(data)
                        written.append(file)
                        changes.append(
                            .upsert(
                                DiskIndex.Row(
                                    key: item.key, file: file, size: data.count, checksum: Checksum.xxh3(data),
                                    created: time, metadata: metadata
                                )))
                    } catch {
                        // A full disk fails every write: warn once, then only at debug level. A
                        // failed write costs a later load its cache hit, never the load itself.
                        let first = state.withLock { state in
                            defer { state.hasWarnedOfWriteFailure = true }
                            return !state.hasWarnedOfWriteFailure
                        }
                        logger.log(level: first ? .warning : .debug, "disk cache write failed; entries are not being stored: \(error)")
                    }
                case .refresh(let metadata):
                    changes.append(.refresh(key: item.key, metadata: metadata))
                case .remove:
                    changes.append(.remove(key: item.key))
                }
            }
            do {
                let replaced = try index.apply(changes, accessed: time)
                files.remove(replaced)
            } catch {
                logger.warning("disk cache index write failed: \(error)")
                files.remove(written)
            }
        }

        /// Writes batched access times. Runs on `writer`.
        private func flushTouches() {
            let touches = state.withLock { state in
                defer { state.touches = [:] }
                return state.touches
            }
            guard !touches.isEmpty else { return }
            do {
                try index.touch(touches)
            } catch {
                logger.warning("disk cache access-time update failed: \(error)")
            }
        }

        /// Expiry, then LRU eviction down to 80% of the limit. Runs on `writer`.
        private func maintain() {
            flushTouches()
            do {
                let cutoff = now().timeIntervalSince1970 - Double(configuration.maxAge.components.seconds)
                let expired = try index.removeCreated(before: cutoff)
                files.remove(expired)
                let evicted = try index.evict(above: configuration.sizeLimit, downTo: configuration.sizeLimit / 10 * 8)
                files.remove(evicted)
            } catch {
                logger.warning("disk cache trim failed: \(error)")
            }
        }

        /// Deletes what a crash left behind: temporary files of processes that no longer run (or older
        /// than `grace`), payload files no row points to that are older than `grace` (younger ones may
        /// belong to another process about to commit), and rows whose file is gone. Runs on its own
        /// at open.
        public func sweepOrphans(olderThan grace: Duration) {
            let body = { [self] in
                do {
                    files.removeStaleTemporaries(olderThan: grace)
                    let known = try index.allFiles()
                    let onDisk = files.payloadFiles(olderThan: grace)
                    files.remove(onDisk.filter { !known.contains($0) })
                    let present = files.existing(known)
                    try index.removeRows(whereFileNotIn: present, among: known)
                } catch {
                    logger.warning("disk cache sweep failed: \(error)")
                }
            }
            if DispatchQueue.getSpecific(key: Self.onWriter) == true { body() } else { writer.sync { body() } }
        }

        private static let onWriter = DispatchSpecificKey<Bool>()
    }

    extension DiskCache: DiskCaching {}

#endif
