import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Streams one HTTP exchange into a ``DataSink`` from AsyncHTTPClient's event loop: the head is
/// checked and each body part appended as it arrives, with no hop to an async iterator per chunk.
/// A redirect's head is not given to the sink; its location is the exchange's result and its body
/// is drained, so the connection can be reused. A sink that refuses (status, size, rate,
/// cancellation) fails the returned future, which stops the request with the sink's error.
final class SinkDelegate: HTTPClientResponseDelegate, Sendable {
    /// How the exchange ended: a redirect to follow, or the body delivered to the sink.
    enum Outcome: Sendable {
        case redirect(location: String)
        case delivered
    }

    private let url: URL
    private let sink: DataSink
    private let outcome = Locked<Outcome?>(nil)

    init(url: URL, sink: DataSink) {
        self.url = url
        self.sink = sink
    }

    func didReceiveHead(task: HTTPClient.Task<Outcome>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let status = Int(head.status.code)
        if (300..<400).contains(status), status != 304, let location = head.headers.first(name: "location") {
            outcome.withLock { $0 = .redirect(location: location) }
            return task.eventLoop.makeSucceededVoidFuture()
        }
        do {
            try sink.receive(
                DataResponse(
                    url: url,
                    statusCode: status,
                    headers: head.headers.map { ($0.name, $0.value) },
                    expectedContentLength: head.headers.first(name: "content-length").flatMap { Int64($0) }
                ))
            outcome.withLock { $0 = .delivered }
            return task.eventLoop.makeSucceededVoidFuture()
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Outcome>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if case .redirect = outcome.withLock({ $0 }) { return task.eventLoop.makeSucceededVoidFuture() }
        do {
            try buffer.withUnsafeReadableBytes { bytes in try sink.receive(bytes) }
            return task.eventLoop.makeSucceededVoidFuture()
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
    }

    func didFinishRequest(task: HTTPClient.Task<Outcome>) throws -> Outcome {
        outcome.withLock { $0 } ?? .delivered
    }
}
