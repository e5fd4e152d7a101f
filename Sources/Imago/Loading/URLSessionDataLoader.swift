// Built with the `URLSessionLoader` trait (on by default): FoundationNetworking (libcurl).
#if URLSessionLoader

    import Foundation
    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// Loads `http` and `https` URLs with `URLSession` (FoundationNetworking on Linux): an alternative to
    /// ``HTTPDataLoader`` for hosts that want the platform's stack. Register it with a higher
    /// `loaderPriority` to make it win.
    ///
    /// Redirects follow the same rules as ``HTTPDataLoader``: at most `maxRedirects`, only http(s),
    /// never https→http, credential headers dropped across origins. URLSession cannot tell which
    /// address it connects to, so it refuses requests under an ``AddressPolicy`` other than `allowAll`.
    public final class URLSessionDataLoader: DataLoading, Sendable {
        /// One transfer in flight: where its bytes go and who waits for its end.
        fileprivate struct Transfer {
            var request: DataLoadRequest
            var sink: DataSink
            var continuation: CheckedContinuation<Void, any Error>
            var redirects = 0
            var failure: ImagoError?
        }

        public let loaderPriority: Int
        private let delegate = SessionDelegate()
        private let session: URLSession
        private var transfers: Locked<[Int: Transfer]> { delegate.transfers }

        /// Makes a URLSession loader. Cookies are off in the session: the pipeline sends them as a header
        /// only when a request asks.
        public init(loaderPriority: Int = 0, configuration: URLSessionConfiguration = .ephemeral) {
            self.loaderPriority = loaderPriority
            configuration.httpShouldSetCookies = false
            configuration.httpCookieAcceptPolicy = .never
            configuration.urlCache = nil
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        }

        /// Ends the session; the loader cannot load afterwards. URLSession keeps its delegate alive until
        /// this is called.
        public func invalidate() {
            session.invalidateAndCancel()
        }

        public func canLoad(_ url: URL) -> Bool {
            guard let scheme = url.scheme?.lowercased() else { return false }
            return scheme == "http" || scheme == "https"
        }

        /// Why a request under an address policy is refused.
        public struct AddressPolicyUnsupported: Error, CustomStringConvertible {
            public var description: String {
                "URLSession cannot check the address it connects to; use HTTPDataLoader under an address policy"
            }
        }

        public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            guard !request.addressPolicy.checksAddresses else {
                throw ImagoError(.loaderFailed, url: request.url, underlying: AddressPolicyUnsupported())
            }
            var urlRequest = URLRequest(url: request.url)
            urlRequest.httpShouldHandleCookies = false
            urlRequest.timeoutInterval =
                Double(request.timeoutWithoutBytes.components.seconds)
                + Double(request.timeoutWithoutBytes.components.attoseconds) / 1e18
            for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }
            let task = session.dataTask(with: urlRequest)
            let id = task.taskIdentifier
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    transfers.withLock { $0[id] = Transfer(request: request, sink: sink, continuation: continuation) }
                    task.resume()
                }
            } onCancel: {
                sink.cancel()
                task.cancel()
            }
        }

        static func imagoError(_ error: any Error, url: URL, progress: (received: Int64, expected: Int64?)) -> ImagoError {
            guard let urlError = error as? URLError else { return ImagoError(.loaderFailed, url: url, underlying: error) }
            let code: ImagoError.Code =
                switch urlError.code {
                case .cancelled: .cancelled
                case .timedOut: .timedOut
                case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: .connectionFailed
                case .networkConnectionLost: .truncated(received: progress.received, expected: progress.expected)
                case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                    .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
                    .tlsFailure
                case .httpTooManyRedirects: .tooManyRedirects(5)
                case .badServerResponse: .invalidResponse
                default: .loaderFailed
                }
            return ImagoError(code, url: url, underlying: urlError)
        }
    }

    /// URLSession's delegate for ``URLSessionDataLoader``: a separate object, so the loader's session
    /// is a constant set in its initialiser. It keeps the transfers in flight by task identifier.
    private final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
        let transfers = Locked<[Int: URLSessionDataLoader.Transfer]>([:])

        private func fail(_ task: URLSessionTask, with error: ImagoError) {
            let isLive = transfers.withLock { transfers -> Bool in
                guard transfers[task.taskIdentifier] != nil else { return false }
                if transfers[task.taskIdentifier]?.failure == nil { transfers[task.taskIdentifier]?.failure = error }
                return true
            }
            if isLive { task.cancel() }
        }

        public func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            guard let sink = transfers.withLock({ $0[dataTask.taskIdentifier]?.sink }) else { return completionHandler(.cancel) }
            let http = response as? HTTPURLResponse
            let headers = HeaderFields(
                (http?.allHeaderFields ?? [:]).compactMap { key, value -> HeaderFields.Field? in
                    guard let key = key as? String, let value = value as? String else { return nil }
                    return HeaderFields.Field(name: key, value: value)
                })
            do {
                try sink.receive(
                    ResponseHead(
                        url: response.url ?? dataTask.originalRequest?.url ?? URL(fileURLWithPath: "/"),
                        statusCode: http?.statusCode,
                        headers: headers,
                        expectedContentLength: response.expectedContentLength >= 0 ? response.expectedContentLength : nil
                    ))
                completionHandler(.allow)
            } catch {
                transfers.withLock { $0[dataTask.taskIdentifier]?.failure = error }
                completionHandler(.cancel)
            }
        }

        public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            guard let sink = transfers.withLock({ $0[dataTask.taskIdentifier]?.sink }) else { return }
            do {
                try sink.receive(data)
            } catch {
                fail(dataTask, with: error)
            }
        }

        public func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            let verdict = transfers.withLock { transfers -> ImagoError? in
                guard var transfer = transfers[task.taskIdentifier] else { return ImagoError(.cancelled, url: request.url) }
                transfer.redirects += 1
                transfers[task.taskIdentifier] = transfer
                let from = response.url ?? transfer.request.url
                let scheme = request.url?.scheme?.lowercased() ?? ""
                guard scheme == "http" || scheme == "https" else { return ImagoError(.redirectToUnsupportedScheme(scheme), url: from) }
                if from.scheme?.lowercased() == "https" && scheme == "http" {
                    return ImagoError(.insecureRedirect, url: from)
                }
                if transfer.redirects > transfer.request.maxRedirects {
                    return ImagoError(.tooManyRedirects(transfer.request.maxRedirects), url: from)
                }
                return nil
            }
            if let verdict {
                fail(task, with: verdict)
                completionHandler(nil)
                return
            }
            var next = request
            let from = response.url
            let dropped = transfers.withLock { $0[task.taskIdentifier]?.request.headersDroppedOnCrossOriginRedirect } ?? DataLoadRequest.credentialHeaders
            // An origin that cannot be told counts as another one.
            let staysOnOrigin = from.flatMap { from in request.url.map { from.hasSameOrigin(as: $0) } } ?? false
            if !staysOnOrigin {
                for name in next.allHTTPHeaderFields?.keys.filter({ dropped.contains($0.lowercased()) }) ?? [] {
                    next.setValue(nil, forHTTPHeaderField: name)
                }
            }
            completionHandler(next)
        }

        public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let failure = transfer.failure {
                transfer.continuation.resume(throwing: failure)
            } else if let error {
                transfer.continuation.resume(throwing: URLSessionDataLoader.imagoError(error, url: transfer.request.url, progress: transfer.sink.progress))
            } else {
                transfer.continuation.resume()
            }
        }
    }

#endif
