// Built with the `HTTPClientLoader` trait (on by default): Imago's HTTP/1.1 client on SwiftNIO and
// BoringSSL, and AsyncHTTPClient for a caller who brings one.
#if HTTPClientLoader

    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import NIOSOCKS
    import NIOSSL

    /// Loads `http` and `https` URLs, streaming the body into the sink.
    ///
    /// Requests go through Imago's own HTTP/1.1 client (`HTTP1Client`: keep-alive connections
    /// pooled per origin on SwiftNIO, TLS through BoringSSL), or through an AsyncHTTPClient the
    /// caller gives. Redirects are followed here, not by either client, so that Imago decides: at
    /// most `maxRedirects` hops, no loop, only to http or https, never from https to http,
    /// credentials, cookies and the configured headers dropped when a redirect leaves the origin,
    /// and every hop's address checked against the ``AddressPolicy``.
    public final class HTTPDataLoader: DataLoading {
        public let loaderPriority: Int
        private let http1: HTTP1Client
        /// The caller's client, used for every request not under an address policy; not shut down here.
        private let sharedClient: HTTPClient?

        /// Makes an http(s) loader with a client of its own, which closes a connection left
        /// unused for `connectionIdleTimeout`.
        public init(loaderPriority: Int = 0, connectionIdleTimeout: Duration = .seconds(60)) {
            self.loaderPriority = loaderPriority
            self.sharedClient = nil
            http1 = HTTP1Client(idleTimeout: TimeAmount(connectionIdleTimeout))
        }

        /// Makes an http(s) loader that sends every request through `client` (its event loops, pool,
        /// proxy and TLS settings), except under an ``AddressPolicy`` that checks addresses, where
        /// each hop goes through Imago's own client to the address checked. The client must not
        /// follow redirects itself (`redirectConfiguration = .disallow`): Imago follows them, with
        /// its rules. The caller shuts it down, after the pipeline is done with it.
        public init(loaderPriority: Int = 0, client: HTTPClient) {
            self.loaderPriority = loaderPriority
            self.sharedClient = client
            http1 = HTTP1Client()
        }

        deinit {
            http1.shutdown()
        }

        /// Idle keep-alive connections and HTTP/2 connections held open between transfers.
        public var keptConnectionCount: Int { http1.keptConnectionCount }

        public func canLoad(_ url: URL) -> Bool {
            guard let scheme = url.scheme?.lowercased() else { return false }
            return scheme == "http" || scheme == "https"
        }

        public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            try await load(request, into: sink, describingFailures: nil)
        }

        /// Reads an error response's body, at most this much, for `describingFailures`.
        static let maxFailureBodyBytes = 16 * 1024

        /// Loads `request`; when `describingFailures` is given, a response that is neither a
        /// success nor a 304 (a redirect included) is not followed: its body, up to
        /// ``maxFailureBodyBytes``, is read and what `describingFailures` makes of it becomes the
        /// error's reason (an object store's error document: "S3 NoSuchKey: …").
        func load(
            _ request: DataLoadRequest, into sink: DataSink, describingFailures: (@Sendable (_ status: Int, _ body: Data) -> String?)?
        ) async throws {
            var url = request.url
            var headers = request.headers
            var visited: Set<String> = [url.absoluteString]
            do {
                while true {
                    let next: URL?
                    if let sharedClient, !request.addressPolicy.checksAddresses {
                        next = try await exchange(url, headers: headers, client: sharedClient, request: request, visited: visited, sink: sink)
                    } else {
                        next = try await exchange(
                            url, headers: headers, request: request, visited: visited, sink: sink, describingFailures: describingFailures)
                    }
                    guard let next else { return }
                    if !url.hasSameOrigin(as: next) {
                        headers.removeAll { request.headersDroppedOnCrossOriginRedirect.contains($0.name.lowercased()) }
                    }
                    visited.insert(next.absoluteString)
                    url = next
                }
            } catch var error as ImagoError {
                if error.url == nil { error.url = url }
                throw error
            } catch {
                throw Self.imagoError(error, url: url, progress: sink.progress)
            }
        }

        /// One request and its response through Imago's client: the redirect target when the
        /// response is a redirect to follow, else nil once the body has gone into the sink.
        private func exchange(
            _ url: URL, headers: HeaderFields, request: DataLoadRequest, visited: Set<String>, sink: DataSink,
            describingFailures: (@Sendable (_ status: Int, _ body: Data) -> String?)?
        ) async throws -> URL? {
            guard var host = url.host, !host.isEmpty else { throw ImagoError(.invalidURL, url: url) }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let isTLS = url.scheme?.lowercased() == "https"
            let port = url.port ?? (isTLS ? 443 : 80)
            // The policy applies to the host the URL names, proxy or not: a proxy is no way around it.
            let address = try await checkedAddress(of: host, url: url, policy: request.addressPolicy)
            let proxy = request.proxies.proxy(for: url)
            var origin = HTTP1Client.Origin(
                isTLS: isTLS, host: host, port: port, address: address, allowInvalidCertificates: request.allowInvalidCertificates, proxy: proxy,
                trustRoots: request.trustRoots)
            if let connectTimeout = request.connectTimeout { origin.connectTimeout = TimeAmount(connectTimeout) }

            // Plain http through a proxy asks for the whole URL (absolute form), with the proxy's credentials.
            let target = proxy?.takesAbsoluteRequests == true && !isTLS ? Self.absoluteTarget(of: url) : Self.requestTarget(of: url)
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target)
            if let proxy, proxy.takesAbsoluteRequests, !isTLS, let authorization = proxy.authorization {
                head.headers.add(name: "Proxy-Authorization", value: authorization)
            }
            if headers["Host"] == nil {
                let name = host.contains(":") ? "[\(host)]" : host
                head.headers.add(name: "Host", value: url.port == nil || port == (isTLS ? 443 : 80) ? name : "\(name):\(port)")
            }
            for header in headers { head.headers.add(name: header.name, value: header.value) }
            let redirect = Locked<URL?>(nil)
            let failure = Locked<(head: ResponseHead, body: Data)?>(nil)
            let exchange = HTTP1Exchange(
                head: head,
                timeoutWithoutBytes: TimeAmount(request.timeoutWithoutBytes),
                urgency: HTTP1Exchange.urgency(of: request.priority),
                onHead: { response in
                    let status = Int(response.status.code)
                    if describingFailures != nil, !(200..<300).contains(status), status != 304 {
                        failure.withLock { $0 = (Self.head(url: url, status: status, headers: response.headers), Data()) }
                        return .deliver
                    }
                    if let next = try Self.redirect(status: status, headers: response.headers, from: url, visited: visited, request: request) {
                        redirect.withLock { $0 = next }
                        return .discard
                    }
                    try sink.receive(Self.head(url: url, status: status, headers: response.headers))
                    return .deliver
                },
                onBody: { buffer in
                    let isFailure = failure.withLock { failure -> Bool in
                        guard let kept = failure?.body.count else { return false }
                        let room = Self.maxFailureBodyBytes - kept
                        if room > 0 { failure?.body.append(contentsOf: buffer.readableBytesView.prefix(room)) }
                        return true
                    }
                    if !isFailure { try buffer.withUnsafeReadableBytes { bytes in try sink.receive(bytes) } }
                })
            _ = try await http1.run(exchange, to: origin)
            if let (head, body) = failure.withLock({ $0 }), let describingFailures {
                do {
                    try sink.receive(head)
                } catch {
                    var described = error
                    described.reason = describingFailures(head.statusCode ?? 0, body)
                    throw described
                }
            }
            return redirect.withLock { $0 }
        }

        /// A small request to an operator's endpoint (an object store's token request), whatever
        /// its address, no redirect followed: its status, headers and body, which may hold no more
        /// than `maxBytes`.
        func small(
            _ method: HTTPMethod, _ url: URL, headers: HeaderFields, body: Data? = nil, timeoutWithoutBytes: Duration, maxBytes: Int,
            proxies: ProxySettings, trustRoots: TrustRoots, connectTimeout: Duration? = nil
        ) async throws(ImagoError) -> (status: Int, headers: HeaderFields, body: Data) {
            guard var host = url.host, !host.isEmpty else { throw ImagoError(.invalidURL, url: url) }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let isTLS = url.scheme?.lowercased() == "https"
            let port = url.port ?? (isTLS ? 443 : 80)
            let proxy = proxies.proxy(for: url)
            var origin = HTTP1Client.Origin(
                isTLS: isTLS, host: host, port: port, address: nil, allowInvalidCertificates: false, proxy: proxy, trustRoots: trustRoots)
            if let connectTimeout { origin.connectTimeout = TimeAmount(connectTimeout) }
            let target = proxy?.takesAbsoluteRequests == true && !isTLS ? Self.absoluteTarget(of: url) : Self.requestTarget(of: url)
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: target)
            if let proxy, proxy.takesAbsoluteRequests, !isTLS, let authorization = proxy.authorization {
                head.headers.add(name: "Proxy-Authorization", value: authorization)
            }
            head.headers.add(name: "Host", value: AWSSignatureV4.hostHeader(of: url))
            if let body { head.headers.add(name: "Content-Length", value: String(body.count)) }
            for header in headers { head.headers.add(name: header.name, value: header.value) }
            let response = Locked<(status: Int, headers: HeaderFields, body: Data)>((0, [:], Data()))
            let exchange = HTTP1Exchange(
                head: head, body: body.map { ByteBuffer(bytes: $0) }, timeoutWithoutBytes: TimeAmount(timeoutWithoutBytes),
                onHead: { head in
                    let fields = HeaderFields(head.headers.map { HeaderFields.Field(name: $0.name, value: $0.value) })
                    response.withLock { $0 = (Int(head.status.code), fields, Data()) }
                    return .deliver
                },
                onBody: { buffer in
                    try response.withLock { response in
                        guard response.body.count + buffer.readableBytes <= maxBytes else { throw ImagoError(.tooLarge(limit: Int64(maxBytes)), url: url) }
                        response.body.append(contentsOf: buffer.readableBytesView)
                    }
                })
            do {
                _ = try await http1.run(exchange, to: origin)
            } catch var error as ImagoError {
                if error.url == nil { error.url = url }
                throw error
            } catch {
                throw Self.imagoError(error, url: url, progress: (0, nil))
            }
            return response.withLock { $0 }
        }

        /// One request and its response through the caller's AsyncHTTPClient, as above.
        private func exchange(
            _ url: URL, headers: HeaderFields, client: HTTPClient, request: DataLoadRequest,
            visited: Set<String>, sink: DataSink
        ) async throws -> URL? {
            var httpRequest = HTTPClientRequest(url: url.absoluteString)
            for header in headers { httpRequest.headers.add(name: header.name, value: header.value) }
            let response = try await client.execute(httpRequest, deadline: .distantFuture)
            let status = Int(response.status.code)
            if let next = try Self.redirect(status: status, headers: response.headers, from: url, visited: visited, request: request) {
                // Drain the redirect's small body so its connection can be reused.
                _ = try? await response.body.collect(upTo: HTTP1Exchange.maxDiscardedBytes)
                return next
            }
            try sink.receive(Self.head(url: url, status: status, headers: response.headers))
            for try await buffer in response.body {
                try buffer.withUnsafeReadableBytes { bytes in try sink.receive(bytes) }
            }
            return nil
        }

        /// The response head the sink takes, from an HTTP head (also the fuzz harness's).
        static func head(url: URL, status: Int, headers: HTTPHeaders) -> ResponseHead {
            ResponseHead(
                url: url,
                statusCode: status,
                headers: HeaderFields(headers.map { HeaderFields.Field(name: $0.name, value: $0.value) }),
                expectedContentLength: headers.first(name: "content-length").flatMap { Int64($0) }
            )
        }

        /// NIOSOCKS's errors for a proxy that does not speak SOCKS5 as asked (or wants credentials).
        private static func isSOCKSProtocolError(_ error: any Error) -> Bool {
            error is SOCKSError.InvalidProtocolVersion || error is SOCKSError.InvalidReservedByte || error is SOCKSError.InvalidAddressType
                || error is SOCKSError.InvalidAuthenticationSelection || error is SOCKSError.NoValidAuthenticationMethod
                || error is SOCKSError.InvalidServerState || error is SOCKSError.UnexpectedRead
        }

        /// `http://host[:port]/path?query`, for a request to a proxy; no user info.
        private static func absoluteTarget(of url: URL) -> String {
            let scheme = url.scheme?.lowercased() ?? "http"
            return "\(scheme)://\(AWSSignatureV4.hostHeader(of: url))\(requestTarget(of: url))"
        }

        /// The path and query as the URL spells them, percent-escapes kept.
        private static func requestTarget(of url: URL) -> String {
            let path = url.path(percentEncoded: true)
            let target = path.isEmpty ? "/" : path
            guard let query = url.query(percentEncoded: true) else { return target }
            return target + "?" + query
        }

        /// Under an address policy that checks addresses: the host resolved here, its addresses
        /// checked, and the allowed one chosen for the connection, so nothing resolves the name again
        /// between the check and the connection. Nil otherwise (the system resolves on connect).
        private func checkedAddress(of host: String, url: URL, policy: AddressPolicy) async throws -> String? {
            guard policy.checksAddresses else { return nil }
            let addresses = try await HostResolver.addresses(of: host)
            guard let first = addresses.first else { throw ImagoError(.connectionFailed, url: url) }
            guard let allowed = addresses.first(where: policy.allows) else {
                throw ImagoError(.addressRefused(host: host, address: first.description), url: url)
            }
            return allowed.description
        }

        /// Where a response sends the request next: nil unless it is a redirect (3xx but 304, with a
        /// Location) to follow; an error when the redirect breaks a rule.
        private static func redirect(
            status: Int, headers: HTTPHeaders, from url: URL, visited: Set<String>, request: DataLoadRequest
        ) throws(ImagoError) -> URL? {
            guard (300..<400).contains(status), status != 304, let location = headers.first(name: "location") else { return nil }
            return try redirectTarget(location, from: url, visited: visited, maxRedirects: request.maxRedirects)
        }

        private static func redirectTarget(_ location: String, from url: URL, visited: Set<String>, maxRedirects: Int) throws(ImagoError) -> URL {
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL, let scheme = next.scheme?.lowercased() else {
                throw ImagoError(.invalidResponse, url: url)
            }
            // Every hop is http or https: AsyncHTTPClient would follow http+unix:// into a Unix socket.
            guard scheme == "http" || scheme == "https" else { throw ImagoError(.redirectToUnsupportedScheme(scheme), url: url) }
            if url.scheme?.lowercased() == "https" && next.scheme?.lowercased() == "http" {
                throw ImagoError(.insecureRedirect, url: url)
            }
            if visited.contains(next.absoluteString) { throw ImagoError(.redirectLoop, url: url) }
            if visited.count > maxRedirects { throw ImagoError(.tooManyRedirects(maxRedirects), url: url) }
            return next
        }

        /// Maps AsyncHTTPClient, NIO and TLS failures to Imago's codes.
        /// `connectionFailed` for `url`, with the errno's words ("connection refused") as its reason.
        private static func connectionFailed(_ url: URL, errno: Int32?, underlying: any Error & Sendable) -> ImagoError {
            var error = ImagoError(.connectionFailed, url: url, underlying: underlying)
            error.reason = errno.map { String(cString: strerror($0)).lowercased() }
            return error
        }

        static func imagoError(_ error: any Error, url: URL, progress: (received: Int64, expected: Int64?)) -> ImagoError {
            let sendable = error as (any Error & Sendable)
            if error is CancellationError { return ImagoError(.cancelled, url: url) }
            if let error = error as? HTTP1ExchangeError {
                switch error {
                case .timedOut: return ImagoError(.timedOut, url: url)
                case .cancelled: return ImagoError(.cancelled, url: url)
                case .closed: return ImagoError(.truncated(received: progress.received, expected: progress.expected), url: url)
                }
            }
            if let error = error as? ProxyTunnelError {
                var failure: ImagoError
                switch error {
                case .refused(let status):
                    failure = ImagoError(.connectionFailed, url: url, underlying: sendable)
                    failure.reason = "the proxy refused the tunnel with HTTP \(status)" + (status == 407 ? " (it wants credentials)" : "")
                case .invalidResponse:
                    failure = ImagoError(.invalidResponse, url: url, underlying: sendable)
                    failure.reason = "the proxy's answer to CONNECT is not HTTP"
                case .closed:
                    failure = ImagoError(.connectionReset, url: url, underlying: sendable)
                    failure.reason = "the proxy closed the connection before it answered CONNECT"
                case .timedOut:
                    failure = ImagoError(.timedOut, url: url, underlying: sendable)
                    failure.reason = "the proxy did not answer CONNECT"
                }
                return failure
            }
            if let error = error as? SOCKSError.ConnectionFailed {
                var failure = ImagoError(.connectionFailed, url: url, underlying: sendable)
                failure.reason = "the SOCKS proxy could not connect to the host (reply \(error.reply.value))"
                return failure
            }
            if Self.isSOCKSProtocolError(error) {
                var failure = ImagoError(.invalidResponse, url: url, underlying: sendable)
                failure.reason = "the SOCKS proxy's answer is not SOCKS5 without authentication"
                return failure
            }
            if case .connectTimeout = error as? ChannelError {
                return ImagoError(.timedOut, url: url, underlying: sendable)
            }
            if let error = error as? HTTPClientError {
                switch error {
                case .cancelled: return ImagoError(.cancelled, url: url, underlying: sendable)
                case .readTimeout, .deadlineExceeded, .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                    return ImagoError(.timedOut, url: url, underlying: sendable)
                case .remoteConnectionClosed:
                    return ImagoError(.truncated(received: progress.received, expected: progress.expected), url: url, underlying: sendable)
                default:
                    return ImagoError(.invalidResponse, url: url, underlying: sendable)
                }
            }
            if let error = error as? IOError {
                switch error.errnoCode {
                case ECONNRESET, EPIPE: return ImagoError(.connectionReset, url: url, underlying: sendable)
                case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH: return connectionFailed(url, errno: error.errnoCode, underlying: sendable)
                default: return ImagoError(.loaderFailed, url: url, underlying: sendable)
                }
            }
            if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
                return ImagoError(.tlsFailure, url: url, underlying: sendable)
            }
            if let error = error as? NIOConnectionError {
                // The first connection attempt's errno says why (refused, unreachable); a failed lookup
                // has no attempt.
                let errno = error.connectionErrors.lazy.compactMap { ($0.error as? IOError)?.errnoCode }.first
                let failure = connectionFailed(url, errno: errno, underlying: sendable)
                if errno == nil, error.dnsAError != nil || error.dnsAAAAError != nil {
                    var unresolved = failure
                    unresolved.reason = "the host name did not resolve"
                    return unresolved
                }
                return failure
            }
            if error is ChannelError {
                return ImagoError(.connectionFailed, url: url, underlying: sendable)
            }
            if let error = error as? HTTPParserError {
                // The connection closed before the body's announced end.
                if error == .invalidEOFState {
                    return ImagoError(.truncated(received: progress.received, expected: progress.expected), url: url, underlying: sendable)
                }
                return ImagoError(.invalidResponse, url: url, underlying: sendable)
            }
            return ImagoError(.loaderFailed, url: url, underlying: sendable)
        }
    }

#endif
