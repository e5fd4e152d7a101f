// Built with the `HTTPClientLoader` trait (on by default): SwiftNIO, BoringSSL, NIOHTTP2.
#if HTTPClientLoader

    import NIOCore
    import NIOTLS

    /// Waits for the TLS handshake on a new connection and sets the connection up for the protocol
    /// the server chose with ALPN: HTTP/2 for `h2`, HTTP/1.1 otherwise (no ALPN included). Its
    /// promise fails with the handshake's error, or when the connection closes first, so the
    /// client sees why (a bad certificate is a TLS failure, as on HTTP/1.1).
    final class ProtocolNegotiationHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        /// What the connection speaks, once set up.
        enum Negotiated {
            case http1
            case http2(HTTP2Connection)
        }

        private let promise: EventLoopPromise<Negotiated>
        private let setUpHTTP1: (any Channel) throws -> Void
        private let idleTimeout: TimeAmount
        private var isDone = false

        init(promise: EventLoopPromise<Negotiated>, idleTimeout: TimeAmount, setUpHTTP1: @escaping (any Channel) throws -> Void) {
            self.promise = promise
            self.idleTimeout = idleTimeout
            self.setUpHTTP1 = setUpHTTP1
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard !isDone, case .handshakeCompleted(let negotiated) = event as? TLSUserEvent else {
                context.fireUserInboundEventTriggered(event)
                return
            }
            isDone = true
            let channel = context.channel
            do {
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                if negotiated == "h2" {
                    promise.succeed(.http2(try HTTP2Connection.configure(channel, idleTimeout: idleTimeout)))
                } else {
                    try setUpHTTP1(channel)
                    promise.succeed(.http1)
                }
            } catch {
                promise.fail(error)
                channel.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard !isDone else { return context.fireErrorCaught(error) }
            isDone = true
            promise.fail(error)
            context.close(promise: nil)
        }

        /// Taken out of a pipeline torn down before the handshake ended (a connection that never
        /// became active): the promise must still be kept.
        func handlerRemoved(context: ChannelHandlerContext) {
            if !isDone {
                isDone = true
                promise.fail(HTTP1ExchangeError.closed(afterHead: false))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !isDone {
                isDone = true
                promise.fail(HTTP1ExchangeError.closed(afterHead: false))
            }
            context.fireChannelInactive()
        }
    }

#endif
