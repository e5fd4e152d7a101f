// Built with the `HTTPClientLoader` trait (on by default): the call goes over Imago's HTTP client.
#if HTTPClientLoader

    import Crypto
    import Foundation

    /// One action of an AWS service, signed with Signature Version 4: the JSON protocol's
    /// (Secrets Manager, Systems Manager: a `POST` of `application/x-amz-json-1.1` with the action
    /// in `X-Amz-Target`) or the query protocol's (STS: a form `POST`, an XML answer). For a few
    /// small calls (where `imago serve` reads its configuration from, an S3 role's credentials),
    /// not for images.
    public struct AWSServiceCall: Sendable {
        /// The service's signing name (`secretsmanager`, `ssm`, `sts`).
        public var service: String
        /// The region of the scope and the default endpoint.
        public var region: String
        /// Where the calls go: `https://SERVICE.REGION.amazonaws.com/` unless the environment says.
        public var endpoint: URL
        /// Whose key signs; nil sends the call unsigned (AWS refuses it).
        public var credentials: AWSCredentials?
        /// The proxies and certificate authorities of the environment.
        public var network: NetworkEnvironment

        /// A caller for `service` in `region`, with `credentials` and the endpoint from
        /// `environment`: `AWS_ENDPOINT_URL_<SERVICE>` (`AWS_ENDPOINT_URL_SECRETS_MANAGER`,
        /// `AWS_ENDPOINT_URL_SSM`, `AWS_ENDPOINT_URL_STS`), else `AWS_ENDPOINT_URL`, as the AWS SDKs
        /// read them.
        public init(
            service: String, endpointVariable: String, region: String, credentials: AWSCredentials?, environment: [String: String]
        ) throws(ImagoError) {
            self.service = service
            self.region = region
            self.credentials = credentials
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

        /// A caller for `service` in `region` at `endpoint`.
        public init(service: String, region: String, endpoint: URL, credentials: AWSCredentials?, network: NetworkEnvironment) {
            (self.service, self.region, self.endpoint, self.credentials, self.network) = (service, region, endpoint, credentials, network)
        }

        /// The answer to the JSON protocol's `action` (`GetSecretValue`) with `input`: AWS's error
        /// type and message when it refuses, never the request's credentials.
        public func json(_ action: String, _ input: [String: any Sendable]) async throws(ImagoError) -> [String: Any] {
            let body: Data
            do {
                body = try JSONSerialization.data(withJSONObject: input, options: [.sortedKeys, .withoutEscapingSlashes])
            } catch {
                throw ImagoError(.invalidURL, url: endpoint)
            }
            let target = Self.targetPrefix[service, default: service] + "." + action
            let answer = try await post(
                action, body: body, headers: ["Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": target, "Accept": "application/json"])
            guard let object = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any] else {
                var failure = ImagoError(.httpStatus(502), url: endpoint)
                failure.reason = "\(service) \(action): the answer is not JSON"
                throw failure
            }
            return object
        }

        /// The XML answer to the query protocol's `action` (`AssumeRole`) of API `version` with
        /// `parameters`.
        public func query(_ action: String, version: String, _ parameters: [(String, String)]) async throws(ImagoError) -> Data {
            let form = ([("Action", action), ("Version", version)] + parameters)
                .map { AWSSignatureV4.awsEncoded($0.0, keepingSlashes: false) + "=" + AWSSignatureV4.awsEncoded($0.1, keepingSlashes: false) }
                .joined(separator: "&")
            return try await post(action, body: Data(form.utf8), headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"])
        }

        /// The signed `POST` of `body`; its answer's body when AWS says 200.
        private func post(_ action: String, body: Data, headers given: HeaderFields) async throws(ImagoError) -> Data {
            var headers = given
            if let credentials {
                let hash = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
                let url = endpoint.path.isEmpty ? endpoint.appendingPathComponent("") : endpoint
                headers = AWSSignatureV4(credentials: credentials, region: region, service: service).headers(
                    method: "POST", url: url, date: Date(), extra: headers, payloadHash: hash)
                // The client sends the same Host itself.
                headers.remove("Host")
            }
            let (status, _, answer) = try await HTTPDataLoader().small(
                .POST, endpoint, headers: headers, body: body, timeoutWithoutBytes: .seconds(30), maxBytes: 1 << 20,
                proxies: network.proxies, trustRoots: network.trustRoots)
            guard status == 200 else {
                var failure = ImagoError(.httpStatus(status == 200 ? 502 : status), url: endpoint)
                failure.reason = "\(service) \(action): " + Self.errorType(answer, status: status)
                throw failure
            }
            return answer
        }

        /// AWS's error as it sends it: a JSON document's `__type` and `message`, or an XML
        /// document's `Code` and `Message` (the signature check before any service answers in XML).
        static func errorType(_ answer: Data, status: Int) -> String {
            if let object = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any], let type = object["__type"] as? String {
                let message = ((object["message"] ?? object["Message"]) as? String).map { ": " + $0.prefix(200) } ?? ""
                return String(type.split(separator: "#").last ?? "") + message
            }
            let text = String(decoding: answer.prefix(4096), as: UTF8.self)
            if let code = element("Code", in: text) {
                return code.prefix(64) + (element("Message", in: text).map { ": " + $0.prefix(200) } ?? "")
            }
            return "HTTP \(status)"
        }

        /// The text of the first `<name>…</name>` in `text`, entities left as they are.
        public static func element(_ name: String, in text: String) -> String? {
            guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else {
                return nil
            }
            return String(text[start.upperBound..<end.lowerBound])
        }

        /// The `X-Amz-Target` prefixes of the services whose JSON names differ from their signing name.
        private static let targetPrefix = ["secretsmanager": "secretsmanager", "ssm": "AmazonSSM"]
    }

#endif
