// Built with the `HTTPClientLoader` trait (on by default): requests go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation

    /// Loads `swift://container/object` URLs from OpenStack Swift over the same HTTP client as
    /// http(s) URLs, as imgproxy's `IMGPROXY_USE_SWIFT` does: it signs in at the configured v1
    /// auth URL with the user and key, and reads `STORAGE_URL/container/object` with the token.
    ///
    /// The token and storage URL are kept until a minute before the token expires (its
    /// `X-Auth-Token-Expires`, an hour when not said) and asked for once however many loads wait;
    /// a `401` drops them, so the next load signs in again. The auth URL is the operator's, and the
    /// storage URL is what it answered, so the pipeline's ``AddressPolicy`` does not apply to
    /// them; which containers may be read is ``SwiftConfiguration/containers``. Swift's error page
    /// becomes the error's reason (`Swift 404: Not Found`); no key or token appears in one.
    public final class SwiftDataLoader: DataLoading {
        public let loaderPriority: Int
        /// Where and as whom requests are made.
        public let configuration: SwiftConfiguration
        let http = HTTPDataLoader()
        let session: SwiftSession

        /// A loader for `configuration`.
        public init(_ configuration: SwiftConfiguration, loaderPriority: Int = 0) {
            self.configuration = configuration
            self.loaderPriority = loaderPriority
            session = SwiftSession(configuration)
        }

        /// Idle keep-alive connections and HTTP/2 connections held open between transfers.
        public var keptConnectionCount: Int { http.keptConnectionCount }

        public func canLoad(_ url: URL) -> Bool {
            url.scheme?.lowercased() == "swift"
        }

        /// Swift sends `ETag` and `Last-Modified` with objects.
        public var supportsHTTPCaching: Bool { true }

        public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            let (container, object) = try Self.parts(of: request.url)
            try configuration.containers.check(container, store: "Swift", url: request.url)
            let signedIn = try await session.value(using: http, request: request)
            var headers = request.headers
            for name in DataLoadRequest.credentialHeaders { headers.remove(name) }
            headers.remove("Host")
            headers["X-Auth-Token"] = signedIn.token
            var storeRequest = DataLoadRequest(
                url: Self.objectURL(storage: signedIn.storage, container: container, object: object), headers: headers,
                timeoutWithoutBytes: min(request.timeoutWithoutBytes, configuration.timeout), maxRedirects: 0,
                allowInvalidCertificates: request.allowInvalidCertificates, addressPolicy: .allowAll, proxies: request.proxies,
                trustRoots: request.trustRoots, priority: request.priority)
            storeRequest.connectTimeout = configuration.connectTimeout
            do {
                try await http.load(storeRequest, into: sink, describingFailures: ObjectStoreErrorDocument.swift)
            } catch var error as ImagoError {
                if error.code == .httpStatus(401) { session.forget(signedIn.token) }
                error.url = request.url
                throw error
            }
        }

        /// `STORAGE/container/object`, each segment of the object's name encoded, its slashes kept.
        static func objectURL(storage: URL, container: String, object: String) -> URL {
            var base = storage.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            let text =
                base + "/" + AWSSignatureV4.awsEncoded(container, keepingSlashes: false) + "/"
                + AWSSignatureV4.awsEncoded(object, keepingSlashes: true)
            // A storage URL that parsed and encoded text: always a URL.
            return URL(string: text)!
        }

        /// The container and the object's name of a `swift://` URL.
        static func parts(of url: URL) throws(ImagoError) -> (container: String, object: String) {
            let path = url.path(percentEncoded: false)
            let object = path.hasPrefix("/") ? String(path.dropFirst()) : path
            guard let container = url.host(percentEncoded: false), !container.isEmpty, container.utf8.count <= 256, !object.isEmpty,
                object.utf8.count <= 1024
            else {
                var error = ImagoError(.invalidURL, url: url)
                error.reason = "a Swift URL names a container and an object"
                throw error
            }
            return (container, object)
        }
    }

    /// A v1 sign-in's token and storage URL: kept until shortly before the token expires, one
    /// sign-in in flight however many loads wait.
    final class SwiftSession: Sendable {
        struct SignedIn: Sendable {
            var token: String
            var storage: URL
        }

        private let configuration: SwiftConfiguration
        private let credential = ExpiringCredential<SignedIn>()

        init(_ configuration: SwiftConfiguration) {
            self.configuration = configuration
        }

        /// A token valid for at least another minute, with its storage URL.
        func value(using http: HTTPDataLoader, request: DataLoadRequest) async throws(ImagoError) -> SignedIn {
            try await credential.value(for: request.url) { () throws(ImagoError) in try await self.signIn(using: http, request: request) }
        }

        /// Drops `token` if it is the one held (the store refused it).
        func forget(_ token: String) {
            credential.forget { $0.token == token }
        }

        private func signIn(using http: HTTPDataLoader, request: DataLoadRequest) async throws(ImagoError) -> (value: SignedIn, lifetime: Duration) {
            guard let authURL = configuration.authURL else {
                var failure = ImagoError(.loaderFailed, url: request.url)
                failure.reason = "Swift: no auth URL is configured"
                throw failure
            }
            let (status, headers, _) = try await http.small(
                .GET, authURL, headers: ["X-Auth-User": configuration.user, "X-Auth-Key": configuration.key],
                timeoutWithoutBytes: min(request.timeoutWithoutBytes, configuration.timeout), maxBytes: 64 * 1024, proxies: request.proxies,
                trustRoots: request.trustRoots, connectTimeout: configuration.connectTimeout)
            guard (200..<300).contains(status) else {
                var failure = ImagoError(.httpStatus(status), url: request.url)
                failure.reason = "Swift: the auth URL refused the user and key (\(status))"
                throw failure
            }
            guard let token = headers["X-Auth-Token"] ?? headers["X-Storage-Token"], Self.isToken(token),
                let storageText = headers["X-Storage-Url"], storageText.utf8.count <= 2048, let storage = URL(string: storageText),
                ["http", "https"].contains(storage.scheme?.lowercased() ?? ""), storage.host?.isEmpty == false
            else {
                var failure = ImagoError(.httpStatus(502), url: request.url)
                failure.reason = "Swift: the auth URL's answer has no usable token and storage URL"
                throw failure
            }
            let lifetime = headers["X-Auth-Token-Expires"].flatMap { Double($0) }.map { min(max($0, 60), 86_400) } ?? 3600
            return (SignedIn(token: token, storage: storage), .seconds(lifetime))
        }

        /// Printable ASCII without blanks, at most 8 KB: fit for a header.
        static func isToken(_ text: String) -> Bool {
            !text.isEmpty && text.utf8.count <= 8192 && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        }
    }

#endif
