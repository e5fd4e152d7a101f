// Built with the `DiskCache` trait (on by default).
#if DiskCache

    import Foundation
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The disk cache's payload files: `payloads/<2 hex>/<32 hex>`, written as `tmp/<pid>-<name>` and
    /// renamed into place. Names are random, so a payload file is never rewritten in place and two
    /// processes never collide; a name in the index is relative to `payloads/`.
    final class PayloadFiles: Sendable {
        private let payloads: String
        /// `payloads/` held open, so a read resolves two path components instead of the whole path.
        private let payloadsDescriptor: Int32
        private let temporaries: String
        private let syncs: Bool
        private let shards = Locked(Set<String>())

        init(directory: URL, syncs: Bool) throws {
            payloads = directory.appendingPathComponent("payloads").path
            temporaries = directory.appendingPathComponent("tmp").path
            self.syncs = syncs
            for path in [payloads, temporaries] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            payloadsDescriptor = open(payloads, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard payloadsDescriptor >= 0 else { throw POSIXError(errno, "open \(payloads)") }
        }

        deinit {
            close(payloadsDescriptor)
        }

        /// Writes `data` to a new file, synced when configured, and returns its name.
        func write(_ data: Data) throws -> String {
            let name = String(format: "%016llx%016llx", UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
            let shard = String(name.prefix(2))
            let temporary = "\(temporaries)/\(getpid())-\(name)"
            try writeNewFile(data, at: temporary, syncs: syncs)
            if !shards.withLock({ $0.contains(shard) }) {
                if mkdir("\(payloads)/\(shard)", 0o755) != 0 && errno != EEXIST {
                    unlink(temporary)
                    throw POSIXError(errno, "mkdir \(shard)")
                }
                shards.withLock { _ = $0.insert(shard) }
            }
            let file = "\(shard)/\(name)"
            guard rename(temporary, "\(payloads)/\(file)") == 0 else {
                let error = POSIXError(errno, "rename \(temporary)")
                unlink(temporary)
                throw error
            }
            return file
        }

        /// The payload of `file` when it has exactly `size` bytes with this checksum; nil otherwise
        /// (missing, truncated, grown or altered).
        func read(_ file: String, size: Int, checksum: UInt64) -> Data? {
            let descriptor = openat(payloadsDescriptor, file, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, Int(status.st_size) == size else { return nil }
            // Not zero-filled: every byte is read over before the buffer is used.
            guard let buffer = malloc(max(size, 1)) else { return nil }
            var offset = 0
            while offset < size {
                let count = systemRead(descriptor, buffer + offset, size - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    free(buffer)
                    return nil
                }
                offset += count
            }
            guard Checksum.xxh3(UnsafeRawBufferPointer(start: buffer, count: size)) == checksum else {
                free(buffer)
                return nil
            }
            return Data(bytesNoCopy: buffer, count: size, deallocator: .free)
        }

        func remove(_ files: some Sequence<String>) {
            for file in files { unlink("\(payloads)/\(file)") }
        }

        func removeAllPayloads() {
            let manager = FileManager.default
            for shard in (try? manager.contentsOfDirectory(atPath: payloads)) ?? [] {
                try? manager.removeItem(atPath: "\(payloads)/\(shard)")
            }
            shards.withLock { $0.removeAll() }
        }

        /// Deletes temporary files of processes that no longer run, and any older than `grace`.
        func removeStaleTemporaries(olderThan grace: Duration) {
            let cutoff = Date().addingTimeInterval(-grace.seconds)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: temporaries)) ?? [] {
                let path = "\(temporaries)/\(name)"
                let owner = name.split(separator: "-").first.flatMap { pid_t($0) }
                if owner == getpid() { continue }
                let ownerGone = owner.map { kill($0, 0) != 0 && errno == ESRCH } ?? true
                if ownerGone || modified(path).map({ $0 < cutoff }) ?? true { unlink(path) }
            }
        }

        /// Payload file names last modified before now − `grace`.
        func payloadFiles(olderThan grace: Duration) -> [String] {
            let cutoff = Date().addingTimeInterval(-grace.seconds)
            var result: [String] = []
            for shard in (try? FileManager.default.contentsOfDirectory(atPath: payloads)) ?? [] {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(payloads)/\(shard)")) ?? [] {
                    let file = "\(shard)/\(name)"
                    if modified("\(payloads)/\(file)").map({ $0 < cutoff }) ?? false { result.append(file) }
                }
            }
            return result
        }

        /// The files among `files` that exist.
        func existing(_ files: Set<String>) -> Set<String> {
            files.filter { access("\(payloads)/\($0)", F_OK) == 0 }
        }

        private func modified(_ path: String) -> Date? {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            #if canImport(Darwin)
                return Date(timeIntervalSince1970: Double(status.st_mtimespec.tv_sec))
            #else
                return Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec))
            #endif
        }
    }

    /// `read(2)`, named apart from the method of the same name.
    private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        read(descriptor, buffer, count)
    }

#endif
