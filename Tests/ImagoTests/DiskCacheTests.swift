import Dispatch
import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

@testable import Imago

@Suite struct DiskCacheTests {
    static let metadata = CacheMetadata(
        contentType: "image/jpeg", receivedAt: Date(timeIntervalSince1970: 1_800_000_000),
        freshness: HTTPFreshness(headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""], receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
    )

    /// Payload files under the cache directory (every shard).
    static func payloadFiles(_ directory: URL) -> [URL] {
        let payloads = directory.appendingPathComponent("payloads")
        let shards = (try? FileManager.default.contentsOfDirectory(at: payloads, includingPropertiesForKeys: nil)) ?? []
        return shards.flatMap { (try? FileManager.default.contentsOfDirectory(at: $0, includingPropertiesForKeys: nil)) ?? [] }
    }

    @Test func checksumIsXXH3() {
        // Reference values from the xxHash library itself (XXH3_64bits of libxxhash.so).
        #expect(Checksum.xxh3(Data()) == 0x2D06_8005_38D3_94C2)
        #expect(Checksum.xxh3(Data("a".utf8)) == 0xE6C6_32B6_1E96_4E1F)
        #expect(Checksum.xxh3(Data("abc".utf8)) == 0x78AF_5F94_892F_3950)
        #expect(Checksum.xxh3(Data("0123456789abcdef0123456789abcdef0123456789!".utf8)) == 0x17A3_0F47_8EFF_4AA9)
        #expect(Checksum.xxh3(Data((0..<768).map { UInt8($0 % 256) })) == 0x4066_A57F_4496_584A)
        #expect(Checksum.xxh3(Data((0..<50_000).map { UInt8($0 * 7 % 256) })) == 0xF54C_9C09_A5AE_FFFA)
    }

