import Foundation
import Glibc
import HTTPTypes
import ImagoServer
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing

@testable import ImagoServer

/// A connection's deadlines as imgproxy's variables set them: `READ_REQUEST_TIMEOUT` (the first
/// head), `KEEP_ALIVE_TIMEOUT` (the next one; 0: one request per connection),
/// `WRITE_RESPONSE_TIMEOUT` (an answer not yet on the socket). The handler on an embedded channel
/// whose clock the test moves, then the server on real sockets.
@Suite("connection timeouts")
struct ConnectionTimeoutTests {
    static let timeouts = ConnectionTimeoutHandler.Timeouts(readRequest: .seconds(10), keepAlive: .seconds(5), writeResponse: .seconds(3))

    /// An open embedded connection through NIO's HTTP/1.1 codecs (as the server's pipeline has
    /// them) and the handler with `timeouts`.
    static func connection(_ timeouts: ConnectionTimeoutHandler.Timeouts = timeouts) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try channel.pipeline.syncOperations.addHandler(ConnectionTimeoutHandler(timeouts))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        return channel
    }

    static let request = ByteBuffer(string: "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    static let response = HTTPResponsePart.head(HTTPResponse(status: .ok))

    @Test("the first head is due within the read timeout of the connection opening; a request being answered is not timed")
    func firstHead() throws {
        let idle = try Self.connection()
        idle.embeddedEventLoop.advanceTime(by: .milliseconds(9_999))
        #expect(idle.isActive)
        idle.embeddedEventLoop.advanceTime(by: .milliseconds(2))
        #expect(!idle.isActive)
        let answering = try Self.connection()
        try answering.writeInbound(Self.request)
        answering.embeddedEventLoop.advanceTime(by: .seconds(100))
        #expect(answering.isActive)
        _ = try? answering.finish()
    }

    @Test("after an answer the next head is due within the keep-alive timeout, not the read timeout")
    func keepAlive() throws {
        let channel = try Self.connection()
        try channel.writeInbound(Self.request)
        try channel.writeOutbound(Self.response)
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2))
        #expect(!channel.isActive)
    }

    @Test("an answer not on the socket within the write timeout of its head closes the connection; one written in time does not")
    func writeDeadline() throws {
        let stalled = try Self.connection()
        try stalled.writeInbound(Self.request)
        // Written but never flushed: what a client that stops reading leaves behind.
        stalled.write(Self.response, promise: nil)
        stalled.write(HTTPResponsePart.end(nil), promise: nil)
        stalled.embeddedEventLoop.advanceTime(by: .milliseconds(2_999))
        #expect(stalled.isActive)
        stalled.embeddedEventLoop.advanceTime(by: .milliseconds(2))
        #expect(!stalled.isActive)

        let written = try Self.connection()
        try written.writeInbound(Self.request)
        try written.writeOutbound(Self.response)
        try written.writeOutbound(HTTPResponsePart.end(nil))
        written.embeddedEventLoop.advanceTime(by: .milliseconds(4_000))
        #expect(written.isActive, "the write deadline met; the keep-alive one not yet passed")
        _ = try? written.finish()
    }

    @Test("a keep-alive timeout of zero says Connection: close and closes the connection once the answer is written")
    func noKeepAlive() throws {
        let channel = try Self.connection(.init(readRequest: .seconds(10), keepAlive: .zero, writeResponse: .seconds(3)))
        try channel.writeInbound(Self.request)
        try channel.writeOutbound(Self.response)
        let head = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: head).lowercased().contains("connection: close"))
        #expect(channel.isActive)
        _ = try? channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(!channel.isActive)
    }

    /// Reads from `socket` until the server closes it (true) or 60 s pass (false), with what was read.
    static func readUntilClosed(_ socket: Int32) -> (closed: Bool, text: String) {
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var text = "", buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return (true, text) }
            if count < 0 { return (false, text) }
            text += String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    @Test("on real sockets: IMGPROXY_KEEP_ALIVE_TIMEOUT closes an idle kept connection after its answer; 0 closes it at once with Connection: close")
    func realSockets() async throws {
        let configuration = try ServerSettings.configuration(["IMGPROXY_KEEP_ALIVE_TIMEOUT": "1", "IMGPROXY_READ_REQUEST_TIMEOUT": "30"]).configuration
        #expect(configuration.keepAliveTimeout == .seconds(1) && configuration.requestHeadTimeout == .seconds(30))
        try await withServer({ $0 = configuration }) { server in
            let socket = try #require(server.sendRequest("/health"))
            defer { close(socket) }
            // A blocking read, off Swift's two cooperative threads that the server's handlers need.
            let (closed, text) = await offThePool { Self.readUntilClosed(socket) }
            #expect(closed && text.hasPrefix("HTTP/1.1 200") && text.hasSuffix("ok\n") && !text.lowercased().contains("connection: close"))
        }
        try await withServer({ $0.keepAliveTimeout = .zero }) { server in
            let socket = try #require(server.sendRequest("/health"))
            defer { close(socket) }
            // A blocking read, off Swift's two cooperative threads that the server's handlers need.
            let (closed, text) = await offThePool { Self.readUntilClosed(socket) }
            #expect(closed && text.hasPrefix("HTTP/1.1 200") && text.lowercased().contains("connection: close"))
        }
        let settings = try ServerSettings.configuration([
            "IMGPROXY_WRITE_RESPONSE_TIMEOUT": "7", "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT": "90", "IMGPROXY_KEEP_ALIVE_TIMEOUT": "0",
        ]).configuration
        #expect(settings.writeResponseTimeout == .seconds(7) && settings.sourceKeepAliveTimeout == .seconds(90) && settings.keepAliveTimeout == .zero)
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_WRITE_RESPONSE_TIMEOUT": "0"]) }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_KEEP_ALIVE_TIMEOUT": "-1"]) }
    }
}
