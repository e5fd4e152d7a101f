import Foundation
import Glibc
import HTTPTypes
import Imago
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a `GET` for a variant kept in memory on the connection's event loop, as soon as its
/// head arrives: the request never reaches Hummingbird's router or a task, which would cost
/// several times the lookup. Anything else passes on untouched. NIO's pipelining handler before
/// this one delivers a connection's requests one at a time, and this handler also answers only
/// when no request it passed on is still being answered, so responses keep their order.
///
/// A kept answer's header lines were made once (``PreparedAnswer/lines``): they go to the socket
/// as bytes, below NIO's HTTP encoder, with the status line, the request's own fields, `Date` and
/// `Server` (converting them to `HTTPResponse`, then to NIO's head, then to bytes again was a
/// sixth of a kept answer's time). ``ConnectionTimeoutHandler`` is told by an outbound event.
final class KeptVariantHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let service: ImageService
    /// The body and end of a request answered here, dropped as they come.
    private var answering = false
    /// Requests passed on whose response has not ended.
    private var outstanding = 0
    /// The `Date` header of the current second, as every answer has one.
    private var date = SecondDate()
    /// The HTTP encoder's context: bytes written through it go to the socket as they are. Nil
    /// when there is none, or when each answer closes its connection (which the timeout handler
    /// does on the answer's end as it passes).
    private var below: ChannelHandlerContext?
    private let writesBelow: Bool

    init(service: ImageService) {
        self.service = service
        writesBelow = service.configuration.keepAliveTimeout > .zero
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if writesBelow { below = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        below = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if outstanding == 0, let response = keptResponse(head) {
                answering = true
                write(response, context: context)
                return
            }
            outstanding += 1
            context.fireChannelRead(data)
        case .body:
            if !answering { context.fireChannelRead(data) }
        case .end:
            if answering { answering = false } else { context.fireChannelRead(data) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { outstanding = max(outstanding - 1, 0) }
        context.write(data, promise: promise)
    }

    /// The service's answer when `head` is a plain `GET` of an image path (not `/health` or
    /// `/metrics`, not asking to close the connection) whose variant is kept.
    private func keptResponse(_ head: HTTPRequest) -> ServiceResponse? {
        guard head.method == .get, head.headerFields[.connection].map({ $0.lowercased().contains("close") }) != true else { return nil }
        let request = ServiceRequest(head)
        guard request.path != "/health", request.path != "/metrics" else { return nil }
        return service.keptResponse(to: request)
    }

    private func write(_ response: ServiceResponse, context: ChannelHandlerContext) {
        // The request's own fields (its id, the CORS fields) are written as they are only when
        // HTTP allows them so; otherwise HTTPTypes' path names and legalizes them as before.
        if let below, let lines = response.preparedLines, response.headers.allSatisfy({ Self.isToken($0.name) && HTTPField.isValidValue($0.value) }) {
            return writeBelow(response, lines: lines, context: context, encoder: below)
        }
        var fields = response.headerFields
        fields[.date] = date.now()
        fields[.server] = ImageServer.serverName
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .init(code: response.status), headerFields: fields))), promise: nil)
        if response.body.readableBytes > 0 { context.write(wrapOutboundOut(.body(response.body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// `response` as HTTP/1.1 bytes through the encoder's context; what NIO's encoder would write
    /// for it (the prepared fields carry `Content-Length`, or the status is 304).
    private func writeBelow(_ response: ServiceResponse, lines: ByteBuffer, context: ChannelHandlerContext, encoder: ChannelHandlerContext) {
        context.triggerUserOutboundEvent(ConnectionTimeoutHandler.AnswerWrittenBelow(), promise: nil)
        var head = context.channel.allocator.buffer(capacity: lines.readableBytes + 160)
        switch response.status {
        case 200: head.writeStaticString("HTTP/1.1 200 OK\r\n")
        case 304: head.writeStaticString("HTTP/1.1 304 Not Modified\r\n")
        default:
            let status = HTTPResponseStatus(statusCode: response.status)
            head.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        }
        head.writeImmutableBuffer(lines)
        for field in response.headers {
            head.writeString(field.name)
            head.writeStaticString(": ")
            head.writeString(field.value)
            head.writeStaticString("\r\n")
        }
        head.writeStaticString("Date: ")
        head.writeString(date.now())
        head.writeStaticString("\r\nServer: ")
        head.writeString(ImageServer.serverName)
        head.writeStaticString("\r\n\r\n")
        encoder.write(NIOAny(head), promise: nil)
        if response.body.readableBytes > 0 { encoder.write(NIOAny(response.body), promise: nil) }
        encoder.flush()
    }

    /// Whether `name` is an HTTP token (RFC 9110 §5.6.2), checked without making a field name.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
