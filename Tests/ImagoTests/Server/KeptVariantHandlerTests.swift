import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
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
}
