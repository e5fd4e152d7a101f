import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing

@testable import ImagoServer

/// The event-loop answer for kept variants, on an EmbeddedChannel: a kept `GET` is answered there
/// and never passed on; anything else is passed on untouched; and while a passed-on request is
/// being answered, a later one waits its turn even when its variant is kept.
@Suite("kept variants answered on the event loop")
struct KeptVariantHandlerTests {
    @Test("a kept GET is answered in place with Date and Server; misses, HEAD and Connection: close pass on; order is kept")
    func answersInPlace() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        var configuration = ServerConfiguration()
        configuration.localRoot = root
        // This test is about the handler, not time limits: under TSan, with the whole suite
        // running at once on two cores, making this variant once took 46 s (12 ms alone), past
        // the 30 s default.
        configuration.workTimeout = .seconds(600)
        configuration.sourceTimeout = .seconds(600)
        let service = try ImageService(configuration: configuration)
        let path = "/_/w:30/plain/local:%2F%2F%2Fphoto.jpg@png"
        let made = await service.respond(to: ServiceRequest(path: path))
        #expect(made.status == 200)

        let channel = EmbeddedChannel(handler: KeptVariantHandler(service: service))
        func head(_ path: String, method: HTTPRequest.Method = .get, _ fields: HTTPFields = [:]) -> HTTPRequestPart {
            .head(HTTPRequest(method: method, scheme: nil, authority: "localhost", path: path, headerFields: fields))
        }

        // Kept: answered here, nothing passed on, the request's end swallowed.
        try channel.writeInbound(head(path + "?ignored=1"))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil)
        guard case .head(let response)? = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no response head")
            return
        }
        #expect(response.status.code == 200 && response.headerFields[.contentType] == "image/png")
        #expect(response.headerFields[.date]?.hasSuffix(" GMT") == true && response.headerFields[.server] == ImageServer.serverName)
        #expect(response.headerFields[ImageServer.requestIDField] != nil)
        guard case .body(let body)? = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no body")
            return
        }
        #expect(body == made.body)
        guard case .end? = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no end")
            return
        }

        // Not kept, HEAD, Connection: close, /health: passed on as they came.
        for request in [
            head("/_/w:31/plain/local:%2F%2F%2Fphoto.jpg@png"), head(path, method: .head), head(path, [.connection: "close"]), head("/health"),
        ] {
            try channel.writeInbound(request)
            #expect(try channel.readInbound(as: HTTPRequestPart.self) == request)
            #expect(try channel.readOutbound(as: HTTPResponsePart.self) == nil)
            try channel.writeOutbound(HTTPResponsePart.end(nil))
            _ = try channel.readOutbound(as: HTTPResponsePart.self)
        }

        // While a passed-on request is unanswered, a kept one passes on too (its answer would
        // otherwise overtake); once the first has ended, kept ones are answered here again.
        try channel.writeInbound(head("/_/w:32/plain/local:%2F%2F%2Fphoto.jpg@png"))
        _ = try channel.readInbound(as: HTTPRequestPart.self)
        try channel.writeInbound(head(path))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == head(path))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        _ = try channel.readOutbound(as: HTTPResponsePart.self)
        _ = try channel.readOutbound(as: HTTPResponsePart.self)
        try channel.writeInbound(head(path))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil)
        guard case .head(let again)? = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("not answered in place once the others ended")
            return
        }
        #expect(again.status.code == 200)
        _ = try channel.finish()
    }

    /// In the server's pipeline a kept answer is written below NIO's HTTP encoder, as header lines
    /// made once: it must be the bytes the encoder writes for the same answer (apart from `Date`),
    /// for a 200 and a 304, and the connection's timeouts must see it end.
    @Test("a kept answer written below the encoder is the bytes NIO's encoder writes for it; the next request is awaited")
    func writesWhatTheEncoderWrites() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let service = try Self.photoService(in: root, allowOrigin: "https://example.com")
        let path = "/_/w:30/plain/local:%2F%2F%2Fphoto.jpg@webp"
        let made = await service.respond(to: ServiceRequest(path: path))
        #expect(made.status == 200)
        let etag = try #require(made.headerFields[.eTag])

        for fields in [[("X-Request-Id", "t1")], [("X-Request-Id", "t2"), ("If-None-Match", etag)]] {
            // Counts the response parts that pass between the handlers and the encoder: none should.
            let (server, parts) = try Self.serverChannel(service)
            try await server.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 80)).get()
            let request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\n" + fields.map { "\($0): \($1)\r\n" }.joined() + "\r\n"
            try server.writeInbound(ByteBuffer(string: request))
            #expect(try server.readInbound(as: HTTPRequestPart.self) == nil)
            var written = ByteBuffer()
            while var part = try server.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&part) }

            // The same answer through the handler's other path, encoded by NIO.
            let above = EmbeddedChannel(handler: KeptVariantHandler(service: service))
            var headerFields = HTTPFields()
            for (name, value) in fields { headerFields[HTTPField.Name(name)!] = value }
            try above.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: "localhost", path: path, headerFields: headerFields)))
            let encoder = EmbeddedChannel()
            try encoder.pipeline.syncOperations.addHandlers([HTTPResponseEncoder(), HTTP1ToHTTPServerCodec(secure: false)])
            while let part = try above.readOutbound(as: HTTPResponsePart.self) { try encoder.writeOutbound(part) }
            var expected = ByteBuffer()
            while var part = try encoder.readOutbound(as: ByteBuffer.self) { expected.writeBuffer(&part) }

            func withoutDate(_ buffer: ByteBuffer) -> String {
                String(buffer: buffer).split(separator: "\r\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n")
            }
            #expect(parts.seen == 0)
            #expect(String(buffer: written).contains("\r\nDate: "))
            #expect(withoutDate(written) == withoutDate(expected))
            #expect(String(buffer: written).hasPrefix(fields.count == 1 ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 304 Not Modified\r\n"))
            #expect(String(buffer: written).contains("\r\nX-Request-Id: \(fields[0].1)\r\nAccess-Control-Allow-Origin: https://example.com\r\n"))
            if fields.count == 1 {
                #expect(written.readableBytes == expected.readableBytes)
                #expect(Array(written.readableBytesView.suffix(made.body.readableBytes)) == Array(made.body.readableBytesView))
            }

            // The answer ended for the timeouts too: a second request on the connection is
            // answered the same way, not left waiting behind the first.
            try server.writeInbound(ByteBuffer(string: request))
            var second = ByteBuffer()
            while var part = try server.readOutbound(as: ByteBuffer.self) { second.writeBuffer(&part) }
            #expect(withoutDate(second) == withoutDate(written))
            // Idle past the keep-alive timeout after it: closed, as after any answer.
            #expect(server.isActive)
            server.embeddedEventLoop.advanceTime(by: .seconds(6))
            #expect(!server.isActive)
            _ = try above.finish()
            _ = try encoder.finish()
        }
    }
}

