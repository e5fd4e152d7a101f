import Foundation

/// Where ``S3DataLoader`` sends its requests, and with which key.
public struct S3Configuration: Sendable {
    /// The region requests are signed for and, without an ``endpoint``, sent to. Default
    /// `us-west-1`, imgproxy's.
    public var region: String
    /// An S3-compatible server (`http://127.0.0.1:9000`); nil for Amazon S3 itself.
    public var endpoint: URL?
    /// With an ``endpoint``: the bucket in the path (`endpoint/bucket/key`, the default, as
    /// imgproxy's `IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE`), or in the host name (`bucket.endpoint/key`).
    public var usesPathStyle: Bool
    /// The key requests are signed with; nil sends them unsigned (public buckets).
    public var credentials: AWSCredentials?
    /// Which buckets may be read.
    public var buckets: BucketRule
    /// A role to assume with ``credentials`` (imgproxy's `IMGPROXY_S3_ASSUME_ROLE_ARN`): requests
    /// are then signed with its temporary credentials, asked of STS again before they expire.
    public var role: AssumedRole?

    /// An IAM role and where to ask for its credentials.
    public struct AssumedRole: Sendable, Hashable {
        /// The role's ARN (`arn:aws:iam::123456789012:role/reader`).
        public var arn: String
        /// The external ID the role's trust policy asks for (`IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID`).
        public var externalID: String?
        /// STS: `AWS_ENDPOINT_URL_STS` or `AWS_ENDPOINT_URL` when set, as the AWS SDKs read them,
        /// else `https://sts.REGION.amazonaws.com`.
        public var stsEndpoint: URL?

        /// A role by its ARN.
        public init(arn: String, externalID: String? = nil, stsEndpoint: URL? = nil) {
            (self.arn, self.externalID, self.stsEndpoint) = (arn, externalID, stsEndpoint)
        }

        /// STS's endpoint as `environment` names it (`AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`); nil for AWS's own.
        public static func stsEndpoint(environment: [String: String]) -> URL? {
            [environment["AWS_ENDPOINT_URL_STS"], environment["AWS_ENDPOINT_URL"]].compactMap { $0 }.first { !$0.isEmpty }
                .flatMap(S3Configuration.endpointURL)
        }
    }

    /// A configuration from its parts.
    public init(
        region: String = "us-west-1", endpoint: URL? = nil, usesPathStyle: Bool = true, credentials: AWSCredentials? = nil,
        buckets: BucketRule = BucketRule()
    ) {
        self.region = region
        self.endpoint = endpoint
        self.usesPathStyle = usesPathStyle
        self.credentials = credentials
        self.buckets = buckets
    }

    /// What the AWS tools would use: the region from `AWS_REGION` or `AWS_DEFAULT_REGION`, the
    /// endpoint from `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, and
    /// ``AWSCredentials/standard(environment:)``.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Configuration {
        let region = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty }
        let endpoint = [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"]].compactMap { $0 }.first { !$0.isEmpty }
        return S3Configuration(
            region: region ?? "us-west-1", endpoint: endpoint.flatMap(endpointURL), credentials: AWSCredentials.standard(environment: environment))
    }

    /// An endpoint as operators write it: a URL, or `host:port` taken as http (imgproxy's rule).
    public static func endpointURL(_ text: String) -> URL? {
        let written = text.hasPrefix("http://") || text.hasPrefix("https://") ? text : "http://" + text
        guard let url = URL(string: written), url.host?.isEmpty == false else { return nil }
        return url
    }

    /// Letters, digits, `.`, `-`, `_` (older buckets have capitals and underscores), 1 to 255:
    /// nothing that could change the host or path a request goes to.
    public static func isBucketName(_ name: String) -> Bool {
        (1...255).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2E || byte == 0x2D || byte == 0x5F
            }
            && !name.hasPrefix(".") && !name.contains("..")
    }

    /// `us-east-1`, `eu-central-2`: what a region learnt from a response must look like before a
    /// host name is made of it.
    static func isRegionName(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 32 && text.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }
}
