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
            "sys/memory/docker/abc/memory.stat":
                "cache 0\nrss 100\ninactive_file 7\nhierarchical_memory_limit 268435456\nhierarchical_memsw_limit 9223372036854771712\ntotal_inactive_file 4857600\n",
        ])
        defer { try? FileManager.default.removeItem(at: v1) }
        let found = try #require(ContainerMemory.current(cgroupFile: v1.path + "/proc/cgroup", root: v1.path + "/sys"))
        // The working set: the usage less the page cache the kernel reclaims first (the subtree's).
        #expect(found.limit == 268_435_456 && found.usage() == 104_857_600 - 4_857_600)

        let unlimited = try Self.layout([
            "proc/cgroup": "4:memory:/\n", "sys/memory/memory.limit_in_bytes": "9223372036854771712\n", "sys/memory/memory.usage_in_bytes": "1\n",
        ])
        defer { try? FileManager.default.removeItem(at: unlimited) }
        #expect(ContainerMemory.current(cgroupFile: unlimited.path + "/proc/cgroup", root: unlimited.path + "/sys") == nil)

        let v2 = try Self.layout([
            "proc/cgroup": "0::/system.slice/imago.service\n", "sys/memory.max": "max\n", "sys/system.slice/memory.max": "402653184\n",
            "sys/system.slice/imago.service/memory.max": "max\n", "sys/system.slice/imago.service/memory.current": "5000\n",
            "sys/system.slice/imago.service/memory.stat": "anon 3000\nfile 2000\nactive_file 800\ninactive_file 1200\n",
        ])
        defer { try? FileManager.default.removeItem(at: v2) }
        let nested = try #require(ContainerMemory.current(cgroupFile: v2.path + "/proc/cgroup", root: v2.path + "/sys"))
        #expect(nested.limit == 402_653_184 && nested.usage() == 3800)

        // In a container's own cgroup namespace the group is "/" and mounted at the root.
        let namespaced = try Self.layout(["proc/cgroup": "0::/\n", "sys/memory.max": "268435456\n", "sys/memory.current": "7\n"])
        defer { try? FileManager.default.removeItem(at: namespaced) }
        #expect(ContainerMemory.current(cgroupFile: namespaced.path + "/proc/cgroup", root: namespaced.path + "/sys")?.limit == 268_435_456)
        let none = try Self.layout(["proc/cgroup": "0::/\n", "sys/memory.max": "max\n", "sys/memory.current": "7\n"])
        defer { try? FileManager.default.removeItem(at: none) }
        #expect(ContainerMemory.current(cgroupFile: none.path + "/proc/cgroup", root: none.path + "/sys") == nil)
        #expect(ContainerMemory.current(cgroupFile: none.path + "/missing", root: none.path + "/sys") == nil)
    }

    @Test("a 256 MB limit keeps 32 MB of variants and gives decodes and encodes 128 MB (96 MB for the process), unless --memory-bytes was set")
    func sizes() {
        let container = ContainerMemory(limit: 256 << 20, usageFile: "/nonexistent")
        var configuration = ServerConfiguration()
        configuration.fit(into: container, keepsMemoryBytes: false)
        #expect(configuration.memoryBytes == 32 << 20 && configuration.decodeMemoryBytes == 128 << 20)
        // A small limit still leaves decodes a quarter of it.
        var small = ServerConfiguration()
        small.fit(into: ContainerMemory(limit: 128 << 20, usageFile: "/nonexistent"), keepsMemoryBytes: false)
        #expect(small.memoryBytes == 16 << 20 && small.decodeMemoryBytes == 32 << 20)
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

    /// Whether a memory cgroup can be made here (root, and a writable v1 memory hierarchy or a v2
    /// one with the memory controller).
    static var memoryCgroup: String? { MemoryCgroup.hierarchy?.path }

    /// The photo sizes of the table in issue 59: 12, 14.7, 24 and 48 megapixels, and 48 again progressive.
    static let photoSizes = [(4000, 3000), (5120, 2880), (6000, 4000), (8000, 6000), (8000, 6000)]

    /// JPEGs of `photoSizes` (q90, a corpus photo scaled up by ImageMagick, so they compress as
    /// photos do), made once per run.
    static func photos() async throws -> [Data] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cgroup-photos-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var photos: [Data] = []
        for (index, (width, height)) in photoSizes.enumerated() {
            // The last one progressive, as cameras and editors write them: libjpeg-turbo would hold
            // every coefficient (158 MB at 48 MP), Imago's DC decoder a value per block.
            let progressive = index == photoSizes.count - 1
            let file = folder.appendingPathComponent("\(width)x\(height)\(progressive ? "-progressive" : "").jpg")
            if !FileManager.default.fileExists(atPath: file.path) {
                try await runTool(
                    "/usr/bin/convert",
                    [Corpus.root.appendingPathComponent("jpeg/video-001.jpeg").path, "-resize", "\(width)x\(height)!", "-quality", "90"]
                        + (progressive ? ["-interlace", "JPEG"] : []) + [file.path])
            }
            photos.append(try Data(contentsOf: file))
        }
        return photos
    }

    @Test(
        "in 256 MB and 512 MB cgroups, fit-300 thumbnails of 12–48 MP JPEGs (baseline and progressive) are all 200, one at a time and 16 at once, with no OOM kill",
        .enabled(if: memoryCgroup != nil && !runsUnderSanitizer, "a sanitizer's shadow memory and quarantine take more than the group's limit"),
        arguments: [256, 512])
    func thumbnailsInACgroup(megabytes: Int) async throws {
        let photos = try await Self.photos()
        let origin = try await TestOrigin.start()
        // Each photo at its own path for the one-at-a-time row, and at four more for the burst:
        // no two requests of the burst share a transfer.
        let single = photos.indices.map { origin.serve(photos[$0], at: "/single-\($0).jpg").absoluteString }
        let burst = (0..<16).map { origin.serve(photos[$0 % photos.count], at: "/burst-\($0).jpg").absoluteString }
        // The default workers (4 per core) take what they can and the queue holds the rest of the
        // burst; the work timeout is lifted because a debug build beside the rest of the suite is
        // slow, and what is tested is memory and the queue, not time.
        let answers = try await Self.inCgroup(megabytes: megabytes, arguments: ["--timeout", "600"]) { port, client in
            var answers: [(Int, Data)] = []
            for source in single { answers.append(await Self.get(ServerHarness.path(source, ["rs:fit:300:300"]), port: port, client: client)) }
            answers += await Self.all(burst.map { ServerHarness.path($0, ["rs:fit:300:300"]) }, port: port, client: client)
            return answers
        }
        try await origin.shutdown()
        #expect(answers.count == 21)
        for (status, body) in answers {
            #expect(status == 200, "\(String(decoding: body.prefix(200), as: UTF8.self))")
            if status == 200 { #expect(try DecoderRegistry.standard().decode(body).width == 300) }
        }
    }

    /// Full-size encodes of 12 and 14.7 MP JPEGs at once: what fits the budget (128 MB) is made,
    /// what can never fit is 422 before anything is allocated (AVIF's 24 and JPEG XL's 48 bytes a
    /// pixel; WebP's 7 at 14.7 MP), and the rest waits for memory or is shed; the kernel never
    /// kills the server.
    @Test(
        "16 full-size AVIF, JPEG XL, WebP and PNG encodes of 12–15 MP JPEGs at once in 256 MB: 200, 422 or 503, never an OOM kill",
        .enabled(if: memoryCgroup != nil && !runsUnderSanitizer, "a sanitizer's shadow memory and quarantine take more than the group's limit"))
    func fullSizeEncodesInACgroup() async throws {
        let photos = try await Self.photos()
        let origin = try await TestOrigin.start()
        let formats = ["avif", "jxl", "webp", "png"]
        let paths = (0..<16).map { index in
            ServerHarness.path(origin.serve(photos[index % 2], at: "/full-\(index).jpg").absoluteString, ["q:50"], extension: formats[index % 4])
        }
        // The work timeout is lifted: beside the rest of the suite, eight 12 MP encodes of a
        // debug build on two cores can take longer than its 30 s, and what is tested is memory.
        let answers = try await Self.inCgroup(megabytes: 256, arguments: ["--workers", "16", "--timeout", "600"]) { port, client in
            await Self.all(paths, port: port, client: client)
        }
        try await origin.shutdown()
        for (index, (status, body)) in answers.enumerated() {
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            switch formats[index % 4] {
            case "avif", "jxl": #expect(status == 422 && text == "the image is too large for this server's memory\n", "\(status) \(text)")
            default:
                #expect(status == 200 || status == 422 || status == 503, "\(status) \(text)")
                if status == 200 { #expect(try DecoderRegistry.standard().decode(body).width == [4000, 5120][index % 2]) }
            }
        }
        #expect(answers.contains { $0.0 == 200 })
    }

    /// Starts `imago serve` with `arguments` in a new memory cgroup of `megabytes`, runs `work`
    /// against it, and checks that it sized itself from the group, was never OOM-killed, and
    /// stops with 0. `work`'s answers are returned in order.
    static func inCgroup(
        megabytes: Int, arguments: [String], _ work: @Sendable (Int, HTTPClient) async throws -> [(Int, Data)]
    ) async throws -> [(Int, Data)] {
        let group = try #require(try MemoryCgroup.make(limit: megabytes << 20))
        defer { group.remove() }
        let (process, port, log) = try await PeerConfigurationTests.start(
            ["--listen", "127.0.0.1:0", "--allow-private-addresses"] + arguments, environment: [:], cgroup: group.path)
        #expect(port > 0)
        // One connection per request of a burst (the client's default pool holds 8 a host).
        var settings = HTTPClient.Configuration()
        settings.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
        let answers = try await work(port, client)
        try await client.shutdown()
        #expect(process.isRunning, "the server was killed")
        #expect(group.oomKills() == 0)
        print("cgroup v\(group.version) \(megabytes) MB: answers \(answers.map(\.0)), peak \((group.peak() ?? 0) >> 20) MB")
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        let logged = try String(contentsOf: log, encoding: .utf8)
        let kept = min(max(megabytes / 8, 16), 256)
        #expect(logged.contains("container memory limit \(megabytes) MB: \(kept) MB kept"), "\(logged)")
        return answers
    }

    /// `path`'s status and body; a request that fails outright (the connection dropped: the server
    /// killed) is status 0.
    static func get(_ path: String, port: Int, client: HTTPClient) async -> (Int, Data) {
        do {
            let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(120))
            let status = Int(response.status.code)
            let body = Data(buffer: try await response.body.collect(upTo: 1 << 26))
            if status == 503 { #expect(response.headers.first(name: "Retry-After") != nil) }
            return (status, body)
        } catch {
            return (0, Data("\(error)".utf8))
        }
    }

    /// Every path at once; the answers in the paths' order.
    static func all(_ paths: [String], port: Int, client: HTTPClient) async -> [(Int, Data)] {
        await withTaskGroup(of: (Int, (Int, Data)).self) { group in
            for (index, path) in paths.enumerated() { group.addTask { (index, await get(path, port: port, client: client)) } }
            var answers = [(Int, Data)](repeating: (0, Data()), count: paths.count)
            for await (index, answer) in group { answers[index] = answer }
            return answers
        }
    }
}

/// A memory cgroup made for a test and removed after it: v1's memory hierarchy, or v2's unified
/// one where the memory controller is enabled (this needs root).
struct MemoryCgroup {
    let path: String
    let version: Int

    /// Where groups can be made: the v1 memory hierarchy, else a v2 root offering `memory`.
    static var hierarchy: (path: String, version: Int)? {
        guard getuid() == 0 else { return nil }
        if access("/sys/fs/cgroup/memory", W_OK) == 0, FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/memory.limit_in_bytes") {
            return ("/sys/fs/cgroup/memory", 1)
        }
        let controllers = (try? String(contentsOfFile: "/sys/fs/cgroup/cgroup.subtree_control", encoding: .utf8)) ?? ""
        if controllers.split(separator: " ").contains(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "memory" }) {
            return ("/sys/fs/cgroup", 2)
        }
        return nil
    }

    /// A new group limited to `limit` bytes (swap too), or nil where none can be made.
    static func make(limit: Int) throws -> MemoryCgroup? {
        guard let (root, version) = hierarchy else { return nil }
        let path = root + "/imago-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        if version == 1 {
            try "\(limit)".write(toFile: path + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)
        } else {
            try "\(limit)".write(toFile: path + "/memory.max", atomically: false, encoding: .utf8)
            try? "0".write(toFile: path + "/memory.swap.max", atomically: false, encoding: .utf8)
        }
        return MemoryCgroup(path: path, version: version)
    }

    /// The kernel's OOM kills in the group (v1 `memory.oom_control`, v2 `memory.events`).
    func oomKills() -> Int {
        let file = version == 1 ? "/memory.oom_control" : "/memory.events"
        let text = (try? String(contentsOfFile: path + file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix("oom_kill ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
    }

    /// The most the group used (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`).
    func peak() -> Int? {
        let text = try? String(contentsOfFile: path + (version == 1 ? "/memory.max_usage_in_bytes" : "/memory.peak"), encoding: .utf8)
        return text.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Removes the group (its processes have ended).
    func remove() { rmdir(path) }
}
