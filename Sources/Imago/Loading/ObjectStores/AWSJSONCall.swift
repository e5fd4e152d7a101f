// Built with the `HTTPClientLoader` trait (on by default): the call goes over Imago's HTTP client.
#if HTTPClientLoader

    import Crypto
    import Foundation

    /// One action of an AWS service that speaks the JSON protocol (Secrets Manager, Systems
    /// Manager): a `POST` of `application/x-amz-json-1.1` with the action in `X-Amz-Target`, signed
    /// with Signature Version 4, its JSON answer returned. For a few small calls at start (where
    /// `imago serve` reads its configuration from), not for images.
    public struct AWSJSONCall: Sendable {
        /// The service's signing name and target prefix (`secretsmanager`, `ssm`).
        public var service: String
        /// The region of the scope and the default endpoint.
        public var region: String
        /// Where the calls go: `https://SERVICE.REGION.amazonaws.com/` unless the environment says.
        public var endpoint: URL
        /// Whose key signs; nil sends the call unsigned (AWS refuses it).
        public var credentials: AWSCredentials?
        /// The proxies and certificate authorities of the environment.
        public var network: NetworkEnvironment

        /// A caller for `service` in `region`, with the AWS tools' credentials and endpoint from
        /// `environment`: `AWS_ENDPOINT_URL_<SERVICE>` (`AWS_ENDPOINT_URL_SECRETS_MANAGER`,
        /// `AWS_ENDPOINT_URL_SSM`), else `AWS_ENDPOINT_URL`, as the AWS SDKs read them.
        public init(service: String, endpointVariable: String, region: String, environment: [String: String]) throws(ImagoError) {
            self.service = service
            self.region = region
            credentials = AWSCredentials.standard(environment: environment)
            network = NetworkEnvironment(environment)
            let given = [environment["AWS_ENDPOINT_URL_" + endpointVariable], environment["AWS_ENDPOINT_URL"]].compactMap { $0 }.first { !$0.isEmpty }
            let text = given ?? "https://\(service).\(region).amazonaws.com"
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
            else {
                var failure = ImagoError(.invalidURL, url: nil)
                failure.reason = "the \(service) endpoint is not an http(s) URL"
                throw failure
            }
            endpoint = url
        }

        /// The answer to `action` (`GetSecretValue`) with `input`: AWS's error type and message
        /// when it refuses, never the request's credentials.
        public func call(_ action: String, _ input: [String: any Sendable]) async throws(ImagoError) -> [String: Any] {
            let body: Data
            do {
                body = try JSONSerialization.data(withJSONObject: input, options: [.sortedKeys, .withoutEscapingSlashes])
            } catch {
                throw ImagoError(.invalidURL, url: endpoint)
            }
            let target = Self.targetPrefix[service, default: service] + "." + action
            var headers: HeaderFields = ["Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": target, "Accept": "application/json"]
            if let credentials {
                let hash = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
                let url = endpoint.path.isEmpty ? endpoint.appendingPathComponent("") : endpoint
                headers = AWSSignatureV4(credentials: credentials, region: region, service: service).headers(
                    method: "POST", url: url, date: Date(), extra: headers, payloadHash: hash)
                // The client sends the same Host itself.
                headers.remove("Host")
            }
            let http = HTTPDataLoader()
            let (status, _, answer) = try await http.small(
                .POST, endpoint, headers: headers, body: body, timeoutWithoutBytes: .seconds(30), maxBytes: 1 << 20,
                proxies: network.proxies, trustRoots: network.trustRoots)
            let object = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any]
            guard status == 200, let object else {
                var failure = ImagoError(.httpStatus(status == 200 ? 502 : status), url: endpoint)
                // The error's type and message as AWS sends them (`ResourceNotFoundException: …`).
                // or, from the signature check before the service, in an XML error document.
                let xmlCode = String(decoding: answer.prefix(4096), as: UTF8.self).components(separatedBy: "<Code>").dropFirst().first?
                    .components(separatedBy: "</Code>").first.map { String($0.prefix(64)) }
                let type = (object?["__type"] as? String).map { String($0.split(separator: "#").last ?? "") } ?? xmlCode ?? "HTTP \(status)"
                let message = ((object?["message"] ?? object?["Message"]) as? String).map { ": " + $0.prefix(200) } ?? ""
                failure.reason = "\(service) \(action): \(type)\(message)"
                throw failure
            }
            return object
        }

        /// The `X-Amz-Target` prefixes of the services whose JSON names differ from their signing name.
        private static let targetPrefix = ["secretsmanager": "secretsmanager", "ssm": "AmazonSSM"]
    }

#endif
