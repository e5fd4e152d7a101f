import Foundation
@testable import Imago
import Testing

/// The cgroup memory-pressure monitor over files written here in the layouts Linux uses.
@Suite("Memory pressure")
struct MemoryPressureTests {
    static func cache() -> MemoryCache<String, Int> {
        let cache = MemoryCache<String, Int>(limits: .init(cost: 1000))
        for index in 0..<10 { cache.setValue(index, forKey: "\(index)", cost: 100) }
        return cache
    }

    @Test("v2: usage at 90% of memory.max, or some avg10 ≥ 10%, trims every registered cache once per episode; an unset limit never does")
    func cgroupV2() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ text: String) throws { try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let files = MemoryPressureMonitor.Files(
            usage: directory.appendingPathComponent("memory.current").path, limit: directory.appendingPathComponent("memory.max").path,
            pressure: directory.appendingPathComponent("memory.pressure").path)
        let monitor = MemoryPressureMonitor(files: files, interval: .seconds(3600))
        let cache = Self.cache()
        monitor.register(cache)
        try write("memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        try write("memory.max", "max\n")
        try write("memory.current", "999999999\n")
        #expect(!monitor.check())
        #expect(cache.totalCost == 1000)

        try write("memory.max", "1000000000\n")
        try write("memory.current", "950000000\n")
        #expect(monitor.check())
        #expect(cache.totalCost <= 250)
        // Still under pressure: not trimmed again (the cache refills in the meantime).
        for index in 0..<10 { cache.setValue(index, forKey: "\(index)", cost: 100) }
        #expect(monitor.check())
        #expect(cache.totalCost == 1000)

        try write("memory.current", "100000000\n")
        #expect(!monitor.check())
        try write("memory.pressure", "some avg10=25.50 avg60=3.00 avg300=1.00 total=123\nfull avg10=1.00 avg60=0.00 avg300=0.00 total=1\n")
        #expect(monitor.check())
        #expect(cache.totalCost <= 250)
    }

    @Test("v1: memory.usage_in_bytes less inactive file pages against memory.limit_in_bytes; a limit near Int64.max is none; missing files are no pressure")
    func cgroupV1AndMissing() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let usage = directory.appendingPathComponent("memory.usage_in_bytes"), limit = directory.appendingPathComponent("memory.limit_in_bytes")
        let monitor = MemoryPressureMonitor(files: .init(usage: usage.path, limit: limit.path), interval: .seconds(3600))
        let cache = Self.cache()
        monitor.register(cache)
        try "9223372036854771712\n".write(to: limit, atomically: true, encoding: .utf8)
        try "1813360640\n".write(to: usage, atomically: true, encoding: .utf8)
        #expect(!monitor.check())
        try "2000000000\n".write(to: limit, atomically: true, encoding: .utf8)
        try "1900000000\n".write(to: usage, atomically: true, encoding: .utf8)
        #expect(monitor.check())
        #expect(cache.totalCost <= 250)
        // Page cache the kernel reclaims first (a disk cache's writes) is not pressure.
        let stat = directory.appendingPathComponent("memory.stat")
        try "cache 300000000\ninactive_file 5\ntotal_inactive_file 200000000\n".write(to: stat, atomically: true, encoding: .utf8)
        let reclaimable = MemoryPressureMonitor(files: .init(usage: usage.path, limit: limit.path, stat: stat.path), interval: .seconds(3600))
        #expect(!reclaimable.check())
        #expect(MemoryPressureMonitor.workingSet(usage: usage.path, stat: stat.path) == 1_700_000_000)

        let absent = MemoryPressureMonitor(files: .init(usage: "/nonexistent/usage", limit: "/nonexistent/limit"))
        #expect(!absent.check())
        #expect(!MemoryPressureMonitor(files: nil).check())
    }

    @Test(
        "this process's files are found from /proc/self/cgroup when the machine has them",
        .enabled(if: MemoryPressureMonitor.Files.forCurrentProcess() != nil, "this process is in no memory cgroup with its files"))
    func currentProcess() throws {
        let files = try #require(MemoryPressureMonitor.Files.forCurrentProcess())
        #expect(FileManager.default.fileExists(atPath: files.limit))
        #expect(FileManager.default.fileExists(atPath: files.usage))
    }
}