extension KeptVariantHandlerTests {
    /// A field of the request's own that HTTP does not allow as it is (a control character in the
    /// configured CORS origin) is not written raw: the answer takes HTTPTypes' path, which makes it legal.
    @Test("a kept answer whose own fields HTTP does not allow as they are goes through the encoder, legalized")
    func illegalFieldsTakeTheEncoder() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let service = try Self.photoService(in: root, allowOrigin: "https://example.com\u{7}")
        let path = "/_/w:30/plain/local:%2F%2F%2Fphoto.jpg@webp"
        #expect(await service.respond(to: ServiceRequest(path: path)).status == 200)

        let (server, parts) = try Self.serverChannel(service)
        try server.writeInbound(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n"))
        var written = ByteBuffer()
        while var part = try server.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&part) }
        #expect(parts.seen == 3)
        let head = try #require(String(decoding: written.readableBytesView, as: UTF8.self).components(separatedBy: "\r\n\r\n").first)
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.contains("\r\nAccess-Control-Allow-Origin: https://example.com"))
        #expect(!head.contains("\u{7}"))
        _ = try server.finish()
    }
}

extension KeptVariantHandlerTests {
    /// A service over `root` holding the corpus photo, with `allowOrigin` as its CORS origin.
    static func photoService(in root: URL, allowOrigin: String) throws -> ImageService {
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        var configuration = ServerConfiguration()
        configuration.localRoot = root
        configuration.workTimeout = .seconds(600)
        configuration.sourceTimeout = .seconds(600)
        configuration.allowOrigin = allowOrigin
        return try ImageService(configuration: configuration)
    }

    /// The server's pipeline as Hummingbird makes it, with Imago's handlers after it, and a
    /// counter of the response parts that pass between those handlers and NIO's encoder.
    static func serverChannel(_ service: ImageService) throws -> (EmbeddedChannel, ResponsePartsSeen) {
        let server = EmbeddedChannel()
        try server.pipeline.syncOperations.configureHTTPServerPipeline(
            withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false)
        let parts = ResponsePartsSeen()
        let timeouts = ConnectionTimeoutHandler(.init(readRequest: .seconds(5), keepAlive: .seconds(5), writeResponse: .seconds(5)))
        try server.pipeline.syncOperations.addHandlers([HTTP1ToHTTPServerCodec(secure: false), parts, timeouts, KeptVariantHandler(service: service)])
        return (server, parts)
    }
}

/// Counts the HTTP response parts written through it.
final class ResponsePartsSeen: ChannelOutboundHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    var seen = 0

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        seen += 1
        context.write(data, promise: promise)
    }
}
