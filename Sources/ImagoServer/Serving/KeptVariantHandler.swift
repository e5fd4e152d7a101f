import Foundation
import Glibc
import HTTPTypes
import Imago
import NIOCore
import NIOHTTPTypes

/// Answers a `GET` for a variant kept in memory on the connection's event loop, as soon as its
/// head arrives: the request never reaches Hummingbird's router or a task, which would cost
/// several times the lookup. Anything else passes on untouched. NIO's pipelining handler before
/// this one delivers a connection's requests one at a time, and this handler also answers only
/// when no request it passed on is still being answered, so responses keep their order.
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
    /// The `Date` header of the current second, as Hummingbird gives its responses one.
    private var date = (second: 0, text: "")

    init(service: ImageService) {
        self.service = service
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
        var fields = response.headerFields
        fields[.date] = currentDate()
        fields[.server] = ImageServer.serverName
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .init(code: response.status), headerFields: fields))), promise: nil)
        if response.body.readableBytes > 0 { context.write(wrapOutboundOut(.body(response.body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// IMF-fixdate of now, formatted once a second.
    private func currentDate() -> String {
        let now = time(nil)
        if Int(now) != date.second {
            date = (Int(now), HTTPDate.format(Date(timeIntervalSince1970: Double(now))))
        }
        return date.text
    }
}
