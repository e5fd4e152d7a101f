// Built with the `HTTPClientLoader` trait (on by default): requests go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation
    import NIOHTTP1

    /// Whole small objects read, written and removed in one bucket the operator named (a store of
    /// results, not a source), as the loader's service account with the read-write scope; no
    /// bucket rule (the bucket is the operator's), no redirect followed.
    extension GCSDataLoader {
        /// The bytes of `name` in `bucket`, nil when GCS has no such object (404); more than
        /// `maxBytes` is an error, as is any status but 200 and 404 (with GCS's message).
        public func object(bucket: String, name: String, maxBytes: Int, _ call: ObjectStoreCall) async throws(ImagoError) -> Data? {
            let (status, body) = try await send(
                .GET, mediaURL(bucket: bucket, object: name, generation: nil), bucket: bucket, name: name, body: nil,
                maxBytes: max(maxBytes, HTTPDataLoader.maxFailureBodyBytes), call)
            switch status {
            case 200:
                guard body.count <= maxBytes else { throw ImagoError(.tooLarge(limit: Int64(maxBytes)), url: nil) }
                return body
            case 404: return nil
            default: throw Self.failure(status, body, bucket: bucket, name: name)
            }
        }

        /// Writes `data` as `name` in `bucket` (a media upload, which replaces an object whole).
        /// With `onlyIfAbsent`, GCS's precondition `ifGenerationMatch=0`: false when an object is
        /// there already (412), and nothing is written.
        @discardableResult
        public func putObject(
            bucket: String, name: String, data: Data, onlyIfAbsent: Bool = false, _ call: ObjectStoreCall
        ) async throws(ImagoError)
            -> Bool
        {
            var text = base + "/upload/storage/v1/b/" + bucket + "/o?uploadType=media&name=" + AWSSignatureV4.awsEncoded(name, keepingSlashes: false)
            if onlyIfAbsent { text += "&ifGenerationMatch=0" }
            guard let url = URL(string: text) else { throw ImagoError(.invalidURL, url: nil) }
            let (status, body) = try await send(.POST, url, bucket: bucket, name: name, body: data, maxBytes: 64 << 10, call)
            switch status {
            case 200: return true
            case 412 where onlyIfAbsent: return false
            default: throw Self.failure(status, body, bucket: bucket, name: name)
            }
        }

        /// Removes `name` from `bucket`; none there is no error.
        public func deleteObject(bucket: String, name: String, _ call: ObjectStoreCall) async throws(ImagoError) {
            guard let url = URL(string: base + "/storage/v1/b/" + bucket + "/o/" + AWSSignatureV4.awsEncoded(name, keepingSlashes: false)) else {
                throw ImagoError(.invalidURL, url: nil)
            }
            let (status, body) = try await send(.DELETE, url, bucket: bucket, name: name, body: nil, maxBytes: 64 << 10, call)
            guard (200..<300).contains(status) || status == 404 else { throw Self.failure(status, body, bucket: bucket, name: name) }
        }

        private func send(
            _ method: HTTPMethod, _ url: URL, bucket: String, name: String, body: Data?, maxBytes: Int, _ call: ObjectStoreCall
        ) async throws(ImagoError) -> (status: Int, body: Data) {
            guard S3Object.isBucketName(bucket), !name.isEmpty, name.utf8.count <= 1024 else { throw ImagoError(.invalidURL, url: nil) }
            var headers: HeaderFields = body == nil ? [:] : ["Content-Type": "application/octet-stream"]
            if let writeToken {
                let signIn = DataLoadRequest(
                    url: url, timeoutWithoutBytes: call.timeoutWithoutBytes, maxRedirects: 0, proxies: call.network.proxies,
                    trustRoots: call.network.trustRoots)
                headers["Authorization"] = "Bearer " + (try await writeToken.value(using: http, request: signIn))
            }
            // The URL carries no credential: the token is in a header, which no error shows.
            let (status, _, answer) = try await http.small(
                method, url, headers: headers, body: body, timeoutWithoutBytes: call.timeoutWithoutBytes, maxBytes: maxBytes,
                proxies: call.network.proxies, trustRoots: call.network.trustRoots)
            return (status, answer)
        }

        private static func failure(_ status: Int, _ body: Data, bucket: String, name: String) -> ImagoError {
            var failure = ImagoError(.httpStatus(status), url: URL(string: "gs://\(bucket)/" + AWSSignatureV4.awsEncoded(name, keepingSlashes: true)))
            failure.reason = ObjectStoreErrorDocument.gcs(status: status, body: body) ?? "GCS HTTP \(status)"
            return failure
        }
    }

#endif
