import Foundation
import ImagoTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import Imago

/// Imago's HTTP/1.1 client against the real origin: connections kept and reused, a kept
/// connection the server dropped, `Connection: close`, and the pool let go with the loader.
@Suite("HTTP/1.1 client: connections", .timeLimit(.minutes(6)))
struct HTTP1ConnectionTests {
    @Test("requests to one origin, one after another, share one keep-alive connection")
    func reuse() async throws {
        try await withOrigin { origin, pipeline in
            for index in 0..<5 { origin.serve(payload(1000 + index), at: "/\(index).jpg") }
            for index in 0..<5 {
                let data = try await pipeline.data(for: ImageRequest(url: origin.url("/\(index).jpg"))).data
                #expect(data.count == 1000 + index)
            }
            #expect(origin.log.connectionsAccepted == 1)
            #expect(Set(origin.log.requests.map(\.connectionID)).count == 1)
        }
    }

    @Test("a kept connection the server closes as the next request arrives: the request goes again, once, on a new connection")
    func staleConnectionRetried() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(1000), at: "/first.jpg")
            let body = payload(2000)
            origin.serve(body, at: "/second.jpg")
            _ = try await pipeline.data(for: ImageRequest(url: origin.url("/first.jpg")))
            let second = try await pipeline.data(for: ImageRequest(url: origin.url("/second.jpg?close_if_reused=1"))).data
            #expect(second == body)
            #expect(origin.log.requests(to: "/second.jpg").count == 2)
            #expect(origin.log.connectionsAccepted == 2)
            #expect(origin.log.abortedResponses == 0)
        }
    }

    @Test("a response saying Connection: close is not kept: the client closes it, and the next request connects anew")
    func connectionClose() async throws {
        try await withOrigin { origin, pipeline in
            var route = TestOrigin.Route(body: payload(1000))
            route.headers = [("Connection", "close")]
            origin.setRoute("/once.jpg", route)
            _ = try await pipeline.data(for: ImageRequest(url: origin.url("/once.jpg")))
            await origin.wait(until: { $0.openConnections == 0 }, giveUpAfter: .seconds(30))
            _ = try await pipeline.data(for: ImageRequest(url: origin.url("/once.jpg?again=1")))
            #expect(origin.log.connectionsAccepted == 2)
        }
    }

    @Test("a pipeline let go closes its idle connections")
    func poolClosedWithLoader() async throws {
        let origin = try await TestOrigin.start()
        origin.serve(payload(1000), at: "/a.jpg")
        var pipeline: ImagePipeline? = ImagePipeline()
        _ = try await pipeline?.data(for: ImageRequest(url: origin.url("/a.jpg")))
        #expect(origin.log.openConnections == 1)
        await pipeline?.waitUntilIdle()
        pipeline = nil
        var closed = false
        origin.onWaitGivenUp { _ in Issue.record("the idle connection stayed open after the pipeline was let go") }
        await origin.wait(until: { $0.openConnections == 0 }, giveUpAfter: .seconds(30))
        closed = origin.log.openConnections == 0
        #expect(closed)
        try await origin.shutdown()
    }
}

/// The connection handler alone, on an embedded channel: what it makes of each response, and the
/// time without bytes on a clock the test moves (no waiting).
@Suite("HTTP/1.1 client: the connection handler")
struct HTTP1ConnectionHandlerTests {
    private final class Received: @unchecked Sendable {
        let lock = NSLock()
        private var _heads: [HTTPResponseHead] = []
        private var _body: [UInt8] = []
        var heads: [HTTPResponseHead] { lock.withLock { _heads } }
        var body: [UInt8] { lock.withLock { _body } }
        func add(_ head: HTTPResponseHead) { lock.withLock { _heads.append(head) } }
        func add(_ buffer: ByteBuffer) { lock.withLock { _body += buffer.readableBytesView } }
    }

    private struct Refused: Error {}

    private static func connected() throws -> (EmbeddedChannel, HTTP1ConnectionHandler) {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHTTPClientHandlers()
        let handler = HTTP1ConnectionHandler()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        return (channel, handler)
    }

    private static func start(
        _ handler: HTTP1ConnectionHandler, on channel: EmbeddedChannel, received: Received,
        use: HTTP1Exchange.BodyUse = .deliver, refuseBody: Bool = false
    ) -> EventLoopFuture<HTTP1ExchangeOutcome> {
        startExchange(handler, on: channel, received: received, use: use, refuseBody: refuseBody).futureResult
    }

    private static func startExchange(
        _ handler: HTTP1ConnectionHandler, on channel: EmbeddedChannel, received: Received,
        use: HTTP1Exchange.BodyUse = .deliver, refuseBody: Bool = false
    ) -> EventLoopPromise<HTTP1ExchangeOutcome> {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/a.jpg")
        head.headers.add(name: "Host", value: "example.com")
        let exchange = HTTP1Exchange(
            head: head, timeoutWithoutBytes: .seconds(5),
            onHead: { head in
                received.add(head)
                return use
            },
            onBody: { buffer in
                if refuseBody { throw Refused() }
                received.add(buffer)
            })
        let promise = channel.eventLoop.makePromise(of: HTTP1ExchangeOutcome.self)
        handler.start(exchange, promise: promise)
        return promise
    }

