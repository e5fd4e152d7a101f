import Hummingbird
import Imago
import NIOCore

/// Tells the requests a connection carries that it has closed, so that work no client waits for
/// any more stops: a request waiting in the work queue leaves it. One per connection, added to
/// its pipeline by ``ImageListener``; a route handler finds it through its request
/// context (``ServerRequestContext``), which Hummingbird makes from the connection's channel.
final class ConnectionWatch: Sendable {
    private struct State {
        var closed = false
        var nextToken = 0
        var onClose: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())
    /// The open connections' watches by channel: entries leave when their connection closes.
    private static let open = Locked<[ObjectIdentifier: ConnectionWatch]>([:])

    /// The watch of `channel`'s connection, when it has one and it is open.
    static func of(_ channel: any Channel) -> ConnectionWatch? {
        open.withLock { $0[ObjectIdentifier(channel)] }
    }

    /// The value of `body`, run in a task of its own that is cancelled when the connection closes
    /// (or the caller is cancelled) first.
    func whileOpen<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) async -> Value {
        let task = Task { await body() }
        let token = state.withLock { state -> Int? in
            guard !state.closed else { return nil }
            state.nextToken += 1
            state.onClose[state.nextToken] = { task.cancel() }
            return state.nextToken
        }
        if token == nil { task.cancel() }
        defer {
            if let token { _ = state.withLock { $0.onClose.removeValue(forKey: token) } }
        }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    fileprivate func closed() {
        let actions = state.withLock { state in
            state.closed = true
            defer { state.onClose = [:] }
            return Array(state.onClose.values)
        }
        for action in actions { action() }
    }

    /// The channel handler that registers and closes a connection's watch.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        private let watch = ConnectionWatch()

        func handlerAdded(context: ChannelHandlerContext) {
            let id = ObjectIdentifier(context.channel)
            ConnectionWatch.open.withLock { $0[id] = watch }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            close(context)
        }

        func channelInactive(context: ChannelHandlerContext) {
            close(context)
            context.fireChannelInactive()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // The server allows half-closed connections, so a client's close arrives as the end
            // of its input; like Go's net/http (imgproxy's), that is taken as the client gone.
            if let event = event as? ChannelEvent, event == .inputClosed { close(context) }
            context.fireUserInboundEventTriggered(event)
        }

        private func close(_ context: ChannelHandlerContext) {
            let id = ObjectIdentifier(context.channel)
            ConnectionWatch.open.withLock { open in
                if open[id] === watch { open[id] = nil }
            }
            watch.closed()
        }
    }
}

/// Hummingbird's request context with the connection's ``ConnectionWatch``.
public struct ServerRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    let connection: ConnectionWatch?

    /// The context of a request read from `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = ConnectionWatch.of(source.channel)
    }
}
