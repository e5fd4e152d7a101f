import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A connection's deadlines, as imgproxy's `http.Server` sets them:
/// - the first request's head must have arrived within ``Timeouts/readRequest`` of the
///   connection opening (a client trickling its headers, slowloris, holds it that long at most);
/// - a later one within ``Timeouts/keepAlive`` of the last response ending (an idle kept
///   connection is closed then); a keep-alive of zero closes the connection after each response,
///   which says `Connection: close`;
/// - a response must have been written to the socket within ``Timeouts/writeResponse`` of its
///   head (a client that stops reading is cut off).
/// A request being made is never timed here: the work deadline bounds that.
final class ConnectionTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The three deadlines.
    struct Timeouts: Sendable {
        var readRequest: TimeAmount
        var keepAlive: TimeAmount
        var writeResponse: TimeAmount
    }

    private let timeouts: Timeouts
    /// The one check scheduled, and when: it is not moved per request (a schedule and a cancel
    /// each cost more than the rest of a kept answer's bookkeeping); it looks at the deadlines
    /// when it runs.
    private var check: Scheduled<Void>?
    private var checkAt: NIODeadline?
    /// When the next request head is due; nil while a request is being answered.
    private var headDue: NIODeadline?
    /// When the last answer begun must be on the socket; nil once it was seen to be.
    private var writeDue: NIODeadline?
    /// Heads received less responses ended: requests being answered.
    private var outstanding = 0

    /// The outbound event of an answer written whole to the socket by a handler after this one,
    /// below the HTTP encoder (``KeptVariantHandler``): its head and end as one.
    struct AnswerWrittenBelow {}

    init(_ timeouts: Timeouts) {
        self.timeouts = timeouts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { awaitHead(context, within: timeouts.readRequest) }
    }

    func channelActive(context: ChannelHandlerContext) {
        awaitHead(context, within: timeouts.readRequest)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            outstanding += 1
            headDue = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            writeDue = context.eventLoop.now + timeouts.writeResponse
            ensureCheck(by: writeDue!, context)
            guard timeouts.keepAlive > .zero else {
                head.headerFields[.connection] = "close"
                return context.write(wrapOutboundOut(.head(head)), promise: promise)
            }
        case .end:
            outstanding = max(outstanding - 1, 0)
            guard timeouts.keepAlive > .zero else {
                // One request per connection: closed once the answer is on the socket.
                let written = promise ?? context.eventLoop.makePromise()
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
                return context.write(data, promise: written)
            }
            if outstanding == 0 { awaitHead(context, within: timeouts.keepAlive) }
        case .body:
            break
        }
        context.write(data, promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is AnswerWrittenBelow else { return context.triggerUserOutboundEvent(event, promise: promise) }
        writeDue = context.eventLoop.now + timeouts.writeResponse
        ensureCheck(by: writeDue!, context)
        outstanding = max(outstanding - 1, 0)
        if outstanding == 0 { awaitHead(context, within: timeouts.keepAlive) }
        promise?.succeed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    private func awaitHead(_ context: ChannelHandlerContext, within timeout: TimeAmount) {
        let due = context.eventLoop.now + timeout
        headDue = due
        ensureCheck(by: due, context)
    }

    /// Makes sure a check runs by `deadline`.
    private func ensureCheck(by deadline: NIODeadline, _ context: ChannelHandlerContext) {
        if let checkAt, checkAt <= deadline { return }
        check?.cancel()
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        checkAt = deadline
        check = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.handler.checked(bound.value.context) }
    }

    /// Closes the connection when a deadline has passed; otherwise checks again at the next one.
    /// The write deadline has passed only if bytes of the answer still wait for the socket (no
    /// promise per answer is followed: the kept answers' path is short).
    private func checked(_ context: ChannelHandlerContext) {
        (check, checkAt) = (nil, nil)
        let now = context.eventLoop.now
        if let due = writeDue, due <= now {
            let waiting = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
            if waiting > 0 { return context.close(promise: nil) }
            writeDue = nil
        }
        let deadlines = [headDue, writeDue].compactMap { $0 }
        if deadlines.contains(where: { $0 <= now }) {
            context.close(promise: nil)
        } else if let next = deadlines.min() {
            ensureCheck(by: next, context)
        }
    }

    private func cancel() {
        check?.cancel()
        (check, checkAt) = (nil, nil)
    }
}
