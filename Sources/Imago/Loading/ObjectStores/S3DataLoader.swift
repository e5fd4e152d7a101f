// Built with the `HTTPClientLoader` trait (on by default): requests go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation

    /// Loads `s3://bucket/key` URLs from Amazon S3 or any server with its API (MinIO, Ceph, moto),
    /// signed with ``AWSSignatureV4``, over the same HTTP client as http(s) URLs.
    ///
    /// `s3://bucket/key?version` (or `?versionId=version`) reads one version of the object, as
    /// imgproxy's URLs do. The endpoint is the operator's, so the pipeline's ``AddressPolicy`` does not
    /// apply to it (a MinIO on a private address works under a public-only policy); which buckets
    /// may be read is ``S3Configuration/buckets``. An error document from the store becomes the
    /// error's reason (`S3 NoSuchKey: …`); no credential or signature ever appears in one. A
    /// bucket in another region (a `301` naming it in `X-Amz-Bucket-Region`) is asked again there,
    /// once, and its region remembered.
    public final class S3DataLoader: DataLoading {
        public let loaderPriority: Int
        /// Where and how requests are made.
        public let configuration: S3Configuration
        let http = HTTPDataLoader()
        /// Regions learnt from `301` answers, by bucket; bounded, as bucket names come from URLs.
        private let bucketRegions = Locked<[String: String]>([:])
        /// The assumed role's temporary credentials (``S3Configuration/role``).
        private let roleCredentials = ExpiringCredential<AWSCredentials>()
        private static let maxRememberedRegions = 1024

        /// A loader for `configuration`.
        public init(_ configuration: S3Configuration, loaderPriority: Int = 0) {
            self.configuration = configuration
            self.loaderPriority = loaderPriority
        }

        /// Idle keep-alive connections and HTTP/2 connections held open between transfers.
        public var keptConnectionCount: Int { http.keptConnectionCount }

        public func canLoad(_ url: URL) -> Bool {
            url.scheme?.lowercased() == "s3"
        }

        /// S3 sends `ETag` and `Last-Modified` and answers `If-None-Match` with `304`.
        public var supportsHTTPCaching: Bool { true }

        public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            let object = try S3Object(request.url)
            try configuration.buckets.check(object.bucket, store: "S3", url: request.url)
            let region = bucketRegions.withLock { $0[object.bucket] } ?? configuration.region
            do {
                try await load(object, region: region, request: request, sink: sink)
            } catch let error as ImagoError where error.code == .httpStatus(301) {
                // The bucket lives elsewhere: S3 says where in a header of its 301.
                guard let other = sink.response?.headers["x-amz-bucket-region"], other != region, S3Configuration.isRegionName(other) else {
                    throw error
                }
                bucketRegions.withLock { regions in
                    if regions.count >= Self.maxRememberedRegions { regions.removeAll() }
                    regions[object.bucket] = other
                }
                sink.reset()
                try await load(object, region: other, request: request, sink: sink)
            }
        }

        private func load(_ object: S3Object, region: String, request: DataLoadRequest, sink: DataSink) async throws {
            let url = configuration.httpURL(for: object, region: region)
            var headers = request.headers
            // Credentials meant for http sources are not the store's.
            for name in DataLoadRequest.credentialHeaders { headers.remove(name) }
            headers.remove("Host")
            if let credentials = try await signingCredentials(for: request) {
                let signer = AWSSignatureV4(credentials: credentials, region: region)
                headers.append(contentsOf: signer.headers(url: url, date: Date()))
            } else {
                headers["Host"] = AWSSignatureV4.hostHeader(of: url)
            }
            let storeRequest = DataLoadRequest(
                url: url, headers: headers, timeoutWithoutBytes: request.timeoutWithoutBytes, maxRedirects: 0,
                allowInvalidCertificates: request.allowInvalidCertificates, addressPolicy: .allowAll, proxies: request.proxies,
                trustRoots: request.trustRoots, priority: request.priority)
            do {
                try await http.load(storeRequest, into: sink, describingFailures: ObjectStoreErrorDocument.s3)
            } catch var error as ImagoError {
                error.url = request.url
                throw error
            }
        }
    }

    extension S3DataLoader {
        /// The key requests are signed with: the role's temporary one when a role is assumed
        /// (asked of STS once however many loads wait), else ``S3Configuration/credentials``.
        private func signingCredentials(for request: DataLoadRequest) async throws(ImagoError) -> AWSCredentials? {
            try await signingCredentials(for: request.url, network: NetworkEnvironment(proxies: request.proxies, trustRoots: request.trustRoots))
        }

        /// The key requests are signed with, as above, for a call about `url` over `network`.
        func signingCredentials(for url: URL, network: NetworkEnvironment) async throws(ImagoError) -> AWSCredentials? {
            guard let role = configuration.role else { return configuration.credentials }
            let (credentials, region) = (configuration.credentials, configuration.region)
            return try await roleCredentials.value(for: url) { () async throws(ImagoError) in
                try await role.assume(with: credentials, region: region, network: network)
            }
        }
    }

    extension S3Configuration {
        /// The https (or the endpoint's) URL of `object`.
        func httpURL(for object: S3Object, region: String) -> URL {
            var path = "/" + AWSSignatureV4.awsEncoded(object.key, keepingSlashes: true)
            var base: String
            if let endpoint {
                let scheme = endpoint.scheme?.lowercased() ?? "http"
                let host = AWSSignatureV4.hostHeader(of: endpoint)
                var prefix = endpoint.path(percentEncoded: true)
                while prefix.hasSuffix("/") { prefix.removeLast() }
                if usesPathStyle {
                    base = "\(scheme)://\(host)\(prefix)"
                    path = "/" + object.bucket + path
                } else {
                    base = "\(scheme)://\(object.bucket).\(host)\(prefix)"
                }
            } else if object.bucket.contains(".") {
                // A dotted bucket does not match the wildcard certificate of virtual-hosted names.
                base = "https://s3.\(region).amazonaws.com"
                path = "/" + object.bucket + path
            } else {
                base = "https://\(object.bucket).s3.\(region).amazonaws.com"
            }
            if let version = object.version { path += "?versionId=" + AWSSignatureV4.awsEncoded(version, keepingSlashes: false) }
            // Made of an endpoint that parsed, a checked bucket and encoded text: always a URL.
            return URL(string: base + path)!
        }
    }

    /// An `s3://bucket/key[?version]` URL taken apart, its bucket name checked.
    struct S3Object: Equatable {
        var bucket: String
        var key: String
        var version: String?

        init(bucket: String, key: String, version: String?) {
            (self.bucket, self.key, self.version) = (bucket, key, version)
        }

        init(_ url: URL) throws(ImagoError) {
            guard let bucket = url.host(percentEncoded: false), Self.isBucketName(bucket) else {
                throw ImagoError(.invalidURL, url: url)
            }
            let path = url.path(percentEncoded: false)
            let key = path.hasPrefix("/") ? String(path.dropFirst()) : path
            guard !key.isEmpty else {
                var error = ImagoError(.invalidURL, url: url)
                error.reason = "an S3 URL names a bucket and an object key"
                throw error
            }
            self.bucket = bucket
            self.key = key
            if let query = url.query(percentEncoded: false), !query.isEmpty {
                version = query.hasPrefix("versionId=") ? String(query.dropFirst("versionId=".count)) : query
            }
        }

        static func isBucketName(_ name: String) -> Bool { S3Configuration.isBucketName(name) }
    }

#endif
