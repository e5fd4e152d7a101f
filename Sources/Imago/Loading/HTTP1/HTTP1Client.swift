// Built with the `HTTPClientLoader` trait (on by default): AsyncHTTPClient, SwiftNIO, BoringSSL.
#if HTTPClientLoader

    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2
    import NIOPosix
    import NIOSOCKS
    import NIOSSL

    /// Imago's own HTTP client: GET only (and a small POST), the response handed over on the event
    /// loop as it is read. Over TLS it offers HTTP/2 with ALPN: a server that takes it gets one
    /// connection per origin carrying every exchange at once (``HTTP2Connection``); otherwise, and
    /// for plain http, a pool of HTTP/1.1 keep-alive connections per origin. It does what the
    /// loader needs and no more (redirects, limits and the address policy are the loader's), which
    /// makes a transfer cost about half the CPU it costs through AsyncHTTPClient (`imago-bench
    /// throughput`).
    final class HTTP1Client: Sendable {
        /// Where a connection goes; connections are shared only between requests with the same one.
        struct Origin: Hashable, Sendable {
            var isTLS: Bool
            var host: String
            var port: Int
            /// The address to connect to, already checked against an address policy; nil to let
            /// the system resolve `host`.
            var address: String?
            var allowInvalidCertificates: Bool
            /// The HTTP proxy the connection goes through: a `CONNECT` tunnel for https, requests
            /// in absolute form for http; nil to connect directly.
            var proxy: HTTPProxy? = nil
            /// Certificate authorities trusted besides the system's.
            var trustRoots = TrustRoots.none
            /// The most connecting (and a proxy's tunnel) may take.
            var connectTimeout = HTTP1Client.connectTimeout
        }

        /// A connection's channel and its handler, reachable from any thread.
        private struct Connection: Sendable {
            var channel: any Channel
            var handler: NIOLoopBound<HTTP1ConnectionHandler>
        }

        private struct Pool {
            var idle: [Origin: [Connection]] = [:]
            /// The HTTP/2 connection of each origin that speaks it.
            var http2: [Origin: HTTP2Connection] = [:]
            /// A TLS origin's first connection while its protocol is not known: others wait for
            /// it rather than each opening one, as it may carry them all.
            var negotiating: [Origin: EventLoopFuture<HTTP2Connection?>] = [:]
            /// TLS origins that answered with HTTP/1.1: no waiting on their connects.
            var speaksHTTP1: Set<Origin> = []
            var isShutDown = false
        }

        /// Idle connections kept per origin; more are closed as their exchanges end. Above any
        /// usual `maxConcurrentDownloads`, so a busy pipeline does not close and reopen connections
        /// to one host; idle ones close after `idleTimeout` anyway.
        static let maxIdlePerOrigin = 32
        static let connectTimeout = TimeAmount.seconds(10)

        private let group: any EventLoopGroup
        /// How long a connection is kept open unused.
        private let idleTimeout: TimeAmount
        private let pool = Locked(Pool())
        /// TLS contexts by what they trust: the certificate policy and the extra roots.
        private struct TrustKey: Hashable {
            var allowInvalidCertificates: Bool
            var roots: TrustRoots
        }

        private let tlsContexts = Locked<[TrustKey: NIOSSLContext]>([:])

        init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, idleTimeout: TimeAmount = .seconds(60)) {
            self.group = group
            self.idleTimeout = idleTimeout
        }

        deinit {
            let (idle, http2) = pool.withLock { ($0.idle.values.flatMap { $0 }, Array($0.http2.values)) }
            for connection in idle { connection.channel.close(promise: nil) }
            for connection in http2 { connection.close() }
        }

        /// Runs `exchange` to `origin`: on the origin's HTTP/2 connection, or an idle HTTP/1.1 one,
        /// else on a new one. A reused connection that fails before its response begins (closed by
        /// the server while idle, or an HTTP/2 stream refused: GOAWAY) makes the request go again
        /// on a new connection (a GET can be repeated); a refused stream, up to
        /// ``maxStreamRefusals`` times.
        func run(_ exchange: HTTP1Exchange, to origin: Origin) async throws -> HTTP1ExchangeOutcome {
            if let http2 = usableHTTP2(origin) {
                do {
                    return try await http2.run(exchange)
                } catch is HTTP2StreamRefused {
                    forget(http2, of: origin)
                }
            } else if let idle = takeIdle(origin) {
                do {
                    return try await run(exchange, on: idle, origin: origin)
                } catch let failure as HTTP1ConnectionHandler.Failure where !failure.responseBegan && Self.isStale(failure.error) {
                    // Fall through to a new connection.
                } catch let failure as HTTP1ConnectionHandler.Failure {
                    throw failure.error
                }
            }
            // A stream refused on the connection joined here (its server said GOAWAY before this
            // stream, as one does when its requests per connection are spent while others share
            // it) was never processed: it goes on the next connection, a few times at most.
            var refusals = 0
            while true {
                switch try await connectOrJoin(origin) {
                case .http2(let http2):
                    do {
                        return try await http2.run(exchange)
                    } catch let refused as HTTP2StreamRefused {
                        forget(http2, of: origin)
                        refusals += 1
                        if refusals >= Self.maxStreamRefusals { throw refused.underlying }
                    }
                case .http1(let connection):
                    do {
                        return try await run(exchange, on: connection, origin: origin)
                    } catch let failure as HTTP1ConnectionHandler.Failure {
                        throw failure.error
                    }
                }
            }
        }

        /// How many new or joined HTTP/2 connections may refuse one request's stream before its
        /// error is the request's.
        static let maxStreamRefusals = 4

        /// A new connection's protocol, set up.
        private enum NewConnection {
            case http1(Connection)
            case http2(HTTP2Connection)
        }

        /// The origin's HTTP/2 connection when one is being made (it will carry this exchange
        /// too), else a new connection. A TLS origin's first connect is shared this way; once an
        /// origin is known to answer HTTP/1.1, connects no longer wait.
        private func connectOrJoin(_ origin: Origin) async throws -> NewConnection {
            enum Plan {
                case join(EventLoopFuture<HTTP2Connection?>)
                case lead(EventLoopPromise<HTTP2Connection?>?)
            }
            let plan = pool.withLock { pool -> Plan in
                if let pending = pool.negotiating[origin] { return .join(pending) }
                guard origin.isTLS, !pool.speaksHTTP1.contains(origin) else { return .lead(nil) }
                let promise = group.next().makePromise(of: HTTP2Connection?.self)
                pool.negotiating[origin] = promise.futureResult
                return .lead(promise)
            }
            switch plan {
            case .join(let pending):
                if let http2 = try? await pending.get(), http2.isUsable { return .http2(http2) }
                return try await connect(origin)
            case .lead(let promise):
                do {
                    let made = try await connect(origin)
                    pool.withLock { pool in
                        pool.negotiating[origin] = nil
                        switch made {
                        case .http2(let http2) where !pool.isShutDown: pool.http2[origin] = http2
                        case .http1 where origin.isTLS: pool.speaksHTTP1.insert(origin)
                        default: break
                        }
                    }
                    if case .http2(let http2) = made { promise?.succeed(http2) } else { promise?.succeed(nil) }
                    return made
                } catch {
                    pool.withLock { $0.negotiating[origin] = nil }
                    promise?.succeed(nil)
                    throw error
                }
            }
        }

        private func usableHTTP2(_ origin: Origin) -> HTTP2Connection? {
            pool.withLock { pool in
                guard let http2 = pool.http2[origin] else { return nil }
                if http2.isUsable { return http2 }
                pool.http2[origin] = nil
                return nil
            }
        }

        /// Drops `http2` from the pool (refused a stream: GOAWAY, or gone); its running streams end
        /// as the server lets them.
        private func forget(_ http2: HTTP2Connection, of origin: Origin) {
            pool.withLock { pool in
                if pool.http2[origin] === http2 { pool.http2[origin] = nil }
            }
        }

        /// Connections kept open between exchanges: idle HTTP/1.1 ones and each origin's HTTP/2 one.
        var keptConnectionCount: Int {
            pool.withLock { pool in pool.idle.values.reduce(0) { $0 + $1.count } + pool.http2.count }
        }

        /// Closes the idle connections; running exchanges finish, and their connections close after
        /// (an HTTP/2 connection once its streams have ended and it has idled).
        func shutdown() {
            let idle = pool.withLock { pool in
                pool.isShutDown = true
                defer {
                    pool.idle = [:]
                    pool.http2 = [:]
                }
                return pool.idle.values.flatMap { $0 }
            }
            for connection in idle { connection.channel.close(promise: nil) }
        }

        private func run(_ exchange: HTTP1Exchange, on connection: Connection, origin: Origin) async throws -> HTTP1ExchangeOutcome {
            let promise = connection.channel.eventLoop.makePromise(of: HTTP1ExchangeOutcome.self)
            let handler = connection.handler
            connection.channel.eventLoop.execute { handler.value.start(exchange, promise: promise) }
            let outcome = try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                connection.channel.eventLoop.execute { handler.value.cancel(promise) }
            }
            if outcome.connectionReusable { release(connection, to: origin) }
            return outcome
        }

        /// Errors that say the connection was already gone when the request went out.
        private static func isStale(_ error: any Error) -> Bool {
            if case .closed(afterHead: false) = error as? HTTP1ExchangeError { return true }
            if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
            return false
        }

        private func takeIdle(_ origin: Origin) -> Connection? {
            pool.withLock { pool in
                while let connection = pool.idle[origin]?.popLast() {
                    if connection.channel.isActive { return connection }
                }
                return nil
            }
        }

        private func release(_ connection: Connection, to origin: Origin) {
            let kept = pool.withLock { pool in
                guard !pool.isShutDown, connection.channel.isActive, pool.idle[origin, default: []].count < Self.maxIdlePerOrigin else {
                    return false
                }
                pool.idle[origin, default: []].append(connection)
                return true
            }
            if !kept { connection.channel.close(promise: nil) }
        }

        /// Forgets a connection that closed while idle.
        private func remove(_ channel: any Channel, of origin: Origin) {
            pool.withLock { pool in
                pool.idle[origin]?.removeAll { $0.channel === channel }
                if pool.idle[origin]?.isEmpty == true { pool.idle[origin] = nil }
            }
        }

        private func connect(_ origin: Origin) async throws -> NewConnection {
            let tls = try origin.isTLS ? tlsContext(allowInvalidCertificates: origin.allowInvalidCertificates, roots: origin.trustRoots) : nil
            // SNI carries names only; for an address, the certificate is checked against the peer's.
            let serverHostname = IPAddress(origin.host) == nil ? origin.host : nil
            // https through a proxy: a tunnel first, then TLS and HTTP inside it.
            let tunnelTarget =
                origin.proxy?.kind == .http && origin.isTLS ? (origin.host.contains(":") ? "[\(origin.host)]" : origin.host) + ":\(origin.port)" : nil
            // Through SOCKS, every connection is a tunnel; the handler holds what is written until
            // the proxy has connected, so TLS and HTTP are set up at once behind it.
            let socksTarget: SOCKSAddress? =
                origin.proxy?.kind == .socks5
                ? try origin.address.map { .address(try SocketAddress(ipAddress: $0, port: origin.port)) } ?? .domain(origin.host, port: origin.port)
                : nil
            // The handler is kept from the initializer: looked up after the connect, it could already
            // be gone with a connection closed at once (a refused handshake), and its error with it.
            let made = Locked<NIOLoopBound<HTTP1ConnectionHandler>?>(nil)
            let tunnel = Locked<EventLoopFuture<Void>?>(nil)
            let negotiated = Locked<EventLoopFuture<ProtocolNegotiationHandler.Negotiated>?>(nil)
            @Sendable func addHTTP1Handlers(_ channel: any Channel) throws {
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                let handler = HTTP1ConnectionHandler(idleTimeout: idleTimeout)
                try channel.pipeline.syncOperations.addHandler(handler)
                made.withLock { $0 = NIOLoopBound(handler, eventLoop: channel.eventLoop) }
            }
            @Sendable func addHTTPHandlers(_ channel: any Channel) throws {
                guard let tls else { return try addHTTP1Handlers(channel) }
                // The protocol is known once the handshake is done: ALPN may choose HTTP/2.
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                let promise = channel.eventLoop.makePromise(of: ProtocolNegotiationHandler.Negotiated.self)
                negotiated.withLock { $0 = promise.futureResult }
                try channel.pipeline.syncOperations.addHandler(
                    ProtocolNegotiationHandler(promise: promise, idleTimeout: idleTimeout, setUpHTTP1: addHTTP1Handlers))
            }
            let bootstrap = ClientBootstrap(group: group)
                .connectTimeout(origin.connectTimeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tunnelTarget, let proxy = origin.proxy {
                            let established = channel.eventLoop.makePromise(of: Void.self)
                            tunnel.withLock { $0 = established.futureResult }
                            try channel.pipeline.syncOperations.addHandler(
                                ProxyTunnelHandler(
                                    target: tunnelTarget, authorization: proxy.authorization, timeout: origin.connectTimeout, established: established))
                        } else {
                            if let socksTarget { try channel.pipeline.syncOperations.addHandler(SOCKSClientHandler(targetAddress: socksTarget)) }
                            try addHTTPHandlers(channel)
                        }
                    }
                }
            let channel: any Channel
            if let proxy = origin.proxy {
                channel = try await bootstrap.connect(host: proxy.host, port: proxy.port).get()
            } else if let address = origin.address {
                channel = try await bootstrap.connect(to: SocketAddress(ipAddress: address, port: origin.port)).get()
            } else {
                channel = try await bootstrap.connect(host: origin.host, port: origin.port).get()
            }
            if let established = tunnel.withLock({ $0 }) {
                try await established.get()
                try await channel.eventLoop.submit { try addHTTPHandlers(channel) }.get()
            }
            if let negotiation = negotiated.withLock({ $0 }), case .http2(let http2) = try await negotiation.get() {
                channel.closeFuture.whenComplete { [weak self] _ in self?.forget(http2, of: origin) }
                return .http2(http2)
            }
            channel.closeFuture.whenComplete { [weak self] _ in self?.remove(channel, of: origin) }
            guard let handler = made.withLock({ $0 }) else { throw ChannelError.inappropriateOperationForState }
            return .http1(Connection(channel: channel, handler: handler))
        }

        /// Whether `name` is a hashed name in an OpenSSL certificate directory (`c_rehash`): eight
        /// hex digits, a dot, a number; CRLs (`.r0`) and other files are not certificates to trust.
        static func isHashedName(_ name: String) -> Bool {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit) && !parts[1].isEmpty
                && parts[1].allSatisfy { $0.isASCII && $0.isNumber }
        }

        /// Certificates a directory holds at most: its files are read when the context is made.
        static let maxDirectoryCertificates = 10_000

        /// The certificates of a PEM file, or of the hashed entries of a directory as OpenSSL reads
        /// one (NIOSSL takes files only). A directory entry that is not PEM is passed over, as
        /// OpenSSL's lookup passes it over; a file that is not is an error.
        static func certificates(at path: String) throws -> [NIOSSLCertificate] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return try NIOSSLCertificate.fromPEMFile(path)
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: path).filter(isHashedName).sorted()
            return names.prefix(maxDirectoryCertificates).flatMap { name in
                (try? NIOSSLCertificate.fromPEMFile(path + "/" + name)) ?? []
            }
        }

        /// One TLS context per certificate policy and set of extra roots, made on first use (it
        /// loads the system's roots, then the extra ones). Roots that cannot be loaded fail the
        /// connection as a TLS failure that names them.
        private func tlsContext(allowInvalidCertificates: Bool, roots: TrustRoots) throws -> NIOSSLContext {
            let key = TrustKey(allowInvalidCertificates: allowInvalidCertificates, roots: roots)
            return try tlsContexts.withLock { contexts in
                if let context = contexts[key] { return context }
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.applicationProtocols = ["h2", "http/1.1"]
                if allowInvalidCertificates { configuration.certificateVerification = .none }
                let context: NIOSSLContext
                do {
                    configuration.additionalTrustRoots = try roots.paths.map { .certificates(try Self.certificates(at: $0)) }
                    context = try NIOSSLContext(configuration: configuration)
                } catch {
                    var failure = ImagoError(.tlsFailure, url: nil, underlying: error)
                    failure.reason = "the trust roots cannot be loaded: \(roots.paths.joined(separator: ", "))"
                    throw failure
                }
                contexts[key] = context
                return context
            }
        }
    }

#endif
