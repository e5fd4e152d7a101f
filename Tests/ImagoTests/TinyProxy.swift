import Foundation
import Glibc

/// Debian's tinyproxy on 127.0.0.1 for a test, in the foreground with a configuration of its own:
/// a `Via: 1.1 imago-test-proxy` header on what it forwards, `CONNECT` to any port, optionally
/// Basic credentials. Its log (standard output in the foreground, `Info` level: a `Request` line per
/// request) is read from a pipe; it is ready when the log says it accepts connections.
final class TinyProxy: TestPeer {
    static let executable = "/usr/bin/tinyproxy"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    static let viaName = "imago-test-proxy"

    let peer: PeerProcess
    let port: Int

    var url: String { "http://127.0.0.1:\(port)" }
    /// What it logged so far.
    var log: String { peer.log }

    private init(peer: PeerProcess, port: Int) {
        self.peer = peer
        self.port = port
    }

    /// Starts tinyproxy, requiring `user`/`password` when given, and returns once it accepts connections.
    static func start(user: String? = nil, password: String? = nil) async throws -> TinyProxy {
        let folder = try temporaryDirectory()
        let port = try PeerProcess.freePort()
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
        // In the foreground tinyproxy logs to standard output, block-buffered into a pipe: stdbuf
        // makes it line-buffered, so each line is in the pipe before tinyproxy acts on it.
        let peer = try await PeerProcess.start(
            "/usr/bin/stdbuf", ["-oL", "-eL", executable, "-d", "-c", file.path], folder: folder, readyWhen: "Accepting connections")
        return TinyProxy(peer: peer, port: port)
    }

    /// Stops it; SIGTERM would make it wait for its worker threads.
}

/// Runs `body` with a tinyproxy, stopped after whatever `body` throws.
func withTinyProxy(user: String? = nil, password: String? = nil, _ body: (TinyProxy) async throws -> Void) async throws {
    try await withPeer({ try await TinyProxy.start(user: user, password: password) }, body)
}
