import Foundation
import ImagoTestSupport

/// Debian's nginx on 127.0.0.1 serving a folder of files for a test, as a real origin: its own
/// `ETag`s and `Last-Modified`, `Accept-Ranges`, and its own answers to `Range` with `If-Range`.
/// A request without a `Range` header is sent at `bytesPerSecond` (nginx's `$limit_rate`), so a
/// test can stop a first transfer part-way without any timing; ranges come at full speed. With
/// `http2`, it listens with TLS (the test certificate) and offers HTTP/2 by ALPN, ends each
/// connection with GOAWAY after `requestsPerConnection`, and `/status` is its `stub_status` (the
/// connections it accepted, counted when accepted: no race with the answers), and it logs each
/// answer (`served /NAME HTTP/2.0 priority="u=3"`) once sent.
final class NginxOrigin: TestPeer {
    static let executable = "/usr/sbin/nginx"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    let peer: PeerProcess
    let port: Int
    /// The folder it serves.
    let root: URL

    private init(peer: PeerProcess, port: Int, root: URL, scheme: String) {
        self.peer = peer
        self.port = port
        self.root = root
        self.scheme = scheme
    }

    let scheme: String

    func url(_ name: String) -> URL {
        URL(string: "\(scheme)://127.0.0.1:\(port)/\(name)")!
    }

    /// Starts nginx in the foreground as one process (no worker would outlive it), its log on
    /// standard error, and returns once it has said its limits, which it does after it listens.
    static func start(bytesPerSecond: Int = 0, http2: Bool = false, requestsPerConnection: Int = 1000) async throws -> NginxOrigin {
        let folder = try temporaryDirectory()
        let root = folder.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let port = try PeerProcess.freePort()
        var listen = "listen 127.0.0.1:\(port);"
        if http2 {
            try Data(TestCertificate.certificatePEM.utf8).write(to: folder.appendingPathComponent("cert.pem"))
            try Data(TestCertificate.privateKeyPEM.utf8).write(to: folder.appendingPathComponent("key.pem"))
            listen = """
                listen 127.0.0.1:\(port) ssl http2;
                        ssl_certificate \(folder.path)/cert.pem;
                        ssl_certificate_key \(folder.path)/key.pem;
                        keepalive_requests \(requestsPerConnection);
                        location = /status { stub_status; }
                """
        }
        let configuration = """
            pid \(folder.path)/nginx.pid;
            error_log stderr notice;
            events { worker_connections 64; }
            http {
                log_format served 'served $uri $server_protocol priority="$http_priority"';
                access_log \(http2 ? "/dev/stderr served" : "off");
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                fastcgi_temp_path \(folder.path)/fastcgi;
                uwsgi_temp_path \(folder.path)/uwsgi;
                scgi_temp_path \(folder.path)/scgi;
                server {
                    \(listen)
                    root \(root.path);
                    location / {
                        if ($http_range = "") { set $limit_rate \(bytesPerSecond); }
                    }
                }
            }

            """
        let file = folder.appendingPathComponent("nginx.conf")
        try Data(configuration.utf8).write(to: file)
        let peer = try await PeerProcess.start(
            executable, ["-p", folder.path, "-c", file.path, "-e", "stderr", "-g", "daemon off; master_process off;"], folder: folder,
            readyWhen: "getrlimit(RLIMIT_NOFILE)")
        return NginxOrigin(peer: peer, port: port, root: root, scheme: http2 ? "https" : "http")
    }
}

/// Runs `body` with an nginx origin, stopped after whatever `body` throws.
func withNginxOrigin(
    bytesPerSecond: Int = 0, http2: Bool = false, requestsPerConnection: Int = 1000, _ body: (NginxOrigin) async throws -> Void
) async throws {
    try await withPeer({ try await NginxOrigin.start(bytesPerSecond: bytesPerSecond, http2: http2, requestsPerConnection: requestsPerConnection) }, body)
}
