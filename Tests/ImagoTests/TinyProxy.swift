import Foundation
import Glibc

@testable import Imago

/// Debian's tinyproxy on 127.0.0.1 for a test, in the foreground with a configuration of its own:
/// a `Via: 1.1 imago-test-proxy` header on what it forwards, `CONNECT` to any port, optionally
/// Basic credentials. Its log (standard output in the foreground, `Info` level: a `Request` line per
/// request) is read from a pipe; it is ready when the log says it accepts connections.
final class TinyProxy: Sendable {
    static let executable = "/usr/bin/tinyproxy"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    static let viaName = "imago-test-proxy"

    let process: Process
    let port: Int
    let folder: URL

    var url: String { "http://127.0.0.1:\(port)" }
    private let output: FileHandle
    private let lines = Locked("")

    /// What it logged so far: whatever is in the pipe now is read first (without blocking), so a
    /// line tinyproxy wrote before it forwarded a request is here once that request's answer is.
    var log: String {
        while readChunk() > 0 {}
        return lines.withLock { $0 }
    }

    /// One read(2) of the log pipe into `lines` (FileHandle.read(upToCount:) would wait for the
    /// whole count or the end); its count, 0 or less when nothing came.
    private func readChunk() -> Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(output.fileDescriptor, &buffer, buffer.count)
        if count > 0 { lines.withLock { $0 += String(decoding: buffer[..<count], as: UTF8.self) } }
        return count
    }

    private init(process: Process, port: Int, folder: URL, output: FileHandle) {
        self.process = process
        self.port = port
        self.folder = folder
        self.output = output
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
        // In the foreground tinyproxy logs to standard output, block-buffered into a pipe: stdbuf
        // makes it line-buffered, so each line is in the pipe before tinyproxy acts on it.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        process.arguments = ["-oL", "-eL", executable, "-d", "-c", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let proxy = TinyProxy(process: process, port: port, folder: folder, output: output.fileHandleForReading)
        // Blocking reads until it accepts connections (or ends, when it could not start); after
        // that the log is read without blocking whenever it is asked for.
        await offThePool {
            while !proxy.lines.withLock({ $0.contains("Accepting connections") }), proxy.readChunk() > 0 {}
        }
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        guard proxy.log.contains("Accepting connections") else {
            await proxy.stop()
            throw POSIXError(.ECONNREFUSED)
        }
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
