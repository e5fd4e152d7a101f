import BenchTestSupport
import Foundation
import Imago

/// 100 distinct 30 KB images from one host 50 ms away (a relay holding every chunk 25 ms each way,
/// Benchmarks/latency_relay.py: `tc netem` needs a qdisc these machines lack), over TLS from
/// Debian's nginx: one port offers HTTP/2, the other HTTP/1.1 only. Imago over HTTP/2 against
/// Imago over HTTP/1.1 with 6 connections (the goal), and curl both ways beside it. Every round
/// starts with no connection; 7 rounds in pairs whose order alternates.
enum HTTP2Benchmark {
    static let count = 100
    static let size = 30_000
    static let rounds = 7
    static let oneWayMilliseconds = 25

    static func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-h2-\(getpid())")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("www"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for index in 0..<count { try Measure.payload(size).write(to: folder.appendingPathComponent("www/\(index).bin")) }
        let certificate = folder.appendingPathComponent("cert.pem").path
        try Data(TestCertificate.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
        try Data(TestCertificate.privateKeyPEM.utf8).write(to: folder.appendingPathComponent("key.pem"))

        let (http2Port, http1Port) = (try freePort(), try freePort())
        let nginx = try startNginx(folder: folder, http2Port: http2Port, http1Port: http1Port)
        defer { nginx.stop() }
        let script = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../latency_relay.py").standardizedFileURL.path
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let (farHTTP2, farHTTP1) = (try freePort(), try freePort())
        let relays = try [(farHTTP2, http2Port), (farHTTP1, http1Port)].map { listen, target in
            try Background.start(python, [script, "\(listen)", "\(target)", "\(oneWayMilliseconds)"], readyWhen: "ready")
        }
        defer { relays.forEach { $0.stop() } }

        func urls(_ port: Int) -> [URL] { (0..<count).map { URL(string: "https://127.0.0.1:\(port)/\($0).bin")! } }
        func imago(_ port: Int, concurrency: Int) async throws -> Double {
            var configuration = ImagePipeline.Configuration()
            configuration.maxConcurrentDownloads = concurrency
            configuration.trustRoots = TrustRoots(paths: [certificate])
            let pipeline = ImagePipeline(configuration: configuration)
            // A new pipeline has its own connection pool: each round connects afresh.
            return try await Measure.seconds {
                let tasks = urls(port).map { pipeline.dataTask(with: ImageRequest(url: $0)) }
                for task in tasks {
                    guard try await task.response.data.count == size else { throw BenchmarkError("short body") }
                }
            }
        }
        let curl = try Measure.run("/usr/bin/env", ["which", "curl"]).trimmingCharacters(in: .whitespacesAndNewlines)
        func curlRound(_ port: Int, _ version: String, parallel: Int) async throws -> Double {
            let config = folder.appendingPathComponent("curl-\(port).txt")
            try urls(port).map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined().write(to: config, atomically: true, encoding: .utf8)
            return try await Measure.seconds {
                try Measure.spawn(
                    curl,
                    [version, "--parallel", "--parallel-max", "\(parallel)", "--cacert", certificate, "--silent", "--fail", "--config", config.path])
            }
        }

        let (http2Times, http1Times, ratio) = try await Measure.pairedRounds(
            rounds, imago: { try await imago(farHTTP2, concurrency: count) }, peer: { try await imago(farHTTP1, concurrency: 6) })
        var sixStreams: [Double] = [], curlHTTP2: [Double] = [], curlHTTP1: [Double] = []
        for _ in 0..<rounds {
            sixStreams.append(try await imago(farHTTP2, concurrency: 6))
            curlHTTP2.append(try await curlRound(farHTTP2, "--http2", parallel: count))
            curlHTTP1.append(try await curlRound(farHTTP1, "--http1.1", parallel: 6))
        }
        func seconds(_ times: [Double]) -> String { String(format: "%.3f s", Measure.median(times)) }
        report(
            "\(count) distinct \(size / 1000) KB images from one host, \(2 * oneWayMilliseconds) ms round trips, TLS (median of \(rounds) paired rounds)",
            imago: "HTTP/2, \(count) at once on one connection: \(seconds(http2Times)) (HTTP/2 with the default 6 at once: \(seconds(sixStreams)))",
            peer:
                "Imago over HTTP/1.1, 6 connections: \(seconds(http1Times)); curl --http2: \(seconds(curlHTTP2)); curl --http1.1 --parallel-max 6: \(seconds(curlHTTP1))",
            ratio: ratio, target: "≥ 1.5× HTTP/1.1", met: ratio >= 1.5
        )
        print(String(format: "  against curl --http2: %.2f×\n", Measure.median(curlHTTP2) / Measure.median(http2Times)))
    }

    /// nginx in the foreground, one process, serving `folder/www` on two TLS ports, returned once
    /// both accept connections.
    private static func startNginx(folder: URL, http2Port: Int, http1Port: Int) throws -> Background {
        let configuration = """
            pid \(folder.path)/nginx.pid;
            error_log stderr error;
            events { worker_connections 512; }
            http {
                access_log off;
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                fastcgi_temp_path \(folder.path)/fastcgi;
                uwsgi_temp_path \(folder.path)/uwsgi;
                scgi_temp_path \(folder.path)/scgi;
                ssl_certificate \(folder.path)/cert.pem;
                ssl_certificate_key \(folder.path)/key.pem;
                keepalive_requests 10000;
                http2_max_concurrent_streams 128;
                server { listen 127.0.0.1:\(http2Port) ssl http2; root \(folder.path)/www; }
                server { listen 127.0.0.1:\(http1Port) ssl; root \(folder.path)/www; }
            }

            """
        let file = folder.appendingPathComponent("nginx.conf")
        try Data(configuration.utf8).write(to: file)
        let nginx = try Background.start(
            "/usr/sbin/nginx", ["-p", folder.path, "-c", file.path, "-e", "stderr", "-g", "daemon off; master_process off;"], readyWhen: nil)
        for port in [http2Port, http1Port] {
            guard Background.waitUntilListening(port) else {
                nginx.stop()
                throw BenchmarkError("nginx did not listen on \(port)")
            }
        }
        return nginx
    }

    /// A port nothing listens on now (bound to 0 and released).
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw BenchmarkError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A program the benchmark runs beside it (nginx, the relay), started with posix_spawn, its
/// standard output read until it says it is ready, killed and reaped at the end.
struct Background {
    let pid: pid_t

    static func start(_ executable: String, _ arguments: [String], readyWhen ready: String?) throws -> Background {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchmarkError("no pipe") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(ends[1])
        defer { close(ends[0]) }
        guard spawned == 0 else { throw BenchmarkError("\(executable) could not be started (\(spawned))") }
        let background = Background(pid: pid)
        guard let ready else { return background }
        var said = ""
        var buffer = [UInt8](repeating: 0, count: 256)
        while !said.contains(ready) {
            let count = read(ends[0], &buffer, buffer.count)
            guard count > 0 else {
                background.stop()
                throw BenchmarkError("\(executable) ended before it was ready")
            }
            said += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return background
    }

    /// Tries to connect to `port` on 127.0.0.1 every 10 ms for up to 5 s.
    static func waitUntilListening(_ port: Int) -> Bool {
        for _ in 0..<500 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(socket)
            if connected { return true }
            usleep(10_000)
        }
        return false
    }

    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}
