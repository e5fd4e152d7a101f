import AsyncHTTPClient
import Dispatch
import Foundation
import ImagoServer
import ImagoTestSupport
import Testing

/// `imago serve` as a process: it says where it listens, answers, takes settings from `IMAGO_*`
/// variables, refuses bad ones, and exits 0 on SIGTERM.
@Suite("imago serve process", .timeLimit(.minutes(6)))
struct ServeCommandTests {
    static var executable: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago") }

    /// Starts `imago serve` and returns it with the port from its first line.
    static func start(
        _ arguments: [String], listen: String = "127.0.0.1:0", environment: [String: String] = [:], errors: FileHandle = .nullDevice
    ) async throws -> (Process, Int) {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--listen", listen] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IMAGO_") }.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return (process, await port(from: output))
    }

    /// The port of the first line `imago serve` writes (`… listening on host:PORT`), 0 if none.
    static func port(from output: Pipe) async -> Int {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var text = ""
                while !text.contains("\n") {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: Int(text.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0)
            }
        }
    }

    /// Runs `imago serve` with `arguments` and `environment` (alone) until it exits, which a refused
    /// start does: its status and what it wrote to standard error.
    static func refusedStart(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve"] + arguments
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let status = await waitForExit(process)
        return (status, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    static func waitForExit(_ process: Process) async -> Int32 {
        await offThePool {
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test("serves /health and an image from --local-root, imago health says so (exit 0, then 1 once it stopped), and exits 0 on SIGTERM")
    func servesAndStops() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        let (process, port) = try await Self.start(["--local-root", root.path], environment: ["IMAGO_QUALITY": "70"])
        #expect(port > 0)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let health = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(30))
        #expect(health.status.code == 200)
        let image = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/_/w:50/plain/local:%2F%2F%2Fphoto.jpg@png"), timeout: .seconds(30))
        #expect(image.status.code == 200)
        #expect(image.headers.first(name: "Content-Type") == "image/png")
        try await client.shutdown()
        // `imago health`, as a container's health check runs it: the same settings, here the
        // flag, else IMAGO_LISTEN or imgproxy's IMGPROXY_BIND.
        let healthy = try await runProcess(Self.executable, ["health", "--listen", "127.0.0.1:\(port)"])
        #expect(healthy.status == 0 && String(decoding: healthy.output, as: UTF8.self) == "ok\n")
        let byEnvironment = try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["IMGPROXY_BIND=127.0.0.1:\(port)", Self.executable.path, "health"])
        #expect(byEnvironment.status == 0)
        process.terminate()
        #expect(await Self.waitForExit(process) == 0)
        // Nothing listens there any more: exit 1, saying so.
        let down = try await runProcess(Self.executable, ["health", "--listen", "127.0.0.1:\(port)"], withStandardError: true)
        #expect(down.status == 1 && String(decoding: down.output, as: UTF8.self).contains("127.0.0.1:\(port)/health did not answer"))
    }

    @Test(
        "the log level: info (the default) logs a line per answer; IMGPROXY_LOG_LEVEL=warn none but the warnings; --log-level error not those either",
        arguments: [("", true, true), ("IMGPROXY_LOG_LEVEL=warn", false, true), ("--log-level=error", false, false)])
    func logLevel(setting: String, logsAnswers: Bool, logsWarnings: Bool) async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        let log = root.appendingPathComponent("errors.log")
        #expect(FileManager.default.createFile(atPath: log.path, contents: nil))
        let errors = try FileHandle(forWritingTo: log)
        let environment = setting.hasPrefix("IMGPROXY") ? [String(setting.split(separator: "=")[0]): String(setting.split(separator: "=")[1])] : [:]
        let (process, port) = try await Self.start(
            ["--local-root", root.path] + (setting.hasPrefix("--") ? [setting] : []), environment: environment, errors: errors)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let image = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/_/w:50/plain/local:%2F%2F%2Fphoto.jpg@png"), timeout: .seconds(30))
        #expect(image.status.code == 200)
        try await client.shutdown()
        process.terminate()
        #expect(await Self.waitForExit(process) == 0)
        try errors.close()
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains("status=200 [ImagoServer] answered") == logsAnswers, "\(text)")
        // Without a key every URL is served: always said at warning.
        #expect(text.contains("no IMAGO_KEY/IMAGO_SALT") == logsWarnings, "\(text)")
    }

    @Test("IMGPROXY_NETWORK=unix: IMGPROXY_BIND is a socket's path, served there; tcp4 and tcp6 take their own addresses; unixpacket is refused")
    func networks() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("imago.sock").path
        let (process, _, _) = try await PeerConfigurationTests.start([], environment: ["IMGPROXY_NETWORK": "unix", "IMGPROXY_BIND": socket])
        let health = try await runProcess(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "--unix-socket", socket, "http://localhost/health"])
        #expect(String(decoding: health.output, as: UTF8.self).hasPrefix("ok"))
        process.terminate()
        #expect(await Self.waitForExit(process) == 0)
        #expect(try ServerSettings.configuration(["IMGPROXY_NETWORK": "tcp6", "IMGPROXY_BIND": ":8080"]).host == "::")
        #expect(try ServerSettings.configuration(["IMGPROXY_NETWORK": "tcp4", "IMGPROXY_BIND": ":8080"]).host == "0.0.0.0")
        for (network, bind) in [("tcp4", "[::1]:8080"), ("tcp6", "127.0.0.1:8080"), ("unixpacket", "/tmp/x.sock")] {
            #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_NETWORK": network, "IMGPROXY_BIND": bind]) }
        }
    }

    @Test("IMGPROXY_SO_REUSEPORT: two processes listen on one port and both are given connections; without it the second stops at start")
    func reusePort() async throws {
        // Each answers its own health path: /a is 200 from the first, and a malformed imgproxy URL (400) to the second.
        let (first, port) = try await Self.start([], environment: ["IMGPROXY_SO_REUSEPORT": "true", "IMGPROXY_HEALTH_CHECK_PATH": "/a"])
        try #require(port > 0)
        let refused = try await Self.refusedStart(["--listen", "127.0.0.1:\(port)"])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("Address already in use"))

        let (second, secondPort) = try await Self.start(
            ["--so-reuseport", "1"], listen: "127.0.0.1:\(port)", environment: ["IMGPROXY_HEALTH_CHECK_PATH": "/b"])
        #expect(secondPort == port)
        // A new connection per request: the kernel spreads connections, not requests.
        func statuses(_ count: Int) async throws -> [String: Int] {
            let arguments =
                ["-s", "-H", "Connection: close", "-w", "%{http_code}\n"]
                + (0..<count).flatMap { _ in ["-o", "/dev/null", "http://127.0.0.1:\(port)/a"] }
            let answered = try await runProcess(URL(fileURLWithPath: "/usr/bin/curl"), arguments)
            return String(decoding: answered.output, as: UTF8.self).split(separator: "\n").reduce(into: [:]) { $0[String($1), default: 0] += 1 }
        }
        let both = try await statuses(40)
        #expect(both["200", default: 0] > 0 && both["400", default: 0] > 0 && both["200", default: 0] + both["400", default: 0] == 40, "\(both)")
        first.terminate()
        #expect(await Self.waitForExit(first) == 0)
        // The port stays served by the one left.
        #expect(try await statuses(10) == ["400": 10])
        second.terminate()
        #expect(await Self.waitForExit(second) == 0)
        #expect(try ServerSettings.configuration(["IMGPROXY_SO_REUSEPORT": "t"]).configuration.reusesPort)
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_SO_REUSEPORT": "yes please"]) }
    }

    @Test("IMGPROXY_PROMETHEUS_BIND: /metrics on its own address and not beside the images; the images' own address is refused")
    func metricsListen() async throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--listen", "127.0.0.1:0"]
        process.environment = ["IMGPROXY_PROMETHEUS_BIND": "127.0.0.1:0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Both lines, in whichever order the two listeners start.
        let lines = await offThePool { () -> [String] in
            var text = ""
            while !(text.contains("listening on") && text.contains("metrics on") && text.hasSuffix("\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text.split(separator: "\n").map(String.init)
        }
        func port(_ marker: String) -> String? { lines.first { $0.contains(marker) }?.split(separator: ":").last.map(String.init) }
        let images = try #require(port("listening on")), metrics = try #require(port("metrics on"))
        let curl = URL(fileURLWithPath: "/usr/bin/curl")
        let exposed = try await runProcess(curl, ["-s", "http://127.0.0.1:\(metrics)/metrics"])
        #expect(String(decoding: exposed.output, as: UTF8.self).contains("# TYPE imago_serve_"))
        let beside = try await runProcess(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(images)/metrics"])
        #expect(String(decoding: beside.output, as: UTF8.self) != "200")
        let health = try await runProcess(curl, ["-s", "http://127.0.0.1:\(images)/health"])
        #expect(String(decoding: health.output, as: UTF8.self).hasPrefix("ok"))
        process.terminate()
        #expect(await Self.waitForExit(process) == 0)
        #expect(throws: ServerError.self) {
            try ServerSettings.configuration(["IMGPROXY_BIND": "127.0.0.1:8080", "IMGPROXY_PROMETHEUS_BIND": "127.0.0.1:8080"])
        }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_PROMETHEUS_BIND": "localhost"]) }
    }

    @Test("IMGPROXY_LOG_MEM_STATS: the process's memory logged at debug every IMGPROXY_FREE_MEMORY_INTERVAL")
    func memoryStats() async throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--listen", "127.0.0.1:0"]
        process.environment = ["IMGPROXY_LOG_LEVEL": "debug", "IMGPROXY_LOG_MEM_STATS": "true", "IMGPROXY_FREE_MEMORY_INTERVAL": "1"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Read until the first memory line (the interval is a second); the test's limit bounds it.
        let line = await offThePool { () -> String? in
            var text = ""
            while true {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { return nil }
                text += String(decoding: chunk, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.contains("memory") && $0.contains("heap_in_use_mb") }) { return String(line) }
            }
        }
        process.terminate()
        #expect(await Self.waitForExit(process) == 0)
        let logged = try #require(line)
        #expect(logged.contains("debug") && logged.contains("resident_anon_mb") && logged.contains("decodes_reserved_mb") && logged.contains("variants_mb"))
        let configuration = try ServerSettings.configuration(["IMGPROXY_LOG_MEM_STATS": "1", "IMGPROXY_FREE_MEMORY_INTERVAL": "10"]).configuration
        #expect(configuration.logsMemoryStats && configuration.trimInterval == .seconds(10))
    }

    @Test("a bad setting stops it before it listens, naming the flag")
    func badSetting() async throws {
        let refused = try await Self.refusedStart(["--listen", "127.0.0.1:0"], environment: ["IMAGO_MAX_FRAMES": "lots"])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("--max-frames"))
    }

    @Test("docs/SERVER.md's settings table is the one ServerSettings declares, and the command's help lists every flag")
    func settingsDocumented() async throws {
        let docs = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../../docs/SERVER.md").standardizedFileURL
        let text = try String(contentsOf: docs, encoding: .utf8)
        let table = ServerSettings.markdownTable
        if !text.contains(table) {
            // The table to paste, for whoever changed a setting.
            try? table.write(toFile: NSTemporaryDirectory() + "imago-settings-table.md", atomically: true, encoding: .utf8)
        }
        #expect(text.contains(table), "docs/SERVER.md's table differs from ServerSettings.markdownTable (written to $TMPDIR/imago-settings-table.md)")
        let help = String(decoding: try await runProcess(Self.executable, ["serve", "--help"]).output, as: UTF8.self)
        for setting in ServerSettings.all {
            #expect(help.contains(setting.flag) && help.contains(setting.variable), "\(setting.flag)")
        }
    }

    @Test("flags and variables reach the configuration: a flag wins over IMAGO_*, which wins over imgproxy's own name")
    func settingsFromArguments() throws {
        let values = try ServerSettings.values(
            arguments: ["--quality", "55", "--avif", "--path-prefix=/img"],
            environment: [
                "IMAGO_QUALITY": "70", "IMAGO_PATH_PREFIX": "/other", "IMGPROXY_PATH_PREFIX": "/peer", "IMGPROXY_TRUSTED_SIGNATURES": "a,b", "SHELL": "/bin/sh",
            ])
        #expect(values["SHELL"] == nil)
        let configuration = try ServerSettings.configuration(values).configuration
        #expect(configuration.output.defaultQuality == 55 && configuration.output.negotiatesAVIF && configuration.pathPrefix == "/img")
        #expect(configuration.trustedSignatures == ["a", "b"])
        #expect(try ServerSettings.configuration(["IMGPROXY_PATH_PREFIX": "/peer"]).configuration.pathPrefix == "/peer")
        #expect(throws: ServerError.self) { try ServerSettings.values(arguments: ["--no-such-flag", "1"], environment: [:]) }
        #expect(throws: ServerError.self) { try ServerSettings.values(arguments: ["--quality"], environment: [:]) }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMAGO_THUMBOR_PATH": "/", "IMAGO_PATH_PREFIX": ""]) }
    }
}
