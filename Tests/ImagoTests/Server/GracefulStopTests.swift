import AsyncHTTPClient
import Foundation
import Glibc
import Imago
import ImagoTestSupport
import Testing

/// `imago serve` stopping as imgproxy does on SIGTERM (`IMGPROXY_GRACEFUL_STOP_TIMEOUT`): the
/// listening socket closed at once, the requests in flight answered, then exit 0; past the
/// timeout, what is still in flight is cut off and it exits 0 all the same.
@Suite("imago serve's graceful stop", .timeLimit(.minutes(6)))
struct GracefulStopTests {
    /// `imago serve` on port 0 with imgproxy's `variables`; its port and its standard output.
    static func start(_ variables: [String: String]) async throws -> (process: Process, port: Int, output: Pipe) {
        let process = Process()
        process.executableURL = ServeCommandTests.executable
        process.arguments = ["serve", "--listen", "127.0.0.1:0"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IMAGO_") && !$0.key.hasPrefix("IMGPROXY_") }
            .merging(variables.merging(["IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1"]) { $1 }) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, await ServeCommandTests.port(from: output), output)
    }

    /// Returns once `output` has carried a line containing `text` (false if it ended first).
    static func line(containing text: String, in output: Pipe) async -> Bool {
        await offThePool {
            var seen = ""
            while !seen.contains(text) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return false }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            return true
        }
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is refused.
    static func refused(_ port: Int) -> Bool {
        let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(handle) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == -1 && errno == ECONNREFUSED
    }

    /// Three requests for sources the origin holds at the gate `gate`, started on `client`.
    static func slowRequests(_ origin: TestOrigin, port: Int, gate: String, client: HTTPClient) throws -> [Task<Int, any Error>] {
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        return (0..<3).map { index in
            var route = TestOrigin.Route(body: photo)
            route.gate = gate
            origin.setRoute("/slow\(index).jpg", route)
            let source = origin.url("/slow\(index).jpg").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/_/w:\(20 + index)/plain/" + source)
            return Task {
                let response = try await client.execute(request, timeout: .seconds(120))
                let body = try await response.body.collect(upTo: 16 << 20)
                return body.readableBytes > 0 ? Int(response.status.code) : 0
            }
        }
    }

    @Test("SIGTERM: new connections are refused at once, three slow requests in flight are answered 200, then the process exits 0")
    func finishesInFlight() async throws {
        let origin = try await TestOrigin.start()
        // IMGPROXY_TIMEOUT 100: the requests wait at the gate until released, however long this
        // test waits its turn on a busy machine (the defaults, 30 s in all and 20 s for the source, ended them first there).
        let (process, port, output) = try await Self.start([
            "IMGPROXY_GRACEFUL_STOP_TIMEOUT": "100", "IMGPROXY_TIMEOUT": "100", "IMGPROXY_DOWNLOAD_TIMEOUT": "100",
        ])
        try #require(port > 0)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let answers = try Self.slowRequests(origin, port: port, gate: "stop", client: client)
        await origin.wait { $0.requests.count >= 3 }
        kill(process.processIdentifier, SIGTERM)
        #expect(await Self.line(containing: "stopped listening", in: output))
        #expect(Self.refused(port), "a connection after the signal is refused")
        #expect(process.isRunning, "still running while requests are in flight")
        origin.release("stop")
        for answer in answers { #expect(try await answer.value == 200) }
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("past GRACEFUL_STOP_TIMEOUT the requests still in flight are cut off and the process exits 0")
    func cutsOffAfterTimeout() async throws {
        let origin = try await TestOrigin.start()
        let (process, port, output) = try await Self.start([
            "IMGPROXY_GRACEFUL_STOP_TIMEOUT": "1", "IMGPROXY_TIMEOUT": "100", "IMGPROXY_DOWNLOAD_TIMEOUT": "100",
        ])
        try #require(port > 0)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let answers = try Self.slowRequests(origin, port: port, gate: "never", client: client)
        await origin.wait { $0.requests.count >= 3 }
        kill(process.processIdentifier, SIGTERM)
        #expect(await Self.line(containing: "stopped listening", in: output))
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        for answer in answers {
            // Cut off: the connection closed before an image was answered.
            let status = try? await answer.value
            #expect(status != 200)
        }
        try await client.shutdown()
        try await origin.shutdown()
    }
}
