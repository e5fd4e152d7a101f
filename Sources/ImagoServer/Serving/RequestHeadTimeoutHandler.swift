import NIOCore
import NIOHTTPTypes

/// Closes a connection whose next request head has not fully arrived within `timeout` of the
/// connection opening or of the last response ending. A client that trickles its headers a byte
/// at a time (slowloris) holds a connection for `timeout` at most, and an idle keep-alive
/// connection is closed after it too; a request being answered is never timed.
final class RequestHeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    /// The one check scheduled; it is not moved per request (a schedule and a cancel each cost
    /// more than the rest of a kept answer's bookkeeping), it looks at ``idleSince`` when it runs.
    private var check: Scheduled<Void>?
    /// When the connection last had no request being answered; nil while one is.
    private var idleSince: NIODeadline?
    /// Heads received less responses ended: requests being answered.
    private var outstanding = 0

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { becameIdle(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        becameIdle(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            outstanding += 1
            idleSince = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            outstanding = max(outstanding - 1, 0)
            if outstanding == 0 { becameIdle(context) }
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    private func becameIdle(_ context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        idleSince = now
        if check == nil { schedule(at: now + timeout, context) }
    }

    private func schedule(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.handler.checked(bound.value.context) }
    }

    /// Closes the connection if it has been idle for the whole timeout; otherwise checks again
    /// when it would have been (a busy connection is checked again once it is idle).
    private func checked(_ context: ChannelHandlerContext) {
        check = nil
        guard let idleSince else { return }
        let deadline = idleSince + timeout
        if NIODeadline.now() >= deadline {
            context.close(promise: nil)
        } else {
            schedule(at: deadline, context)
        }
    }

    private func cancel() {
        check?.cancel()
        check = nil
    }
}
