import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import Imago

/// Bytes a server might send, through the HTTP/1.1 client's response decoder and connection
/// handler into a DataSink, as one GET's answer. The first byte picks where the bytes are cut in
/// two reads, whether a redirect's page is dropped, and whether the time without bytes runs out.
/// Every input must end the exchange (answered, failed or timed out): one left pending is a finding.
enum HTTPResponseFeed {
    private final class Ended: @unchecked Sendable {
        var value = false
    }

    static func run(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let body = bytes.dropFirst()
        let channel = EmbeddedChannel()
        let handler = HTTP1ConnectionHandler()
        guard (try? channel.pipeline.syncOperations.addHTTPClientHandlers()) != nil,
            (try? channel.pipeline.syncOperations.addHandler(handler)) != nil,
            (try? channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()) != nil,
            let url = URL(string: "http://origin.test/a.jpg")
        else { return }
        let sink = DataSink(url: url, maxSize: 1 << 20)
        let kept = ResumableData(data: Data(repeating: 0x4B, count: 100), validator: "\"v1\"")
        if first & 4 != 0, let kept { sink.resume(from: kept) }
        let dropsRedirects = first & 1 != 0
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/a.jpg")
        head.headers.add(name: "Host", value: "origin.test")
        let exchange = HTTP1Exchange(
            head: head, timeoutWithoutBytes: .seconds(5),
            onHead: { response in
                if dropsRedirects, (300..<400).contains(response.status.code) { return .discard }
                try sink.receive(HTTPDataLoader.head(url: url, status: Int(response.status.code), headers: response.headers))
                return .deliver
            },
            onBody: { buffer in try buffer.withUnsafeReadableBytes { bytes in try sink.receive(bytes) } })
        let promise = channel.eventLoop.makePromise(of: HTTP1ExchangeOutcome.self)
        let ended = Ended()
        promise.futureResult.whenComplete { _ in ended.value = true }
        handler.start(exchange, promise: promise)

        let cut = body.isEmpty ? 0 : Int(first >> 3) % body.count
        for part in [body.prefix(cut), body.dropFirst(cut)] where channel.isActive && !part.isEmpty {
            _ = try? channel.writeInbound(ByteBuffer(bytes: part))
        }
        if first & 2 != 0 { channel.embeddedEventLoop.advanceTime(by: .seconds(6)) }
        if !ended.value { _ = try? channel.close().wait() }
        if let (response, data) = try? sink.finish(), first & 4 != 0, response.statusCode == 200, let kept, sink.joinedBytes > 0 {
            if !data.starts(with: kept.data) || response.expectedContentLength != Int64(data.count) {
                fatalError("a resumed body that is not the kept bytes and their rest")
            }
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
        if !ended.value { fatalError("the exchange never ended") }
    }
}
