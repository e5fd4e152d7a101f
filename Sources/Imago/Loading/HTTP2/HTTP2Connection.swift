// Built with the `HTTPClientLoader` trait (on by default): SwiftNIO, BoringSSL, NIOHTTP2.
#if HTTPClientLoader

    import NIOCore
    import NIOHTTP1
    import NIOHTTP2

    /// One HTTP/2 connection to an origin (negotiated with ALPN over TLS), shared by every exchange
    /// to that origin at once: each runs on a stream of its own, through the same
    /// ``HTTP1ConnectionHandler`` an HTTP/1.1 connection uses (NIO's codec makes a stream look like
    /// one), so limits, the time without bytes and cancellation behave alike. Cancelling an
    /// exchange closes its stream (RST_STREAM), not the connection. Once the server says GOAWAY, or
    /// the connection fails, no new stream starts on it.
    final class HTTP2Connection: Sendable {
        let channel: any Channel
        private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
        private let state: Locked<State>

        private struct State {
            var isDraining = false
            var openStreams = 0
            var idleClose: Scheduled<Void>?
        }

        /// Streams the server is asked to allow at once, and how much of one stream's body may be
        /// in flight unread (its flow-control window): a bound per stream, big enough that one
        /// image does not wait for window updates on a long round trip.
        static let streamWindow = 1 << 20
        static let connectionWindow = 8 << 20

        /// Configures `channel` (TLS done, `h2` negotiated) for HTTP/2 and returns its connection.
        /// On the channel's event loop.
        static func configure(_ channel: any Channel, idleTimeout: TimeAmount) throws -> HTTP2Connection {
            var connection = NIOHTTP2Handler.ConnectionConfiguration()
            // No server push: a client of images asks for what it wants.
            connection.initialSettings = nioDefaultSettings + [HTTP2Setting(parameter: .enablePush, value: 0)]
            connection.initialSettings.append(HTTP2Setting(parameter: .initialWindowSize, value: streamWindow))
            connection.targetWindowSize = connectionWindow
            var stream = NIOHTTP2Handler.StreamConfiguration()
            stream.targetWindowSize = streamWindow
            let state = Locked(State())
            let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                mode: .client, connectionConfiguration: connection, streamConfiguration: stream,
                inboundStreamInitializer: { stream in
                    // A stream the server opens (none is asked for): refused.
                    stream.close(promise: nil)
                    return stream.eventLoop.makeSucceededVoidFuture()
                })
            try channel.pipeline.syncOperations.addHandler(GoAwayWatcher(onGoAway: { state.withLock { $0.isDraining = true } }))
            return HTTP2Connection(channel: channel, multiplexer: multiplexer, state: state, idleTimeout: idleTimeout)
        }

        private init(channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, state: Locked<State>, idleTimeout: TimeAmount) {
            self.idleTimeout = idleTimeout
            self.channel = channel
            self.multiplexer = multiplexer
            self.state = state
        }

        /// Whether a new exchange may start on it.
        var isUsable: Bool {
            channel.isActive && !state.withLock { $0.isDraining }
        }

        /// Runs `exchange` on a new stream. A failure to open the stream (the server said GOAWAY,
        /// the connection is gone) is `HTTP2StreamRefused`, so the client tries a new connection.
        /// `exchange` with its urgency as the `priority` header (RFC 9218), unless it has one.
        private static func prioritised(_ exchange: HTTP1Exchange) -> HTTP1Exchange {
            var exchange = exchange
            if !exchange.head.headers.contains(name: "priority") {
                exchange.head.headers.add(name: "priority", value: "u=\(exchange.urgency)")
            }
            return exchange
        }

        func run(_ exchange: HTTP1Exchange) async throws -> HTTP1ExchangeOutcome {
            let exchange = Self.prioritised(exchange)
            let made = Locked<NIOLoopBound<HTTP1ConnectionHandler>?>(nil)
            let stream: any Channel
            do {
                stream = try await multiplexer.createStreamChannel { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
                        let handler = HTTP1ConnectionHandler()
                        try stream.pipeline.syncOperations.addHandler(handler)
                        made.withLock { $0 = NIOLoopBound(handler, eventLoop: stream.eventLoop) }
                    }
                }.get()
            } catch {
                state.withLock { $0.isDraining = true }
                throw HTTP2StreamRefused(underlying: error)
            }
            guard let handler = made.withLock({ $0 }) else { throw HTTP2StreamRefused(underlying: ChannelError.inappropriateOperationForState) }
            streamOpened()
            defer { streamClosed() }
            let promise = stream.eventLoop.makePromise(of: HTTP1ExchangeOutcome.self)
            stream.eventLoop.execute { handler.value.start(exchange, promise: promise) }
            do {
                let outcome = try await withTaskCancellationHandler {
                    try await promise.futureResult.get()
                } onCancel: {
                    stream.eventLoop.execute { handler.value.cancel(promise) }
                }
                // The stream ended with its response; closing it is a no-op then, a reset otherwise.
                stream.close(promise: nil)
                return outcome
            } catch let failure as HTTP1ConnectionHandler.Failure {
                // Ended before any response (GOAWAY past this stream, REFUSED_STREAM): another
                // connection may take it.
                if !failure.responseBegan, Self.isRefusal(failure.error) {
                    state.withLock { $0.isDraining = true }
                    throw HTTP2StreamRefused(underlying: failure.error)
                }
                throw failure.error
            }
        }

        /// Errors that end a stream before its response: refused, reset (the streams past a
        /// GOAWAY's last one are closed so) or cut with the connection. The request is a GET that
        /// had no answer: it may go once more on another connection.
        private static func isRefusal(_ error: any Error) -> Bool {
            if error is NIOHTTP2Errors.StreamClosed { return true }
            if case .closed(afterHead: false) = error as? HTTP1ExchangeError { return true }
            return false
        }

        /// Closes the connection when no stream has run on it for this long.
        private let idleTimeout: TimeAmount

        private func streamOpened() {
            state.withLock { state in
                state.openStreams += 1
                state.idleClose?.cancel()
                state.idleClose = nil
            }
        }

        private func streamClosed() {
            let channel = channel
            state.withLock { state in
                state.openStreams -= 1
                guard state.openStreams == 0 else { return }
                state.idleClose = channel.eventLoop.scheduleTask(in: idleTimeout) { channel.close(promise: nil) }
            }
        }

        /// Closes the connection; running streams fail.
        func close() {
            channel.close(promise: nil)
        }
    }

    /// A stream that could not start, or that the server refused before answering: the request
    /// may go again on another connection.
    struct HTTP2StreamRefused: Error {
        var underlying: any Error
    }

    /// Notes the server's GOAWAY on the connection (frames of stream 0 pass the multiplexer down
    /// the connection's pipeline).
    private final class GoAwayWatcher: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame

        private let onGoAway: @Sendable () -> Void

        init(onGoAway: @escaping @Sendable () -> Void) {
            self.onGoAway = onGoAway
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .goAway = unwrapInboundIn(data).payload { onGoAway() }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            onGoAway()
            context.close(promise: nil)
        }
    }

#endif
