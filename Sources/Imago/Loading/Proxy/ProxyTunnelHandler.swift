// Built with the `HTTPClientLoader` trait (on by default): SwiftNIO.
#if HTTPClientLoader

    import NIOCore

    /// Why a tunnel through an HTTP proxy was not made.
    enum ProxyTunnelError: Error, Sendable {
        /// The proxy answered `CONNECT` with a status that is not a success (407: it wants
        /// credentials; 403: it does not allow the target).
        case refused(status: Int)
        /// The proxy's answer is not an HTTP response, or is longer than any answer to `CONNECT`.
        case invalidResponse
        /// The proxy closed the connection before it answered.
        case closed
        /// The proxy did not answer within the connect timeout.
        case timedOut
    }

    /// Opens a tunnel through an HTTP proxy (RFC 9110 §9.3.6): sends `CONNECT host:port` when the
    /// connection to the proxy is up, reads the proxy's answer (at most 16 KB, within `timeout`),
    /// and on a 2xx removes itself, so what the caller adds next (TLS) speaks to the target. Any
    /// other answer fails `established` and closes the connection.
    final class ProxyTunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        static let maxAnswerBytes = 16 * 1024

        private let target: String
        private let authorization: String?
        private let timeout: TimeAmount
        let established: EventLoopPromise<Void>
        private var answer = ByteBuffer()
        private var isDone = false
        private var timer: Scheduled<Void>?

        /// `target` is `host:port` (an IPv6 address in brackets).
        init(target: String, authorization: String?, timeout: TimeAmount, established: EventLoopPromise<Void>) {
            self.target = target
            self.authorization = authorization
            self.timeout = timeout
            self.established = established
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let promise = established
            // Both stay on the event loop; the task is cancelled when the tunnel ends either way.
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: timeout) {
                guard !handler.value.isDone else { return }
                handler.value.isDone = true
                promise.fail(ProxyTunnelError.timedOut)
                boundContext.value.close(promise: nil)
            }
            if context.channel.isActive { sendConnect(context: context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            sendConnect(context: context)
            context.fireChannelActive()
        }

        private func sendConnect(context: ChannelHandlerContext) {
            var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
            if let authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
            request += "\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !isDone else { return }
            var bytes = unwrapInboundIn(data)
            answer.writeBuffer(&bytes)
            let view = answer.readableBytesView
            guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
                if answer.readableBytes > Self.maxAnswerBytes { finish(context: context, .failure(ProxyTunnelError.invalidResponse)) }
                return
            }
            guard let status = Self.status(String(decoding: view[..<end.lowerBound], as: UTF8.self)) else {
                finish(context: context, .failure(ProxyTunnelError.invalidResponse))
                return
            }
            // A refusal may carry a page (tinyproxy's 407 does); it is not read.
            guard (200..<300).contains(status) else {
                finish(context: context, .failure(ProxyTunnelError.refused(status: status)))
                return
            }
            // After a success nothing may follow: the target speaks only after the client's first TLS bytes.
            guard end.upperBound == view.endIndex else {
                finish(context: context, .failure(ProxyTunnelError.invalidResponse))
                return
            }
            finish(context: context, .success(()))
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !isDone { finish(context: context, .failure(ProxyTunnelError.closed)) }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if !isDone { finish(context: context, .failure(error)) }
        }

        private func finish(context: ChannelHandlerContext, _ result: Result<Void, any Error>) {
            isDone = true
            timer?.cancel()
            switch result {
            case .success:
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                established.succeed()
            case .failure(let error):
                established.fail(error)
                context.close(promise: nil)
            }
        }

        /// The status of `HTTP/1.x NNN reason`, the answer's first line; nil when it is not one.
        static func status(_ head: String) -> Int? {
            let line = head.prefix { $0 != "\r" && $0 != "\n" }
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].count == 3, let status = Int(parts[1]),
                (100...599).contains(status)
            else { return nil }
            return status
        }
    }

#endif
