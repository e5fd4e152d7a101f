import AsyncHTTPClient
import Dispatch
import Foundation
import Glibc
import Hummingbird
import Imago
import ImagoServer
import ImagoTestSupport
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Testing
import Tracing

/// A live `imago serve` router on 127.0.0.1 (port 0) beside a TestOrigin for its sources, and an
/// HTTP client; everything is shut down after `body`, whatever it throws.
func withServer(
    _ configure: (inout ServerConfiguration) -> Void = { _ in },
    pipeline: (@Sendable (ServerConfiguration) throws -> ImagePipeline)? = nil,
    tracer: any Tracer = NoOpTracer(),
    _ body: (ServerHarness) async throws -> Void
) async throws {
    let origin = try await TestOrigin.start()
    var configuration = ServerConfiguration()
    // The sources are on loopback, which the default policy refuses.
    configuration.allowsPrivateAddresses = true
    configure(&configuration)
    let service = try ImageService(configuration: configuration, pipeline: pipeline?(configuration), tracer: tracer)
    var logger = Logger(label: "imago-serve-test")
    logger.logLevel = .critical
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let listener = ImageListener(
        service: service, host: "127.0.0.1", port: 0, logger: logger,
        onListening: { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        })
    let group = ServiceGroup(configuration: .init(services: [listener], gracefulShutdownSignals: [], logger: logger))
    let running = Task { try await group.run() }
    var iterator = ports.makeAsyncIterator()
    let port = await iterator.next() ?? 0
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    let harness = ServerHarness(
        base: "http://127.0.0.1:\(port)", origin: origin, service: service, client: client, stop: { await group.triggerGracefulShutdown() },
        stopped: { _ = try? await running.value })
    do {
        try #require(port > 0)
        try await body(harness)
    } catch {
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        try? await origin.shutdown()
        throw error
    }
    try await client.shutdown()
    await group.triggerGracefulShutdown()
    try await running.value
    try await origin.shutdown()
}

struct ServerHarness: Sendable {
    let base: String
    let origin: TestOrigin
    let service: ImageService
    let client: HTTPClient
    /// Starts the graceful shutdown (as SIGTERM does) and returns at once.
    let stop: @Sendable () async -> Void
    /// Returns once the server has stopped: after ``stop``, when its last connection has closed.
    let stopped: @Sendable () async -> Void

    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// `path` (already signed or with any first segment when signing is off).
    func get(_ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
    }

    /// Opens a connection and sends a request head a byte every 100 ms, on a GCD thread; returns
    /// how many bytes went before the server closed the connection, or nil if it never did.
    func trickle(_ head: String) async -> Int? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let (socket, connected) = connect()
                defer { close(socket) }
                guard connected else { return continuation.resume(returning: nil) }
                for (index, byte) in head.utf8.enumerated() {
                    var byte = byte
                    var probe: UInt8 = 0
                    // The server closed: a read gives end of file, or the write fails.
                    if recv(socket, &probe, 1, Int32(MSG_DONTWAIT)) == 0 || send(socket, &byte, 1, Int32(MSG_NOSIGNAL)) < 0 {
                        return continuation.resume(returning: index)
                    }
                    usleep(100_000)
                }
                continuation.resume(returning: nil)
            }
        }
    }

    /// Opens a connection and sends a `GET` of `path` on it; the caller reads or closes the socket.
    func sendRequest(_ path: String) -> Int32? {
        let (socket, connected) = connect()
        let head = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard connected, Glibc.send(socket, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else {
            close(socket)
            return nil
        }
        return socket
    }

    /// Whether a TCP connection to the server's port is refused now.
    func refusesConnections() -> Bool {
        let (socket, connected) = connect()
        let refused = !connected && errno == ECONNREFUSED
        close(socket)
        return refused
    }

    /// A blocking TCP socket and whether it connected to the server's port (`errno` says why not).
    private func connect() -> (socket: Int32, connected: Bool) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard let port = UInt16(base.split(separator: ":").last ?? "") else { return (socket, false) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return (socket, result == 0)
    }

    /// An unsigned path for `source` with `options`: `/_/options/plain/source[@ext]`.
    static func path(_ source: String, _ options: [String] = [], extension ext: String? = nil) -> String {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
        return "/_/" + (options.isEmpty ? "" : options.joined(separator: "/") + "/") + "plain/" + encoded + (ext.map { "@" + $0 } ?? "")
    }
}
