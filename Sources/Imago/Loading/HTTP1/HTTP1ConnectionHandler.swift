// Built with the `HTTPClientLoader` trait (on by default): AsyncHTTPClient, SwiftNIO, BoringSSL.
#if HTTPClientLoader

    import NIOCore
    import NIOHTTP1

    /// The last handler of a client connection's pipeline: runs one ``HTTP1Exchange`` at a time
    /// (writes its request, hands the response over, watches the time without bytes), and closes
    /// the connection on any failure, so a connection that goes back to the pool is always clean.
    /// Lives on its event loop; the client reaches it through `NIOLoopBound`.
    final class HTTP1ConnectionHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        /// An exchange that failed, and whether its response had begun (when it had not, on a reused
        /// connection, the server closed it while idle and the request may be sent again).
        struct Failure: Error {
            var error: any Error
            var responseBegan: Bool
        }

        private struct Running {
            var exchange: HTTP1Exchange
            var promise: EventLoopPromise<HTTP1ExchangeOutcome>
            var bodyUse: HTTP1Exchange.BodyUse?
            var discarded = 0
            var keepAlive = true
            var timer: Scheduled<Void>?
        }

        private var context: ChannelHandlerContext?
        private var running: Running?
        private var isClosed = false
        /// What closed the connection while no exchange ran (a failed TLS handshake, say): the
        /// error of an exchange started on it after.
        private var closedBy: (any Error)?
        /// When the running exchange last read a byte (or started), on the event loop's clock.
        private var lastRead = NIODeadline.uptimeNanoseconds(0)

        /// A handler closing its connection after `idleTimeout` unused in a pool.
        init(idleTimeout: TimeAmount = .seconds(60)) {
            self.idleTimeout = idleTimeout
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
        }

        /// Sends `exchange`'s request; `promise` completes when its response has ended or failed.
        func start(_ exchange: HTTP1Exchange, promise: EventLoopPromise<HTTP1ExchangeOutcome>) {
            guard let context, !isClosed, running == nil else {
                promise.fail(Failure(error: closedBy ?? HTTP1ExchangeError.closed(afterHead: false), responseBegan: false))
                return
            }
            stopIdleClose()
            running = Running(exchange: exchange, promise: promise)
            lastRead = context.eventLoop.now
            scheduleTimeout(context: context, at: lastRead + exchange.timeoutWithoutBytes)
            context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
            if let body = exchange.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        /// Stops the exchange `promise` belongs to (its task was cancelled) and closes the
        /// connection; nothing when that exchange has already ended.
        func cancel(_ promise: EventLoopPromise<HTTP1ExchangeOutcome>) {
            guard running?.promise.futureResult === promise.futureResult else { return }
            fail(HTTP1ExchangeError.cancelled)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard let current = running else {
                // A response nobody asked for: the connection cannot be trusted with the next request.
                close()
                return
            }
            switch unwrapInboundIn(data) {
            case .head(let head):
                do {
                    let use = try current.exchange.onHead(head)
                    running?.bodyUse = use
                    running?.keepAlive = head.isKeepAlive
                } catch {
                    fail(error)
                }
            case .body(let buffer):
                switch current.bodyUse {
                case .deliver:
                    do { try current.exchange.onBody(buffer) } catch { fail(error) }
                case .discard:
                    let discarded = current.discarded + buffer.readableBytes
                    running?.discarded = discarded
                    if discarded > HTTP1Exchange.maxDiscardedBytes {
                        // Not worth reading to keep the connection: closed, and the exchange done.
                        takeRunning()
                        close()
                        current.promise.succeed(HTTP1ExchangeOutcome(connectionReusable: false))
                    }
                case nil:
                    fail(HTTP1ExchangeError.closed(afterHead: false))
                }
            case .end:
                takeRunning()
                if current.keepAlive {
                    scheduleIdleClose(context: context)
                } else {
                    close()
                }
                current.promise.succeed(HTTP1ExchangeOutcome(connectionReusable: current.keepAlive && !isClosed))
            }
        }

        /// Every read from the socket, whether or not the decoder made a whole part of it (a head
        /// arriving a few bytes at a time is not time without bytes).
        func channelReadComplete(context: ChannelHandlerContext) {
            lastRead = context.eventLoop.now
            context.fireChannelReadComplete()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if running == nil, closedBy == nil { closedBy = error }
            fail(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            isClosed = true
            stopIdleClose()
            fail(HTTP1ExchangeError.closed(afterHead: running?.bodyUse != nil))
            context.fireChannelInactive()
        }

        /// Ends the running exchange, if any, with `error`, and closes the connection.
        private func fail(_ error: any Error) {
            let current = takeRunning()
            close()
            current?.promise.fail(Failure(error: error, responseBegan: current?.bodyUse != nil))
        }

        /// The running exchange, now ended here: no longer running, its timer stopped.
        @discardableResult
        private func takeRunning() -> Running? {
            let current = running
            running = nil
            current?.timer?.cancel()
            return current
        }

        private func close() {
            guard !isClosed else { return }
            isClosed = true
            stopIdleClose()
            context?.close(promise: nil)
        }

        private func stopIdleClose() {
            idleTimer?.cancel()
            idleTimer = nil
        }

        /// A connection left idle this long is closed (servers close theirs too; this one would
        /// otherwise hold a socket for a pool that may never need it again).
        private let idleTimeout: TimeAmount
        private var idleTimer: Scheduled<Void>?

        private func scheduleIdleClose(context: ChannelHandlerContext) {
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            idleTimer = context.eventLoop.scheduleTask(in: idleTimeout) {
                loopBound.value.close()
            }
        }

        /// Fires at the latest moment a byte may still come; a read since moves it on.
        private func scheduleTimeout(context: ChannelHandlerContext, at deadline: NIODeadline) {
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            running?.timer = context.eventLoop.scheduleTask(deadline: deadline) {
                loopBound.value.timeoutFired()
            }
        }

        private func timeoutFired() {
            guard let current = running, let context else { return }
            let deadline = lastRead + current.exchange.timeoutWithoutBytes
            if deadline <= context.eventLoop.now {
                fail(HTTP1ExchangeError.timedOut)
            } else {
                scheduleTimeout(context: context, at: deadline)
            }
        }
    }

#endif
