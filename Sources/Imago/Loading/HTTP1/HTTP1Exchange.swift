// Built with the `HTTPClientLoader` trait (on by default): AsyncHTTPClient, SwiftNIO, BoringSSL.
#if HTTPClientLoader

    import NIOCore
    import NIOHTTP1

    /// What one request (a GET; a small POST for an object store's token) asks of a connection,
    /// and how its response is handed over: the head first,
    /// which decides whether the body is wanted, then each body chunk as it is read, all on the
    /// connection's event loop (no hop per chunk), then the end.
    struct HTTP1Exchange: Sendable {
        /// What the caller wants done with a response's body, decided on its head.
        enum BodyUse: Sendable {
            /// Each chunk goes to `body`.
            case deliver
            /// Read and dropped (a redirect's short page), so the connection can serve again; past
            /// `HTTP1Exchange.maxDiscardedBytes` the connection is closed instead and the exchange
            /// ends there.
            case discard
        }

        var head: HTTPRequestHead
        /// The request's body, sent whole after the head (its `Content-Length` is the caller's).
        var body: ByteBuffer? = nil
        var timeoutWithoutBytes: TimeAmount
        /// RFC 9218 urgency, 0 (first) to 7 (last), 3 the default: sent as the `priority` header on
        /// HTTP/2, where streams share a connection (on HTTP/1.1 each has its own, and nothing to
        /// order).
        var urgency: Int = 3
        /// Throwing stops the exchange and closes the connection; the error is the exchange's.
        var onHead: @Sendable (HTTPResponseHead) throws -> BodyUse
        var onBody: @Sendable (ByteBuffer) throws -> Void

        /// A redirect page longer than this is not worth reading to keep its connection.
        static let maxDiscardedBytes = 64 * 1024

        /// The urgency of a request of `priority`: `normal` is RFC 9218's default, 3.
        static func urgency(of priority: ImageRequest.Priority) -> Int {
            switch priority {
            case .veryHigh: 1
            case .high: 2
            case .normal: 3
            case .low: 4
            case .veryLow: 5
            }
        }
    }

    /// Why an exchange ended without its response, beside the errors NIO and BoringSSL raise.
    enum HTTP1ExchangeError: Error, Sendable {
        /// No byte arrived for the exchange's `timeoutWithoutBytes`.
        case timedOut
        /// The connection closed before the response ended; `afterHead` when its head had come.
        case closed(afterHead: Bool)
        /// The loading task was cancelled.
        case cancelled
    }

    /// How an exchange ended: whether the connection can carry another.
    struct HTTP1ExchangeOutcome: Sendable {
        var connectionReusable: Bool
    }

#endif
