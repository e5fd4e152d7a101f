// Built with the `HTTPClientLoader` trait (on by default): requests go over Imago's HTTP client.
#if HTTPClientLoader

    import Crypto
    import Foundation
    import _CryptoExtras

    /// Loads `gs://bucket/object` URLs from Google Cloud Storage's JSON API (or an emulator of it)
    /// over the same HTTP client as http(s) URLs, with an OAuth token of a service account.
    ///
    /// `gs://bucket/object?generation` reads one generation, as imgproxy's URLs do. The token is
    /// asked for with a JWT signed by the account's key (RS256, Google's "OAuth 2.0 for server to
    /// server applications"), kept until a minute before it expires, and asked for once however
    /// many requests wait for it. The endpoints are the operator's, so the pipeline's
    /// ``AddressPolicy`` does not apply to them; which buckets may be read is
    /// ``GCSConfiguration/buckets``. GCS's JSON error becomes the error's reason (`GCS 404: No such
    /// object: …`); no token or key appears in one.
    public final class GCSDataLoader: DataLoading {
        public let loaderPriority: Int
        /// Where and as whom requests are made.
        public let configuration: GCSConfiguration
        let http = HTTPDataLoader()
        private let token: GCSAccessToken?
        /// The token of the read-write scope, asked for only when objects are written (a store).
        let writeToken: GCSAccessToken?

        /// A loader for `configuration`.
        public init(_ configuration: GCSConfiguration, loaderPriority: Int = 0) {
            self.configuration = configuration
            self.loaderPriority = loaderPriority
            token = configuration.account.map { GCSAccessToken($0, scope: GCSAccessToken.readOnly) }
            writeToken = configuration.account.map { GCSAccessToken($0, scope: GCSAccessToken.readWrite) }
        }

        /// Idle keep-alive connections and HTTP/2 connections held open between transfers.
        public var keptConnectionCount: Int { http.keptConnectionCount }

        public func canLoad(_ url: URL) -> Bool {
            url.scheme?.lowercased() == "gs"
        }

        /// GCS sends `ETag`, `Last-Modified` and `Cache-Control` with objects.
        public var supportsHTTPCaching: Bool { true }

        public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            let (bucket, object, generation) = try Self.parts(of: request.url)
            try configuration.buckets.check(bucket, store: "GCS", url: request.url)
            var headers = request.headers
            for name in DataLoadRequest.credentialHeaders { headers.remove(name) }
            headers.remove("Host")
            if let token {
                headers["Authorization"] = "Bearer " + (try await token.value(using: http, request: request))
            }
            let storeRequest = DataLoadRequest(
                url: mediaURL(bucket: bucket, object: object, generation: generation), headers: headers,
                timeoutWithoutBytes: request.timeoutWithoutBytes, maxRedirects: 0, allowInvalidCertificates: request.allowInvalidCertificates,
                addressPolicy: .allowAll, proxies: request.proxies,
                trustRoots: request.trustRoots, priority: request.priority)
            do {
                try await http.load(storeRequest, into: sink, describingFailures: ObjectStoreErrorDocument.gcs)
            } catch var error as ImagoError {
                error.url = request.url
                throw error
            }
        }

        /// `…/storage/v1/b/BUCKET/o/OBJECT?alt=media[&generation=N]`, the object's name encoded whole.
        func mediaURL(bucket: String, object: String, generation: String?) -> URL {
            var text = base + "/storage/v1/b/" + bucket + "/o/" + AWSSignatureV4.awsEncoded(object, keepingSlashes: false) + "?alt=media"
            if let generation { text += "&generation=" + generation }
            // An endpoint that parsed, a checked bucket and encoded text: always a URL.
            return URL(string: text)!
        }

        /// The endpoint without its trailing slashes or `/storage/v1`.
        var base: String {
            var base = configuration.endpoint.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            if base.hasSuffix("/storage/v1") { base.removeLast("/storage/v1".count) }
            return base
        }

        /// The bucket, the object's name and the generation (digits only) of a `gs://` URL.
        static func parts(of url: URL) throws(ImagoError) -> (bucket: String, object: String, generation: String?) {
            guard let bucket = url.host(percentEncoded: false), S3Object.isBucketName(bucket) else { throw ImagoError(.invalidURL, url: url) }
            let path = url.path(percentEncoded: false)
            let object = path.hasPrefix("/") ? String(path.dropFirst()) : path
            guard !object.isEmpty else {
                var error = ImagoError(.invalidURL, url: url)
                error.reason = "a GCS URL names a bucket and an object"
                throw error
            }
            var generation: String?
            if let query = url.query(percentEncoded: false), !query.isEmpty {
                let digits = query.hasPrefix("generation=") ? String(query.dropFirst("generation=".count)) : query
                guard digits.count <= 20, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { throw ImagoError(.invalidURL, url: url) }
                generation = digits.isEmpty ? nil : digits
            }
            return (bucket, object, generation)
        }
    }

    /// A service account's OAuth access token: asked for with a signed JWT, kept until shortly
    /// before it expires, one request in flight however many loads wait.
    final class GCSAccessToken: Sendable {
        private let account: GCSServiceAccount
        private let scope: String
        private let credential = ExpiringCredential<String>()
        static let readOnly = "https://www.googleapis.com/auth/devstorage.read_only"
        static let readWrite = "https://www.googleapis.com/auth/devstorage.read_write"

        init(_ account: GCSServiceAccount, scope: String) {
            (self.account, self.scope) = (account, scope)
        }

        /// A token valid for at least another minute.
        func value(using http: HTTPDataLoader, request: DataLoadRequest) async throws(ImagoError) -> String {
            try await credential.value(for: request.url) { () throws(ImagoError) in
                let (token, lifetime) = try await self.request(using: http, request: request)
                return (token, .seconds(lifetime))
            }
        }

        private func request(using http: HTTPDataLoader, request: DataLoadRequest) async throws(ImagoError) -> (String, Int) {
            let url = request.url
            let assertion: String
            do {
                assertion = try Self.assertion(account, scope: scope, issuedAt: Date())
            } catch {
                var failure = ImagoError(.loaderFailed, url: url)
                failure.reason = "the GCS service account's private key cannot sign (it must be an RSA key of 2048 bits or more in PEM)"
                throw failure
            }
            let body = Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
            let (status, _, answer) = try await http.small(
                .POST, account.tokenURL, headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"], body: body,
                timeoutWithoutBytes: request.timeoutWithoutBytes, maxBytes: 64 * 1024, proxies: request.proxies,
                trustRoots: request.trustRoots)
            let object = try? JSONSerialization.jsonObject(with: answer) as? [String: Any]
            guard status == 200, let token = object?["access_token"] as? String, !token.isEmpty, token.utf8.count <= 8192,
                token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else {
                var failure = ImagoError(.httpStatus(status == 200 ? 502 : status), url: url)
                let error = (object?["error"] as? String).map { " (\($0.prefix(100)))" } ?? ""
                failure.reason = "GCS: the token endpoint refused the service account's request" + error
                throw failure
            }
            let lifetime = (object?["expires_in"] as? Int).map { min(max($0, 60), 86_400) } ?? 3600
            return (token, lifetime)
        }

        /// The JWT the token endpoint takes: RS256 over the account, the scope, the endpoint as
        /// audience, an hour's life.
        static func assertion(_ account: GCSServiceAccount, scope: String = readOnly, issuedAt date: Date) throws -> String {
            var header: [String: String] = ["alg": "RS256", "typ": "JWT"]
            if let id = account.privateKeyID { header["kid"] = id }
            let issued = Int(date.timeIntervalSince1970)
            let claims: [String: Any] = [
                "iss": account.clientEmail, "scope": scope, "aud": account.tokenURL.absoluteString, "iat": issued, "exp": issued + 3600,
            ]
            let signingInput =
                base64URL(try JSONSerialization.data(withJSONObject: header, options: .sortedKeys)) + "."
                + base64URL(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
            let key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)
            let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
            return signingInput + "." + base64URL(signature.rawRepresentation)
        }

        private static func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

#endif