    private static func failure(of future: EventLoopFuture<HTTP1ExchangeOutcome>) async -> HTTP1ConnectionHandler.Failure? {
        do {
            _ = try await future.get()
            return nil
        } catch {
            return error as? HTTP1ConnectionHandler.Failure
        }
    }

    @Test("a whole response: the request written, head and body handed over, the connection kept")
    func wholeResponse() async throws {
        let (channel, handler) = try Self.connected()
        let received = Received()
        let future = Self.start(handler, on: channel, received: received)
        let request = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: request).hasPrefix("GET /a.jpg HTTP/1.1\r\nHost: example.com\r\n"))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel"))
        #expect(received.heads.first?.status == .ok)
        try channel.writeInbound(ByteBuffer(string: "lo"))
        let outcome = try await future.get()
        #expect(outcome.connectionReusable)
        #expect(received.body == Array("hello".utf8))
        #expect(channel.isActive)
    }

    @Test("a second response nobody asked for closes the connection, so it never answers the next request")
    func unaskedResponse() async throws {
        let (channel, handler) = try Self.connected()
        let received = Received()
        let future = Self.start(handler, on: channel, received: received)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno"))
        _ = try await future.get()
        #expect(received.body == Array("ok".utf8))
        #expect(!channel.isActive)
    }

    @Test(
        "Connection: close or HTTP/1.0: handed over, then the connection is closed, not kept",
        arguments: [
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ])
    func notKept(response: String) async throws {
        let (channel, handler) = try Self.connected()
        let received = Received()
        let future = Self.start(handler, on: channel, received: received)
        try channel.writeInbound(ByteBuffer(string: response))
        #expect(try await future.get().connectionReusable == false)
        #expect(received.body == Array("ok".utf8))
        #expect(!channel.isActive)
    }

    @Test("no byte for the time limit: timedOut and closed; a byte within it moves the limit on")
    func timeWithoutBytes() async throws {
        let (channel, handler) = try Self.connected()
        let future = Self.start(handler, on: channel, received: Received())
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let failure = try #require(await Self.failure(of: future))
        guard case .timedOut = failure.error as? HTTP1ExchangeError else {
            Issue.record("expected timedOut, got \(failure.error)")
            return
        }
        #expect(!channel.isActive)
    }

    @Test("the connection closed before the head and after it: each says which, and whether the response began")
    func closedEarly() async throws {
        for afterHead in [false, true] {
            let (channel, handler) = try Self.connected()
            let future = Self.start(handler, on: channel, received: Received())
            if afterHead { try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")) }
            try await channel.close().get()
            let failure = try #require(await Self.failure(of: future))
            #expect(failure.responseBegan == afterHead)
            switch failure.error {
            case HTTP1ExchangeError.closed(let seenHead): #expect(seenHead == afterHead)
            case let error as HTTPParserError: #expect(afterHead && error == .invalidEOFState)
            default: Issue.record("unexpected \(failure.error)")
            }
        }
    }

    @Test("a body the caller refuses ends the exchange with the caller's error and closes the connection")
    func refusedBody() async throws {
        let (channel, handler) = try Self.connected()
        let future = Self.start(handler, on: channel, received: Received(), refuseBody: true)
        _ = try? channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"))
        let failure = try #require(await Self.failure(of: future))
        #expect(failure.error is Refused)
        #expect(!channel.isActive)
    }

    @Test("a redirect's page is dropped and the connection kept; a page past 64 KiB closes it and ends the exchange")
    func discardedPage() async throws {
        let (channel, handler) = try Self.connected()
        let received = Received()
        let short = Self.start(handler, on: channel, received: received, use: .discard)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 4\r\n\r\nmove"))
        #expect(try await short.get().connectionReusable)
        #expect(received.body.isEmpty)

        let long = Self.start(handler, on: channel, received: received, use: .discard)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 1000000\r\n\r\n"))
        try channel.writeInbound(ByteBuffer(repeating: 0x61, count: 70_000))
        #expect(try await long.get().connectionReusable == false)
        #expect(!channel.isActive)
        #expect(received.body.isEmpty)
    }

    @Test("cancelling an exchange fails it with cancelled and closes; a cancel meant for another does nothing; a second start while one runs is refused")
    func cancel() async throws {
        let (channel, handler) = try Self.connected()
        let running = Self.startExchange(handler, on: channel, received: Received())
        let second = Self.start(handler, on: channel, received: Received())
        #expect(await Self.failure(of: second) != nil)
        let other = channel.eventLoop.makePromise(of: HTTP1ExchangeOutcome.self)
        handler.cancel(other)
        #expect(channel.isActive)
        other.succeed(HTTP1ExchangeOutcome(connectionReusable: true))
        handler.cancel(running)
        let failure = try #require(await Self.failure(of: running.futureResult))
        guard case .cancelled = failure.error as? HTTP1ExchangeError else {
            Issue.record("expected cancelled, got \(failure.error)")
            return
        }
        #expect(!channel.isActive)
    }
}
