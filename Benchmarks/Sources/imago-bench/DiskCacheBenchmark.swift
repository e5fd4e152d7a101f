import Foundation
import Imago
#if canImport(Glibc)
    import Glibc
#endif

/// The disk cache against the file system doing the same work directly: 10,000 entries of 50 KB
/// written then read back (random order, warm page cache), and opening a cache of 100,000 entries
/// against the sqlite3 shell opening the same index and finding one row.
enum DiskCacheBenchmark {
    static let entries = 10_000
    static let size = 50_000
    static let rounds = 5

    static func run() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-disk-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let payloads = (0..<entries).map { _ in Measure.payload(size) }
        let keys = (0..<entries).map { "https://images.example.com/photos/\($0).jpg" }
        let metadata = CacheMetadata(
            contentType: "image/jpeg", receivedAt: Date(),
            freshness: HTTPFreshness(headers: ["Cache-Control": "max-age=3600", "ETag": "\"x\""], receivedAt: Date())
        )
        var generator = SystemRandomNumberGenerator()
        let order = (0..<entries).shuffled(using: &generator)

        for syncs in [true, false] {
            var cacheTimes: [Double] = [], rawTimes: [Double] = []
            for round in 0..<rounds {
                let directory = root.appendingPathComponent("write-\(syncs)-\(round)")
                let raw = directory.appendingPathComponent("raw").path
                try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
                rawTimes.append(
                    try timed {
                        for index in 0..<entries { try writeFile("\(raw)/\(index)", payloads[index], syncs: syncs) }
                    })
                let cache = try DiskCache(configuration: .init(directory: directory.appendingPathComponent("cache"), sizeLimit: 1 << 40, syncsWrites: syncs))
                cache.flush()
                cacheTimes.append(
                    try timed {
                        for index in 0..<entries { cache.store(payloads[index], for: keys[index], metadata: metadata) }
                        cache.flush()
                    })
                try FileManager.default.removeItem(at: directory)
            }
            let imago = Double(entries) / Measure.median(cacheTimes), peer = Double(entries) / Measure.median(rawTimes)
            let how = syncs ? "each file synced (fdatasync) before it counts" : "no sync"
            report(
                "Disk cache write, \(entries) × 50 KB, \(how)",
                imago: String(format: "DiskCache.store + flush (temp file, rename, SQLite row): %.0f entries/s", imago),
                peer: String(format: "open/write/close of each file%@: %.0f files/s", syncs ? " + fdatasync" : "", peer),
                ratio: imago / peer, target: "≥ 0.5× direct writes", met: imago / peer >= 0.5)
        }

        // Reads: both sets written once, then read back in the same random order, alternating, by
        // a cache opened afresh on the directory (as another process would). Its first round
        // looks every row up in SQLite; later rounds find the rows it remembers.
        let directory = root.appendingPathComponent("read")
        let raw = directory.appendingPathComponent("raw").path
        try FileManager.default.createDirectory(atPath: raw, withIntermediateDirectories: true)
        for index in 0..<entries { try writeFile("\(raw)/\(index)", payloads[index], syncs: false) }
        let cacheDirectory = directory.appendingPathComponent("cache")
        let writer = try DiskCache(configuration: .init(directory: cacheDirectory, sizeLimit: 1 << 40, syncsWrites: false))
        for index in 0..<entries { writer.store(payloads[index], for: keys[index], metadata: metadata) }
        writer.flush()
        let cache = try DiskCache(configuration: .init(directory: cacheDirectory, sizeLimit: 1 << 40, syncsWrites: false))
        var cacheTimes: [Double] = [], rawTimes: [Double] = []
        for _ in 0..<rounds {
            rawTimes.append(
                try timed {
                    for index in order where readFile("\(raw)/\(index)")?.count != size { throw BenchmarkError("raw read of \(index) failed") }
                })
            cacheTimes.append(
                try timed {
                    for index in order where cache.entry(for: keys[index])?.data.count != size { throw BenchmarkError("cache read of \(index) failed") }
                })
        }
        let imago = Double(entries) / Measure.median(cacheTimes), peer = Double(entries) / Measure.median(rawTimes)
        let firstRound = Double(entries) / cacheTimes[0]
        report(
            "Disk cache read, \(entries) × 50 KB, random order, warm page cache",
            imago: String(
                format: "DiskCache.entry (row lookup, read, XXH3 check): %.0f entries/s (first round, every row from SQLite: %.0f, %.2f×)", imago, firstRound,
                firstRound / peer),
            peer: String(format: "open/fstat/read/close of each file: %.0f files/s", peer),
            ratio: imago / peer, target: "≥ 0.7× direct reads", met: imago / peer >= 0.7)
        cache.flush()

        try openLargeCache(root.appendingPathComponent("open"))
    }

    /// Opening a cache of 100,000 entries and finding one, against the sqlite3 shell doing the
    /// same on the same index (its process start included, which is most of its time).
    static func openLargeCache(_ directory: URL) throws {
        let count = 100_000
        let metadata = CacheMetadata(contentType: "image/webp", receivedAt: Date(), freshness: HTTPFreshness(headers: [:], receivedAt: Date()))
        let filled = try DiskCache(configuration: .init(directory: directory, sizeLimit: 1 << 40, syncsWrites: false))
        let small = Data(repeating: 7, count: 64)
        for index in 0..<count { filled.store(small, for: "https://cdn.example.com/\(index).webp", metadata: metadata) }
        filled.flush()
        var openTimes: [Double] = [], shellTimes: [Double] = []
        let index = directory.appendingPathComponent("index.sqlite").path
        for _ in 0..<rounds {
            var opened: DiskCache?
            openTimes.append(
                try timed {
                    let cache = try DiskCache(configuration: .init(directory: directory, sizeLimit: 1 << 40))
                    guard cache.entry(for: "https://cdn.example.com/\(count / 2).webp") != nil else { throw BenchmarkError("entry missing after open") }
                    opened = cache
                })
            // Let its background sweep of 100,000 files finish before the next round.
            opened?.flush()
            shellTimes.append(
                try timed {
                    let found = try Measure.run("/usr/bin/sqlite3", [index, "SELECT size FROM entry WHERE key = 'https://cdn.example.com/\(count / 2).webp'"])
                    guard found.trimmingCharacters(in: .whitespacesAndNewlines) == "64" else { throw BenchmarkError("sqlite3 found \(found)") }
                })
        }
        let imago = Measure.median(openTimes) * 1000, peer = Measure.median(shellTimes) * 1000
        report(
            "Opening a disk cache of \(count) entries and reading one",
            imago: String(format: "DiskCache(configuration:) + entry(for:): %.1f ms", imago),
            peer: String(format: "sqlite3 shell, same index, same lookup: %.1f ms", peer),
            ratio: peer / imago, target: "< 200 ms", met: imago < 200)
    }

    static func timed(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    static func writeFile(_ path: String, _ data: Data, syncs: Bool) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchmarkError("open \(path): \(errno)") }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        guard written == data.count else { throw BenchmarkError("write \(path)") }
        if syncs { fdatasync(descriptor) }
    }

    static func readFile(_ path: String) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        let size = Int(status.st_size)
        guard let buffer = malloc(max(size, 1)) else { return nil }
        var offset = 0
        while offset < size {
            let count = read(descriptor, buffer + offset, size - offset)
            guard count > 0 else {
                free(buffer)
                return nil
            }
            offset += count
        }
        return Data(bytesNoCopy: buffer, count: size, deallocator: .free)
    }
}
