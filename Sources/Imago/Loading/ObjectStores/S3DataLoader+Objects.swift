// Built with the `HTTPClientLoader` trait (on by default): requests go over Imago's HTTP client.
#if HTTPClientLoader

    import Crypto
    import Foundation
    import NIOHTTP1

    /// Whole small objects read, written and removed in one bucket the operator named (a store of
    /// results, not a source): with the loader's endpoint, key, role and region, no bucket rule
    /// (the bucket is the operator's), no redirect followed.
    extension S3DataLoader {
        /// The bytes of `key` in `bucket`, nil when S3 has no such object (404); more than
        /// `maxBytes` is an error, as is any status but 200 and 404 (with S3's error code).
        public func object(bucket: String, key: String, maxBytes: Int, _ call: ObjectStoreCall) async throws(ImagoError) -> Data? {
            // An error's document may be longer than a small object.
            let (status, _, body) = try await send(
                .GET, bucket: bucket, key: key, body: nil, extra: [:], maxBytes: max(maxBytes, HTTPDataLoader.maxFailureBodyBytes), call)
            switch status {
            case 200:
                guard body.count <= maxBytes else { throw ImagoError(.tooLarge(limit: Int64(maxBytes)), url: nil) }
                return body
            case 404: return nil
            default: throw Self.failure(status, body, bucket: bucket, key: key)
            }
        }

        /// Writes `data` as `key` in `bucket`. With `onlyIfAbsent` the write is S3's conditional
        /// `PUT` (`If-None-Match: *`): false when an object is there already (412), and nothing is
        /// written.
        @discardableResult
        public func putObject(
            bucket: String, key: String, data: Data, contentType: String = "application/octet-stream", onlyIfAbsent: Bool = false, _ call: ObjectStoreCall
        ) async throws(ImagoError) -> Bool {
            var extra: HeaderFields = ["Content-Type": contentType]
            if onlyIfAbsent { extra["If-None-Match"] = "*" }
            let (status, _, body) = try await send(.PUT, bucket: bucket, key: key, body: data, extra: extra, maxBytes: 64 << 10, call)
            switch status {
            case 200: return true
            // 412: there is one; 409: another conditional write of it is under way.
            case 412 where onlyIfAbsent, 409 where onlyIfAbsent: return false
            default: throw Self.failure(status, body, bucket: bucket, key: key)
            }
        }

        /// Removes `key` from `bucket` (S3 answers 204 whether it was there or not).
        public func deleteObject(bucket: String, key: String, _ call: ObjectStoreCall) async throws(ImagoError) {
            let (status, _, body) = try await send(.DELETE, bucket: bucket, key: key, body: nil, extra: [:], maxBytes: 64 << 10, call)
            guard status == 204 || status == 200 || status == 404 else { throw Self.failure(status, body, bucket: bucket, key: key) }
        }

        private func send(
            _ method: HTTPMethod, bucket: String, key: String, body: Data?, extra: HeaderFields, maxBytes: Int, _ call: ObjectStoreCall
        ) async throws(ImagoError) -> (status: Int, headers: HeaderFields, body: Data) {
            guard S3Object.isBucketName(bucket), !key.isEmpty else { throw ImagoError(.invalidURL, url: nil) }
            let url = configuration.httpURL(for: S3Object(bucket: bucket, key: key, version: nil), region: configuration.region)
            var headers = extra
            if let credentials = try await signingCredentials(for: url, network: call.network) {
                let hash = body.map { SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined() } ?? AWSSignatureV4.emptyPayloadHash
                headers = AWSSignatureV4(credentials: credentials, region: configuration.region).headers(
                    method: method.rawValue, url: url, date: Date(), extra: extra, payloadHash: hash)
                // The client sends the same Host itself.
                headers.remove("Host")
            }
            // The URL carries no credential: they are in the signed headers, which no error shows.
            return try await http.small(
                method, url, headers: headers, body: body, timeoutWithoutBytes: call.timeoutWithoutBytes, maxBytes: maxBytes,
                proxies: call.network.proxies, trustRoots: call.network.trustRoots)
        }

        private static func failure(_ status: Int, _ body: Data, bucket: String, key: String) -> ImagoError {
            var failure = ImagoError(.httpStatus(status), url: URL(string: "s3://\(bucket)/" + AWSSignatureV4.awsEncoded(key, keepingSlashes: true)))
            failure.reason = ObjectStoreErrorDocument.s3(status: status, body: body) ?? "S3 HTTP \(status)"
            return failure
        }
    }

#endif
