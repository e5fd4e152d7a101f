// Built with the `HTTPClientLoader` trait (on by default): AsyncHTTPClient, SwiftNIO, BoringSSL.
#if HTTPClientLoader

    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import NIOSSL
    import Tracing

    /// Loads `http` and `https` URLs with AsyncHTTPClient, streaming the body into the sink.
    ///
    /// Redirects are followed here rather than by AsyncHTTPClient so that Imago decides: at most
    /// `maxRedirects` hops, no loop, only to http or https, never from https to http, credentials,
    /// cookies and the configured headers dropped when a redirect leaves the origin, and every hop's
    /// address checked against the ``AddressPolicy``. Connections are pooled per client; one client exists per distinct
    /// (time without bytes, certificate policy), created on first use and shut down with the loader.
    public final class HTTPDataLoader: DataLoading {
        private struct ClientKey: Hashable {
            var timeoutWithoutBytes: Duration
            var allowInvalidCertificates: Bool
        }

        public let loaderPriority: Int
        private let clients = Locked<[ClientKey: HTTPClient]>([:])
        /// The caller's client, used for every request not under an address policy; not shut down here.
        private let sharedClient: HTTPClient?

        /// Makes an http(s) loader with clients of its own.
        public init(loaderPriority: Int = 0) {
            self.loaderPriority = loaderPriority
            self.sharedClient = nil
        }

        /// Makes an http(s) loader that sends every request through `client` (its event loops, pool,
        /// proxy and TLS settings), except under an ``AddressPolicy`` that checks addresses, where each
        /// hop needs a client told which address to use. The client must not follow redirects itself
        /// (`redirectConfiguration = .disallow`): Imago follows them, with its rules. The caller shuts
        /// it down, after the pipeline is done with it.
        public init(loaderPriority: Int = 0, client: HTTPClient) {
            self.loaderPriority = loaderPriority
            self.sharedClient = client
        }

        deinit {
            // The clients finish their shutdown asynchronously; the callback keeps each alive until then.
            for client in clients.withLock({ Array($0.values) }) {
                client.shutdown { _ in }
            }
        }

        public func canLoad(_ url: URL) -> Bool {
            guard let scheme = url.scheme?.lowercased() else { return false }
            return scheme == "http" || scheme == "https"
        }

        public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            let key = ClientKey(timeoutWithoutBytes: request.timeoutWithoutBytes, allowInvalidCertificates: request.allowInvalidCertificates)
            var url = request.url
            var headers = request.headers
            var visited: Set<String> = [url.absoluteString]
            do {
                while true {
                    let hop = try await connection(to: url, key: key, policy: request.addressPolicy)
                    let next: URL?
                    do {
                        next = try await exchange(url, headers: headers, client: hop.client, request: request, visited: visited, sink: sink)
                    } catch {
                        await hop.close()
                        throw error
                    }
                    await hop.close()
                    guard let next else { return }
                    if !url.hasSameOrigin(as: next) {
                        headers.removeAll { request.headersDroppedOnCrossOriginRedirect.contains($0.name.lowercased()) }
                    }
                    visited.insert(next.absoluteString)
                    url = next
                }
            } catch let error as ImagoError {
                throw error
            } catch {
                throw Self.imagoError(error, url: url, progress: sink.progress)
            }
        }

        /// One request and its response: the redirect target when the response is a redirect to
        /// follow, else nil once the body has gone into the sink.
        private func exchange(
            _ url: URL, headers: [(name: String, value: String)], client: HTTPClient, request: DataLoadRequest,
            visited: Set<String>, sink: DataSink
        ) async throws -> URL? {
            var httpRequest = HTTPClientRequest(url: url.absoluteString)
            for header in headers { httpRequest.headers.add(name: header.name, value: header.value) }
            let response = try await client.execute(httpRequest, deadline: .distantFuture)
            let status = Int(response.status.code)
            if (300..<400).contains(status), status != 304, let location = response.headers.first(name: "location") {
                let next = try Self.redirectTarget(location, from: url, visited: visited, maxRedirects: request.maxRedirects)
                // Drain the redirect's small body so its connection can be reused.
                _ = try? await response.body.collect(upTo: 64 * 1024)
                return next
            }
            try sink.receive(
                DataResponse(
                    url: url,
                    statusCode: status,
                    headers: response.headers.map { ($0.name, $0.value) },
                    expectedContentLength: response.headers.first(name: "content-length").flatMap { Int64($0) }
                ))
            for try await buffer in response.body {
                try buffer.withUnsafeReadableBytes { bytes in try sink.receive(bytes) }
            }
            return nil
        }

        /// The client one hop uses. Under an address policy: the host resolved here, its addresses
        /// checked, and a client of its own told to connect to the allowed address chosen
        /// (`dnsOverride`), so nothing resolves the name again between the check and the connection.
        private struct Hop {
            var client: HTTPClient
            var ownsClient: Bool

            func close() async {
                if ownsClient { try? await client.shutdown() }
            }
        }

        private func connection(to url: URL, key: ClientKey, policy: AddressPolicy) async throws -> Hop {
            guard policy.checksAddresses else { return Hop(client: client(for: key), ownsClient: false) }
            guard var host = url.host, !host.isEmpty else { throw ImagoError(.invalidURL, url: url) }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let addresses = try await HostResolver.addresses(of: host)
            guard let first = addresses.first else { throw ImagoError(.connectionFailed, url: url) }
            guard let allowed = addresses.first(where: policy.allows) else {
                throw ImagoError(.addressRefused(host: host, address: first.description), url: url)
            }
            var configuration = Self.configuration(for: key)
            configuration.dnsOverride = [host: allowed.description]
            return Hop(client: HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration), ownsClient: true)
        }

        private func client(for key: ClientKey) -> HTTPClient {
            if let sharedClient { return sharedClient }
            return clients.withLock { clients in
                if let client = clients[key] { return client }
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: Self.configuration(for: key))
                clients[key] = client
                return client
            }
        }

        private static func configuration(for key: ClientKey) -> HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            configuration.timeout = .init(connect: .seconds(10), read: .init(key.timeoutWithoutBytes))
            configuration.decompression = .disabled
            // AsyncHTTPClient builds a span's attributes (the URL taken apart) for every request even
            // when the process bootstrapped no tracer; with the no-op one, it is told there is none.
            if InstrumentationSystem.tracer is NoOpTracer { configuration.tracing.tracer = nil }
            // Fail at once on refused connections and bad certificates instead of retrying until
            // the connect timeout.
            configuration.connectionPool.retryConnectionEstablishment = false
            if key.allowInvalidCertificates {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.certificateVerification = .none
                configuration.tlsConfiguration = tls
            }
            return configuration
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
