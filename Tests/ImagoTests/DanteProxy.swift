import Foundation

/// Debian's Dante SOCKS server (`danted`) on 127.0.0.1 for a test, in the foreground with a
/// configuration of its own: SOCKS5 without authentication, any client and target on loopback,
/// each connection logged (`tcp/connect … -> … TARGET`) to standard error.
final class DanteProxy: TestPeer {
    static let executable = "/usr/sbin/danted"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    let peer: PeerProcess
    let port: Int

    var url: String { "socks5://127.0.0.1:\(port)" }
    /// What it logged so far.
    var log: String { peer.log }

    private init(peer: PeerProcess, port: Int) {
        self.peer = peer
        self.port = port
    }

    static func start() async throws -> DanteProxy {
        let folder = try temporaryDirectory()
        let port = try PeerProcess.freePort()
        let configuration = """
            logoutput: stderr
            internal: 127.0.0.1 port = \(port)
            external: lo
            socksmethod: none
            clientmethod: none
            user.privileged: root
            user.unprivileged: nobody
            client pass { from: 0.0.0.0/0 to: 0.0.0.0/0 log: connect }
            socks pass { from: 0.0.0.0/0 to: 0.0.0.0/0 log: connect }

            """
        let file = folder.appendingPathComponent("danted.conf")
        try Data(configuration.utf8).write(to: file)
        let peer = try await PeerProcess.start(executable, ["-f", file.path, "-N", "1"], folder: folder, readyWhen: "running")
        return DanteProxy(peer: peer, port: port)
    }
}

/// Runs `body` with a Dante SOCKS5 proxy, stopped after whatever `body` throws.
func withDanteProxy(_ body: (DanteProxy) async throws -> Void) async throws {
    try await withPeer({ try await DanteProxy.start() }, body)
}
