import Foundation
import Glibc

@testable import Imago

/// Debian's tinyproxy on 127.0.0.1 for a test, in the foreground with a configuration of its own:
/// a `Via: 1.1 imago-test-proxy` header on what it forwards, `CONNECT` to any port, optionally
/// Basic credentials. Its log (standard error, `Info` level: a `Request` line per request) is
/// collected as it runs; it is ready when the log says it accepts connections.
final class TinyProxy: Sendable {
    static let executable = "/usr/bin/tinyproxy"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    static let viaName = "imago-test-proxy"

    let process: Process
    let port: Int
    let folder: URL
    private let lines = Locked("")

    var url: String { "http://127.0.0.1:\(port)" }
    /// What it logged so far.
    var log: String { lines.withLock { $0 } }

    private init(process: Process, port: Int, folder: URL) {
        self.process = process
        self.port = port
        self.folder = folder
    }

    /// Starts tinyproxy, requiring `user`/`password` when given, and returns once it accepts connections.
    static func start(user: String? = nil, password: String? = nil) async throws -> TinyProxy {
        let folder = try temporaryDirectory()
        let port = try freePort()
        var configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 30
            LogLevel Info
            MaxClients 50
            Allow 127.0.0.1
            ViaProxyName "\(viaName)"

            """
        if let user, let password { configuration += "BasicAuth \(user) \(password)\n" }
        if getuid() == 0 { configuration += "User nobody\nGroup nogroup\n" }
        let file = folder.appendingPathComponent("tinyproxy.conf")
        try Data(configuration.utf8).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-d", "-c", file.path]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let proxy = TinyProxy(process: process, port: port, folder: folder)
        // Its log is read on a thread of its own for as long as it runs; the first wait ends at
        // "Accepting connections" (or at its end, when it could not start).
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        Thread.detachNewThread {
            var announced = false
            while let chunk = try? errors.fileHandleForReading.read(upToCount: 4096), !chunk.isEmpty {
                let text = String(decoding: chunk, as: UTF8.self)
                let all = proxy.lines.withLock { lines in
                    lines += text
                    return lines
                }
                if !announced, all.contains("Accepting connections") {
                    announced = true
                    readyContinuation.finish()
                }
            }
            readyContinuation.finish()
        }
        for await _ in ready {}
        return proxy
    }

    func stop() async {
        // SIGTERM makes it wait for its worker threads; nothing of it needs keeping.
        kill(process.processIdentifier, SIGKILL)
        let process = process
        await offThePool { process.waitUntilExit() }
        try? FileManager.default.removeItem(at: folder)
    }

    /// A port nothing listens on now (bound to 0 and released: tinyproxy cannot be told port 0).
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs `body` with a tinyproxy, stopped after whatever `body` throws.
func withTinyProxy(user: String? = nil, password: String? = nil, _ body: (TinyProxy) async throws -> Void) async throws {
    let proxy = try await TinyProxy.start(user: user, password: password)
    do {
        try await body(proxy)
    } catch {
        await proxy.stop()
        throw error
    }
    await proxy.stop()
}