    @Test func storedEntryIsServedBeforeAndAfterItReachesDisk() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory))
        let data = payload(50_000)
        cache.store(data, for: "https://example.com/a.jpg", metadata: Self.metadata)
        #expect(cache.entry(for: "https://example.com/a.jpg")?.data == data)
        cache.flush()

        let reopened = try DiskCache(configuration: .init(directory: directory))
        let entry = try #require(reopened.entry(for: "https://example.com/a.jpg"))
        #expect(entry.data == data)
        #expect(entry.metadata == Self.metadata)
        #expect(reopened.entry(for: "https://example.com/other.jpg") == nil)
        #expect(reopened.count == 1)
        #expect(reopened.totalSize == 50_000)
    }

    @Test(
        "a placeholder is kept beside an entry, read without its payload, survives a reopen and a refresh, and is dropped by new bytes; one too large is refused"
    )
    func placeholders() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory))
        let key = "https://example.com/a.jpg"
        cache.storePlaceholder(Data([1, 2, 3]), for: key)
        cache.flush()
        #expect(cache.placeholder(for: key) == nil)  // no entry to keep it beside
        cache.store(payload(1000), for: key, metadata: Self.metadata)
        cache.storePlaceholder(Data([4, 5, 6]), for: key)
        #expect(cache.placeholder(for: key) == Data([4, 5, 6]))
        cache.flush()
        // Its payload damaged, the index still answers: the payload is not read.
        for file in Self.payloadFiles(directory) { try Data(repeating: 0, count: 1000).write(to: file) }
        let reopened = try DiskCache(configuration: .init(directory: directory))
        #expect(reopened.placeholder(for: key) == Data([4, 5, 6]))
        reopened.refresh(Self.metadata, for: key)
        reopened.flush()
        #expect(reopened.placeholder(for: key) == Data([4, 5, 6]))
        reopened.storePlaceholder(Data(repeating: 9, count: DiskCache.maxPlaceholderSize + 1), for: key)
        reopened.flush()
        #expect(reopened.placeholder(for: key) == Data([4, 5, 6]))
        reopened.store(payload(1000), for: key, metadata: Self.metadata)
        #expect(reopened.placeholder(for: key) == nil)
        reopened.flush()
        #expect(reopened.placeholder(for: key) == nil)
    }

    @Test(
        "queued writes are bounded: past maxPendingBytes a store is not made and its key's older queued bytes go with it; the queue's bytes are reported and empty once written"
    )
    func pendingWritesAreBounded() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory, maxPendingBytes: 100_000))
        // The writer is held busy, as a slow disk would hold it, until the stores are queued.
        let hold = DispatchSemaphore(value: 0)
        cache.writer.async { hold.wait() }
        let first = payload(60_000)
        cache.store(first, for: "a", metadata: Self.metadata)
        cache.store(payload(30_000), for: "b", metadata: Self.metadata)
        #expect(cache.inMemory.pendingBytes == 90_000)
        cache.store(payload(20_000), for: "c", metadata: Self.metadata)  // 110,000: refused
        cache.store(payload(50_000), for: "b", metadata: Self.metadata)  // replaces 30,000: 110,000, refused, and b's queued bytes go
        #expect(cache.inMemory.pendingBytes == 60_000)
        #expect(cache.entry(for: "a")?.data == first)
        #expect(cache.entry(for: "b") == nil && cache.entry(for: "c") == nil)
        let second = payload(40_000)
        cache.store(second, for: "d", metadata: Self.metadata)  // 100,000: at the bound, kept
        #expect(cache.inMemory.pendingBytes == 100_000)
        hold.signal()
        cache.flush()
        #expect(cache.inMemory.pendingBytes == 0)
        let reopened = try DiskCache(configuration: .init(directory: directory))
        #expect(reopened.entry(for: "a")?.data == first && reopened.entry(for: "d")?.data == second)
        #expect(reopened.entry(for: "b") == nil && reopened.entry(for: "c") == nil && reopened.count == 2)
    }

    @Test func replacingAndRemovingDeleteTheOldPayloadFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory))
        cache.store(payload(1000, seed: 1), for: "k", metadata: Self.metadata)
        cache.flush()
        cache.store(payload(2000, seed: 2), for: "k", metadata: Self.metadata)
        cache.flush()
        #expect(Self.payloadFiles(directory).count == 1)
        #expect(cache.entry(for: "k")?.data == payload(2000, seed: 2))

        cache.remove("k")
        #expect(cache.entry(for: "k") == nil)
        cache.flush()
        #expect(Self.payloadFiles(directory).isEmpty)
        #expect(cache.count == 0)
    }

    @Test func refreshReplacesMetadataAndKeepsTheBytes() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory))
        cache.store(payload(3000), for: "k", metadata: Self.metadata)
        cache.flush()
        var refreshed = Self.metadata
        refreshed.receivedAt = Date(timeIntervalSince1970: 1_900_000_000)
        refreshed.freshness.etag = "\"v2\""
        cache.refresh(refreshed, for: "k")
        #expect(cache.entry(for: "k")?.metadata == refreshed)
        cache.flush()
        let entry = try #require(try DiskCache(configuration: .init(directory: directory)).entry(for: "k"))
        #expect(entry.metadata == refreshed)
        #expect(entry.data == payload(3000))
    }

    @Test func overTheLimitEvictsLeastRecentlyUsedDownTo80Percent() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = Locked(1_800_000_000.0)
        let cache = try DiskCache(configuration: .init(directory: directory, sizeLimit: 100_000)) {
            clock.withLock { Date(timeIntervalSince1970: $0) }
        }
        for index in 0..<10 {
            clock.withLock { $0 += 1 }
            cache.store(payload(10_000, seed: UInt8(index)), for: "k\(index)", metadata: Self.metadata)
            cache.flush()
        }
        #expect(cache.totalSize == 100_000)
        // k0 and k1 used most recently (access times are kept to the minute, hence the step):
        // the next write pushes the cache over its limit.
        clock.withLock { $0 += 100 }
        _ = cache.entry(for: "k0")
        _ = cache.entry(for: "k1")
        clock.withLock { $0 += 1 }
        cache.store(payload(10_000, seed: 10), for: "k10", metadata: Self.metadata)
        cache.flush()

        #expect(cache.totalSize == 80_000)
        let kept = (0...10).filter { cache.entry(for: "k\($0)") != nil }
        #expect(kept == [0, 1, 5, 6, 7, 8, 9, 10])
        #expect(Self.payloadFiles(directory).count == 8)
    }

    @Test func entriesPastTheMaximumAgeAreDropped() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = Locked(1_800_000_000.0)
        let now: @Sendable () -> Date = { clock.withLock { Date(timeIntervalSince1970: $0) } }
        let cache = try DiskCache(configuration: .init(directory: directory, maxAge: .seconds(3600)), now: now)
        cache.store(payload(100, seed: 1), for: "old", metadata: Self.metadata)
        cache.flush()
        clock.withLock { $0 += 3000 }
        cache.store(payload(100, seed: 2), for: "young", metadata: Self.metadata)
        cache.flush()
        clock.withLock { $0 += 1000 }
        cache.trim()
        #expect(cache.entry(for: "old") == nil)
        #expect(cache.entry(for: "young") != nil)
        #expect(Self.payloadFiles(directory).count == 1)
    }

    @Test(arguments: ["altered", "truncated", "missing"])
    func aDamagedPayloadIsAMissAndIsDropped(damage: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory))
        cache.store(payload(20_000), for: "k", metadata: Self.metadata)
        cache.flush()
        let file = try #require(Self.payloadFiles(directory).first)
        switch damage {
        case "altered":
            var bytes = try Data(contentsOf: file)
            bytes[10_000] ^= 0x01
            try bytes.write(to: file)
        case "truncated":
            try Data(contentsOf: file).prefix(15_000).write(to: file)
        default:
            try FileManager.default.removeItem(at: file)
        }
        #expect(cache.entry(for: "k") == nil)
        cache.flush()
        #expect(cache.count == 0)
        #expect(Self.payloadFiles(directory).isEmpty)
    }

    @Test func sweepRemovesWhatACrashLeftBehind() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(configuration: .init(directory: directory))
        cache.store(payload(500, seed: 1), for: "kept", metadata: Self.metadata)
        cache.store(payload(500, seed: 2), for: "lost", metadata: Self.metadata)
        cache.flush()
        // A temporary file of a process that has exited, a payload no row names, a row whose file is gone.
        let exited = try await runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo $$"])
        let deadPID = String(decoding: exited.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let temporary = directory.appendingPathComponent("tmp/\(deadPID)-0123")
        try Data("partial".utf8).write(to: temporary)
        let orphan = directory.appendingPathComponent("payloads/ff/ffffffffffffffffffffffffffffffff")
        try FileManager.default.createDirectory(at: orphan.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("orphan".utf8).write(to: orphan)
        let lostFile = try #require(Self.payloadFiles(directory).first { (try? Data(contentsOf: $0)) == payload(500, seed: 2) })
        try FileManager.default.removeItem(at: lostFile)

        cache.sweepOrphans(olderThan: .zero)
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        #expect(cache.count == 1)
        #expect(cache.entry(for: "kept")?.data == payload(500, seed: 1))
    }

    @Test func twoCachesShareOneDirectory() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try DiskCache(configuration: .init(directory: directory))
        let second = try DiskCache(configuration: .init(directory: directory))
        await withTaskGroup(of: Void.self) { group in
            for (index, cache) in [first, second].enumerated() {
                group.addTask {
                    for item in 0..<50 {
                        cache.store(payload(1000 + item, seed: UInt8(index)), for: "c\(index)-\(item)", metadata: Self.metadata)
                        if item % 10 == 0 { cache.flush() }
                    }
                    cache.flush()
                }
            }
        }
        #expect(first.count == 100)
        #expect(first.entry(for: "c1-49")?.data == payload(1049, seed: 1))
        #expect(second.entry(for: "c0-49")?.data == payload(1049, seed: 0))
        #expect(Self.payloadFiles(directory).count == 100)
    }

    /// A row remembered from an earlier read is only a hint: once another cache on the directory
    /// replaces or removes the entry, the next read sees what that cache wrote.
    @Test func rememberedRowsFollowChangesMadeByAnotherCache() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = try DiskCache(configuration: .init(directory: directory))
        let writer = try DiskCache(configuration: .init(directory: directory))
        writer.store(payload(2000, seed: 1), for: "shared", metadata: Self.metadata)
        writer.flush()
        #expect(reader.entry(for: "shared")?.data == payload(2000, seed: 1))
        #expect(reader.entry(for: "shared")?.data == payload(2000, seed: 1))

        writer.store(payload(3000, seed: 2), for: "shared", metadata: Self.metadata)
        writer.flush()
        #expect(reader.entry(for: "shared")?.data == payload(3000, seed: 2))

        writer.remove("shared")
        writer.flush()
        #expect(reader.entry(for: "shared") == nil)
        #expect(Self.payloadFiles(directory).isEmpty)
    }

    /// A writer process killed with SIGKILL at arbitrary moments, eight times over the same
    /// directory: every entry read afterwards is exactly a payload that was written, or absent.
    @Test func aWriterKilledMidWriteLeavesNoTornPayload() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago-cache-writer")
        // The writes and kills block, so they run off the cooperative pool.
        let reasons = try await offThePool {
            var generator = SystemRandomNumberGenerator()
            var reasons: [Process.TerminationReason] = []
            for _ in 0..<8 {
                let process = Process()
                process.executableURL = writer
                process.arguments = [directory.path, "64"]
                let pipe = Pipe()
                process.standardOutput = pipe
                try process.run()
                // Let it write a random number of batches, then kill it wherever it is.
                let batches = Int.random(in: 1...12, using: &generator)
                var lines = 0
                while lines < batches {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    lines += chunk.filter { $0 == UInt8(ascii: "\n") }.count
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                reasons.append(process.terminationReason)
            }
            return reasons
        }
        #expect(reasons == Array(repeating: .uncaughtSignal, count: 8))
        let cache = try DiskCache(configuration: .init(directory: directory, sizeLimit: 8 << 20))
        cache.sweepOrphans(olderThan: .zero)
        var found = 0
        for index in 0..<64 {
            guard let entry = cache.entry(for: "k\(index)") else { continue }
            found += 1
            #expect(StressPayload.isIntact(entry.data, key: "k\(index)"), "k\(index) is torn or mixed")
        }
        #expect(found > 0)
        #expect(found == cache.count)
        #expect(Self.payloadFiles(directory).count == cache.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path).isEmpty)
    }
}
