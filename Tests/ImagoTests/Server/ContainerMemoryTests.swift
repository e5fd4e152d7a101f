import AsyncHTTPClient
import Foundation
import Glibc
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// A container's memory limit, read from the kernel's cgroup files (v1 and v2), sizes the
/// server's caches and decode budget, and new work is shed with 503 as the group's use nears it.
@Suite("The container's memory limit", .serialized)
struct ContainerMemoryTests {
    /// Writes `files` (path → text) under a new folder, as the kernel lays them out.
    static func layout(_ files: [String: String]) throws -> URL {
        let root = try temporaryDirectory()
        for (path, text) in files {
            let file = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test("cgroup v1 and v2 as the kernel writes them: the group's (or an ancestor's) limit, 'max' and v1's unlimited value as none, the namespace root")
    func reads() throws {
        let v1 = try Self.layout([
            "proc/cgroup": "12:pids:/docker/abc\n4:memory:/docker/abc\n0::/docker/abc\n",
            "sys/memory/docker/abc/memory.limit_in_bytes": "536870912\n",
            "sys/memory/docker/abc/memory.usage_in_bytes": "104857600\n",
            "sys/memory/docker/abc/memory.stat": "cache 0\nrss 100\nhierarchical_memory_limit 268435456\nhierarchical_memsw_limit 9223372036854771712\n",
        ])
        defer { try? FileManager.default.removeItem(at: v1) }
        let found = try #require(ContainerMemory.current(cgroupFile: v1.path + "/proc/cgroup", root: v1.path + "/sys"))
        #expect(found.limit == 268_435_456 && found.usage() == 104_857_600)

        let unlimited = try Self.layout([
            "proc/cgroup": "4:memory:/\n", "sys/memory/memory.limit_in_bytes": "9223372036854771712\n", "sys/memory/memory.usage_in_bytes": "1\n",
        ])
        defer { try? FileManager.default.removeItem(at: unlimited) }
        #expect(ContainerMemory.current(cgroupFile: unlimited.path + "/proc/cgroup", root: unlimited.path + "/sys") == nil)

        let v2 = try Self.layout([
            "proc/cgroup": "0::/system.slice/imago.service\n", "sys/memory.max": "max\n", "sys/system.slice/memory.max": "402653184\n",
            "sys/system.slice/imago.service/memory.max": "max\n", "sys/system.slice/imago.service/memory.current": "5000\n",
        ])
        defer { try? FileManager.default.removeItem(at: v2) }
        let nested = try #require(ContainerMemory.current(cgroupFile: v2.path + "/proc/cgroup", root: v2.path + "/sys"))
        #expect(nested.limit == 402_653_184 && nested.usage() == 5000)

        // In a container's own cgroup namespace the group is "/" and mounted at the root.
        let namespaced = try Self.layout(["proc/cgroup": "0::/\n", "sys/memory.max": "268435456\n", "sys/memory.current": "7\n"])
        defer { try? FileManager.default.removeItem(at: namespaced) }
        #expect(ContainerMemory.current(cgroupFile: namespaced.path + "/proc/cgroup", root: namespaced.path + "/sys")?.limit == 268_435_456)
        let none = try Self.layout(["proc/cgroup": "0::/\n", "sys/memory.max": "max\n", "sys/memory.current": "7\n"])
        defer { try? FileManager.default.removeItem(at: none) }
        #expect(ContainerMemory.current(cgroupFile: none.path + "/proc/cgroup", root: none.path + "/sys") == nil)
        #expect(ContainerMemory.current(cgroupFile: none.path + "/missing", root: none.path + "/sys") == nil)
    }

    @Test("a 256 MB limit keeps 32 MB of variants and gives decodes and encodes 192 MB, unless --memory-bytes was set")
    func sizes() {
        let container = ContainerMemory(limit: 256 << 20, usageFile: "/nonexistent")
        var configuration = ServerConfiguration()
        configuration.fit(into: container, keepsMemoryBytes: false)
        #expect(configuration.memoryBytes == 32 << 20 && configuration.decodeMemoryBytes == (256 << 20) / 4 * 3)
        var kept = ServerConfiguration()
        kept.memoryBytes = 100 << 20
        kept.fit(into: ContainerMemory(limit: 64 << 30, usageFile: "/nonexistent"), keepsMemoryBytes: true)
        #expect(kept.memoryBytes == 100 << 20 && kept.decodeMemoryBytes == 1 << 30)
    }

    @Test("past nine tenths of the limit in use, new work is 503 with Retry-After and counted; kept answers are still given; below, work resumes")
    func sheds() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let usage = folder.appendingPathComponent("memory.current")
        try "100\n".write(to: usage, atomically: true, encoding: .utf8)
        try await withServer({ $0.containerMemory = ContainerMemory(limit: 1000, usageFile: usage.path) }) { server in
            let first = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            let second = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/b.png")
            #expect(try await server.get(ServerHarness.path(first.absoluteString, ["w:20"])).status == 200)
            try "950\n".write(to: usage, atomically: true, encoding: .utf8)
            let shed = try await server.get(ServerHarness.path(second.absoluteString, ["w:20"]))
            #expect(shed.status == 503 && shed.header("Retry-After") != nil)
            #expect(try await server.get(ServerHarness.path(first.absoluteString, ["w:20"])).status == 200)
            #expect(try await server.get("/metrics").body.range(of: Data("imago_serve_shed_for_memory_total 1".utf8)) != nil)
            try "899\n".write(to: usage, atomically: true, encoding: .utf8)
            #expect(try await server.get(ServerHarness.path(second.absoluteString, ["w:20"])).status == 200)
        }
    }

    /// A memory cgroup (v1) this process may make: root, and the hierarchy mounted writable.
    static var memoryCgroup: String? {
        let hierarchy = "/sys/fs/cgroup/memory"
        guard getuid() == 0, access(hierarchy, W_OK) == 0 else { return nil }
        return hierarchy
    }

    @Test(
        "imago serve in a memory cgroup of 256 MB sizes itself from it, and 12 large images at once, thumbnailed, are all made",
        .enabled(if: memoryCgroup != nil))
    func livesInsideACgroup() async throws {
        try await Self.burst(options: ["rs:fit:300:300"], width: 300)
    }

    /// The same burst with nothing reduced: each image decoded and encoded at its full 12 MP.
    /// Before encodes went ahead of waiting decodes, all twelve were decoded first and the kernel
    /// killed the server (anon-rss 261 MB); now the group peaks near 183 MB.
    @Test(
        "12 full-size 12 MP images at once in 256 MB: made or shed, never OOM-killed",
        .enabled(if: memoryCgroup != nil && !runsUnderSanitizer, "a sanitizer's shadow memory and quarantine take more than the group's limit"))
    func fullSizeBurst() async throws {
        try await Self.burst(options: ["q:50"], width: 4000)
    }

    /// Starts `imago serve` in a new 256 MB memory cgroup and sends it twelve requests at once,
    /// each for its own 4,000 × 3,000 JPEG with `options`, as WebP.
    static func burst(options: [String], width: Int) async throws {
        let group = try #require(Self.memoryCgroup) + "/imago-test-\(getpid())"
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: false)
        defer { rmdir(group) }
        try "268435456".write(toFile: group + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)
        // A 4,000 × 3,000 gradient as JPEG: 48 MB once decoded, served at twelve paths so none is coalesced.
        var pixels = [UInt8](repeating: 255, count: 4000 * 3000 * 4)
        for y in 0..<3000 {
            for x in 0..<4000 {
                let at = (y * 4000 + x) * 4
                (pixels[at], pixels[at + 1], pixels[at + 2]) = (UInt8(x % 256), UInt8(y % 256), UInt8((x + y) % 256))
            }
        }
        let metadata = ImageMetadata(format: .jpeg, originalWidth: 4000, originalHeight: 3000, orientationApplied: .up, hasAlpha: false)
        let jpeg = try JPEGEncoder(quality: 80).encode(Image(width: 4000, height: 3000, frames: [.init(pixels: pixels)], metadata: metadata))
        let origin = try await TestOrigin.start()
        let sources = (0..<12).map { origin.serve(jpeg, at: "/large-\($0).jpg").absoluteString }

        let (process, port, log) = try await PeerConfigurationTests.start(
            ["--listen", "127.0.0.1:0", "--allow-private-addresses"], environment: [:], cgroup: group)
        #expect(port > 0)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        // A request that fails outright (the connection dropped: the server killed) is status 0.
        let answers = await withTaskGroup(of: (Int, Data).self) { group in
            for source in sources {
                group.addTask {
                    let path = ServerHarness.path(source, options, extension: "webp")
                    do {
                        let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(120))
                        return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 26)))
                    } catch {
                        return (0, Data("\(error)".utf8))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        try await client.shutdown()
        try await origin.shutdown()
        #expect(process.isRunning, "the server was killed")
        #expect(answers.allSatisfy { $0.0 == 200 || $0.0 == 503 }, "\(answers.map { "\($0.0) \(String(decoding: $0.1.prefix(200), as: UTF8.self))" })")
        for (status, body) in answers where status == 200 {
            #expect(try DecoderRegistry.standard().decode(body).width == width)
        }
        #expect(answers.contains { $0.0 == 200 })
        let failures = (try? String(contentsOfFile: group + "/memory.failcnt", encoding: .utf8)) ?? "?"
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        let logged = try String(contentsOf: log, encoding: .utf8)
        #expect(logged.contains("container memory limit 256 MB: 32 MB kept, 192 MB for decodes and encodes"), "\(logged)")
        print(
            "cgroup burst \(options): answers \(answers.map(\.0).sorted()), memory.failcnt \(failures.trimmingCharacters(in: .whitespacesAndNewlines)), peak \((try? String(contentsOfFile: group + "/memory.max_usage_in_bytes", encoding: .utf8)) ?? "?")"
        )
    }
}
