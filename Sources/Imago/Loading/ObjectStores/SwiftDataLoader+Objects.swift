// Built with the `HTTPClientLoader` trait (on by default): requests go over Imago's HTTP client.
#if HTTPClientLoader

    import Foundation
    import NIOHTTP1

    /// Whole small objects read, written and removed in one container the operator named (a store
    /// of results, not a source), signed in as the loader signs in; no container rule (the
    /// container is the operator's), no redirect followed.
    extension SwiftDataLoader {
        /// The bytes of `object` in `container`, nil when Swift has none (404); more than
        /// `maxBytes` is an error, as is any status but 200 and 404.
        public func object(container: String, object: String, maxBytes: Int, _ call: ObjectStoreCall) async throws(ImagoError) -> Data? {
            let (status, body) = try await send(
                .GET, container: container, object: object, body: nil, extra: [:], maxBytes: max(maxBytes, HTTPDataLoader.maxFailureBodyBytes), call)
            switch status {
            case 200:
                guard body.count <= maxBytes else { throw ImagoError(.tooLarge(limit: Int64(maxBytes)), url: nil) }
                return body
            case 404: return nil
            default: throw Self.failure(status, body, container: container, object: object)
            }
        }

        /// Writes `data` as `object` in `container`. With `onlyIfAbsent`, Swift's conditional
        /// `PUT` (`If-None-Match: *`): false when an object is there already (412), and nothing
        /// is written.
        @discardableResult
        public func putObject(
            container: String, object: String, data: Data, onlyIfAbsent: Bool = false, _ call: ObjectStoreCall
        ) async throws(ImagoError) -> Bool {
            var extra: HeaderFields = ["Content-Type": "application/octet-stream"]
            if onlyIfAbsent { extra["If-None-Match"] = "*" }
            let (status, body) = try await send(.PUT, container: container, object: object, body: data, extra: extra, maxBytes: 64 << 10, call)
            switch status {
            case 200..<300: return true
            case 412 where onlyIfAbsent: return false
            default: throw Self.failure(status, body, container: container, object: object)
            }
        }

        /// Removes `object` from `container`; none there is no error.
        public func deleteObject(container: String, object: String, _ call: ObjectStoreCall) async throws(ImagoError) {
            let (status, body) = try await send(.DELETE, container: container, object: object, body: nil, extra: [:], maxBytes: 64 << 10, call)
            guard (200..<300).contains(status) || status == 404 else { throw Self.failure(status, body, container: container, object: object) }
        }

        private func send(
            _ method: HTTPMethod, container: String, object: String, body: Data?, extra: HeaderFields, maxBytes: Int, _ call: ObjectStoreCall
        ) async throws(ImagoError) -> (status: Int, body: Data) {
            guard !container.isEmpty, container.utf8.count <= 256, !container.contains("/"), !object.isEmpty, object.utf8.count <= 1024,
                let name = URL(
                    string: "swift://\(AWSSignatureV4.awsEncoded(container, keepingSlashes: false))/\(AWSSignatureV4.awsEncoded(object, keepingSlashes: true))")
            else { throw ImagoError(.invalidURL, url: nil) }
            let signIn = DataLoadRequest(
                url: name, timeoutWithoutBytes: min(call.timeoutWithoutBytes, configuration.timeout), maxRedirects: 0, proxies: call.network.proxies,
                trustRoots: call.network.trustRoots)
            let signedIn = try await session.value(using: http, request: signIn)
            var headers = extra
            headers["X-Auth-Token"] = signedIn.token
            let (status, _, answer) = try await http.small(
                method, Self.objectURL(storage: signedIn.storage, container: container, object: object), headers: headers, body: body,
                timeoutWithoutBytes: min(call.timeoutWithoutBytes, configuration.timeout), maxBytes: maxBytes, proxies: call.network.proxies,
                trustRoots: call.network.trustRoots, connectTimeout: configuration.connectTimeout)
            // A token the store no longer takes: the next call signs in again.
            if status == 401 { session.forget(signedIn.token) }
            return (status, answer)
        }

        private static func failure(_ status: Int, _ body: Data, container: String, object: String) -> ImagoError {
            var failure = ImagoError(.httpStatus(status), url: URL(string: "swift://\(container)/" + AWSSignatureV4.awsEncoded(object, keepingSlashes: true)))
            failure.reason = ObjectStoreErrorDocument.swift(status: status, body: body) ?? "Swift HTTP \(status)"
            return failure
        }
    }

#endif
