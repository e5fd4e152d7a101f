// Built with the `HTTPClientLoader` trait (on by default): signing uses swift-crypto.
#if HTTPClientLoader

    import Crypto
    import Foundation

    /// AWS Signature Version 4 for requests without a body, written from AWS's "Create a signed
    /// AWS API request" and "Authenticating Requests (AWS Signature Version 4)" for S3: a canonical
    /// request (method, URI, query, the signed headers, the payload's hash), its hash in a string to
    /// sign with the date and scope, and an HMAC-SHA256 chain of the secret, date, region, service
    /// and `aws4_request` as the key.
    public struct AWSSignatureV4: Sendable {
        /// Whose key signs.
        public var credentials: AWSCredentials
        /// The region of the scope (`us-east-1`).
        public var region: String
        /// The service of the scope (`s3`).
        public var service: String

        /// The SHA-256 of an empty body, the payload hash of every GET.
        public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

        /// A signer for `service` in `region`.
        public init(credentials: AWSCredentials, region: String, service: String = "s3") {
            self.credentials = credentials
            self.region = region
            self.service = service
        }

        /// The headers that sign a request for `url` made at `date`: `Host`, `X-Amz-Date`,
        /// `X-Amz-Content-Sha256`, `X-Amz-Security-Token` with temporary credentials, and
        /// `Authorization`. Headers in `extra` (`Range`, say) are signed too and must be sent as given.
        /// The URL's path and query must already be percent-encoded as AWS encodes them
        /// (``awsEncoded(_:keepingSlashes:)``).
        public func headers(
            method: String = "GET", url: URL, date: Date, extra: HeaderFields = [:], payloadHash: String = emptyPayloadHash
        )
            -> HeaderFields
        {
            let stamp = Self.timestamp(date)
            let day = String(stamp.prefix(8))
            var signed: [(name: String, value: String)] = [
                ("host", Self.hostHeader(of: url)),
                ("x-amz-content-sha256", payloadHash),
                ("x-amz-date", stamp),
            ]
            if let token = credentials.sessionToken { signed.append(("x-amz-security-token", token)) }
            for field in extra { signed.append((field.name.lowercased(), field.value)) }
            signed.sort { $0.name < $1.name }

            let canonicalHeaders = signed.map { "\($0.name):\(Self.trimmed($0.value))\n" }.joined()
            let signedNames = signed.map(\.name).joined(separator: ";")
            let path = url.path(percentEncoded: true)
            let canonicalRequest = [
                method, path.isEmpty ? "/" : path, Self.canonicalQuery(url.query(percentEncoded: true)), canonicalHeaders, signedNames, payloadHash,
            ].joined(separator: "\n")
            let scope = "\(day)/\(region)/\(service)/aws4_request"
            let stringToSign = ["AWS4-HMAC-SHA256", stamp, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")

            var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
            for part in [day, region, service, "aws4_request"] {
                key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
            }
            let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))

            var headers: HeaderFields = [:]
            headers["Host"] = signed.first { $0.name == "host" }?.value
            headers["X-Amz-Date"] = stamp
            headers["X-Amz-Content-Sha256"] = payloadHash
            if let token = credentials.sessionToken { headers["X-Amz-Security-Token"] = token }
            for field in extra { headers[field.name] = field.value }
            headers["Authorization"] =
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)"
            return headers
        }

        /// `text` percent-encoded as SigV4 wants: every byte but `A–Z a–z 0–9 - . _ ~` (and `/` when
        /// `keepingSlashes`, for an object key in a path) as `%XX` in capitals.
        public static func awsEncoded(_ text: String, keepingSlashes: Bool) -> String {
            var out = ""
            out.reserveCapacity(text.utf8.count)
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    out.unicodeScalars.append(UnicodeScalar(byte))
                case UInt8(ascii: "/") where keepingSlashes:
                    out.append("/")
                default:
                    let digits = Array("0123456789ABCDEF")
                    out.append("%")
                    out.append(digits[Int(byte >> 4)])
                    out.append(digits[Int(byte & 0x0F)])
                }
            }
            return out
        }

        /// `Host` as sent: the port only when it is not the scheme's own.
        static func hostHeader(of url: URL) -> String {
            let host = url.host(percentEncoded: false) ?? ""
            let name = host.contains(":") ? "[\(host)]" : host
            guard let port = url.port else { return name }
            let isDefault = (url.scheme?.lowercased() == "https" && port == 443) || (url.scheme?.lowercased() == "http" && port == 80)
            return isDefault ? name : "\(name):\(port)"
        }

        /// The query's parameters sorted by name then value, each already encoded (`versionId=…`).
        private static func canonicalQuery(_ query: String?) -> String {
            guard let query, !query.isEmpty else { return "" }
            var pairs: [(name: String, value: String)] = []
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                pairs.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
            }
            pairs.sort { left, right in left.name == right.name ? left.value < right.value : left.name < right.name }
            return pairs.map { pair in pair.name + "=" + pair.value }.joined(separator: "&")
        }

        /// Leading and trailing blanks dropped, inner runs of spaces made one.
        private static func trimmed(_ value: String) -> String {
            value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }

        /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
        static func timestamp(_ date: Date) -> String {
            var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            func two(_ value: Int32) -> String { value < 10 ? "0" + String(value) : String(value) }
            let day: String = String(parts.tm_year + 1900) + two(parts.tm_mon + 1) + two(parts.tm_mday)
            let time: String = two(parts.tm_hour) + two(parts.tm_min) + two(parts.tm_sec)
            return day + "T" + time + "Z"
        }

        private static func hex(_ bytes: some Sequence<UInt8>) -> String {
            let digits = Array("0123456789abcdef")
            var out = ""
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
            return out
        }
    }

#endif
