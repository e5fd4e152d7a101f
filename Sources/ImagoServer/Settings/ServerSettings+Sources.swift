import Foundation
import Imago

extension ServerSettings {
    /// Where sources may come from and how they are fetched: hosts, addresses, proxies, the local root, S3, GCS and Swift.
    static let sources: [ServerSetting] = [
        .text("--allowed-hosts", "IMAGO_ALLOWED_HOSTS", "hosts sources may come from, comma-separated (.example.com takes subdomains); default any public host")
        {
            $0.allowedHosts = ServerSetting.list($1)
        },
        .boolean(
            "--cookie-passthrough", "IMAGO_COOKIE_PASSTHROUGH", peers: [.boolean("IMGPROXY_COOKIE_PASSTHROUGH")],
            "the client's cookies go on to a source on the host it asked (X-Forwarded-Host, else Host)", \.passesCookies),
        ServerSetting(
            "--cookie-base-url", "IMAGO_COOKIE_BASE_URL", peers: [.same("IMGPROXY_COOKIE_BASE_URL")],
            "the URL whose host the client's cookies belong to, instead of the host it asked (default none)"
        ) { configuration, text, _ throws(ServerError) in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw ServerSetting.invalid("--cookie-base-url", "IMAGO_COOKIE_BASE_URL")
            }
            configuration.cookieBaseURL = url
        },
        .boolean(
            "--cookie-passthrough-all", "IMAGO_COOKIE_PASSTHROUGH_ALL", peers: [.boolean("IMGPROXY_COOKIE_PASSTHROUGH_ALL")],
            "with --cookie-passthrough, the client's cookies go on to every http(s) source", \.passesAllCookies),
        .boolean(
            "--allow-private-addresses", "IMAGO_ALLOW_PRIVATE_ADDRESSES", switch: true,
            "let sources resolve to loopback, link-local and private addresses", showsTrueFalse: true, \.allowsPrivateAddresses),
        .boolean(
            "--allow-loopback-addresses", "IMAGO_ALLOW_LOOPBACK_ADDRESSES", peers: [.boolean("IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES")],
            "let sources resolve to loopback addresses (true/false; default false)"
        ) { $0.internalSourceAddresses.set(.loopback, allowed: $1) },
        .boolean(
            "--allow-link-local-addresses", "IMAGO_ALLOW_LINK_LOCAL_ADDRESSES", peers: [.boolean("IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES")],
            "let sources resolve to link-local addresses, where cloud metadata services answer (true/false; default false)"
        ) { $0.internalSourceAddresses.set(.linkLocal, allowed: $1) },
        .boolean(
            "--allow-private-network-addresses", "IMAGO_ALLOW_PRIVATE_NETWORK_ADDRESSES", peers: [.boolean("IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES")],
            "let sources resolve to private-network addresses: RFC 1918, CGNAT, IPv6 ULA (true/false; default false, imgproxy's true)"
        ) { $0.internalSourceAddresses.set(.privateNetwork, allowed: $1) },
        .text(
            "--allowed-sources", "IMAGO_ALLOWED_SOURCES", peers: [.same("IMGPROXY_ALLOWED_SOURCES")],
            "source URL prefixes allowed, comma-separated, * matching anything but / (others are 404); default any"
        ) { $0.allowedSources = ServerSetting.list($1) },
        .text(
            "--user-agent", "IMAGO_USER_AGENT", peers: [.same("IMGPROXY_USER_AGENT"), .thumbor("HTTP_LOADER_DEFAULT_USER_AGENT")],
            "User-Agent sources are fetched with (default Imago/0.1)"
        ) {
            $0.userAgent = $1.replacingOccurrences(of: "%current_version", with: "0.1")
        },
        .integer(
            "--max-redirects", "IMAGO_MAX_REDIRECTS", 0...100, peers: [.same("IMGPROXY_MAX_REDIRECTS"), .thumbor("HTTP_LOADER_MAX_REDIRECTS")],
            "redirects a source may take", \.maxRedirects),
        .boolean(
            "--ignore-certificate-errors", "IMAGO_IGNORE_CERTIFICATE_ERRORS",
            peers: [.boolean("IMGPROXY_IGNORE_SSL_VERIFICATION"), .thumborNot("HTTP_LOADER_VALIDATE_CERTS")],
            "fetch https sources without checking their certificates", showsTrueFalse: true, \.ignoresCertificateErrors),
        .text(
            "--local-root", "IMAGO_LOCAL_ROOT", peers: [.same("IMGPROXY_LOCAL_FILESYSTEM_ROOT"), .thumbor("FILE_LOADER_ROOT_PATH")],
            "folder served as local:///name sources; default none"
        ) {
            $0.localRoot = URL(fileURLWithPath: $1)
        },
        ServerSetting(
            "--proxy", "IMAGO_PROXY",
            "HTTP proxy of http and https sources, http://user:password@host:port (default curl's http_proxy, https_proxy, all_proxy)"
        ) { configuration, text, _ throws(ServerError) in
            guard let proxy = HTTPProxy(url: text) else { throw ServerError(status: 500, "--proxy (IMAGO_PROXY) is not an http:// proxy URL") }
            configuration.proxies.http = proxy
            configuration.proxies.https = proxy
        },
        .text("--no-proxy", "IMAGO_NO_PROXY", "hosts reached without the proxy, comma-separated, as curl's no_proxy (default no_proxy)") {
            $0.proxies.noProxy = ServerSetting.list($1)
        },
        ServerSetting(
            "--s3", "IMAGO_USE_S3", peers: [.boolean("IMGPROXY_USE_S3")], switch: true,
            "read s3://bucket/key[?version] sources, signed with AWS_ACCESS_KEY_ID… or ~/.aws/credentials (true/false; default false)"
        ) { configuration, text, values throws(ServerError) in
            configuration.readsS3 = try ServerSetting.truth(text, "--s3", "IMAGO_USE_S3")
            // As the AWS tools: region and key from their variables; the settings below win.
            let standard = S3Configuration.standard(environment: values)
            configuration.s3.region = standard.region
            configuration.s3.credentials = standard.credentials
        },
        ServerSetting(
            "--s3-assume-role", "IMAGO_S3_ASSUME_ROLE", peers: [.same("IMGPROXY_S3_ASSUME_ROLE_ARN")],
            "the ARN of an IAM role to read S3 as: its temporary credentials asked of STS (AWS_ENDPOINT_URL_STS, else AWS's) with the AWS_* key, renewed before they expire"
        ) { configuration, text, values throws(ServerError) in
            guard text.hasPrefix("arn:"), text.count <= 2048 else { throw ServerSetting.invalid("--s3-assume-role", "IMAGO_S3_ASSUME_ROLE") }
            var role = configuration.s3.role ?? S3Configuration.AssumedRole(arn: text)
            role.arn = text
            role.stsEndpoint = S3Configuration.AssumedRole.stsEndpoint(environment: values)
            configuration.s3.role = role
        },
        .text(
            "--s3-assume-role-external-id", "IMAGO_S3_ASSUME_ROLE_EXTERNAL_ID", peers: [.same("IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID")],
            "the external ID the role's trust policy asks for (read after --s3-assume-role, which it goes with)"
        ) { $0.s3.role?.externalID = $1 },
        .text("--s3-region", "IMAGO_S3_REGION", peers: [.same("IMGPROXY_S3_REGION")], "the S3 region (default AWS_REGION, else us-west-1)") {
            $0.s3.region = $1
        },
        ServerSetting(
            "--s3-endpoint", "IMAGO_S3_ENDPOINT", peers: [.same("IMGPROXY_S3_ENDPOINT")],
            "an S3-compatible server's URL (host:port is http); trusted whatever its address (default Amazon S3)"
        ) { configuration, text, _ throws(ServerError) in
            guard let url = S3Configuration.endpointURL(text) else { throw ServerSetting.invalid("--s3-endpoint", "IMAGO_S3_ENDPOINT") }
            configuration.s3.endpoint = url
        },
        .boolean(
            "--s3-endpoint-path-style", "IMAGO_S3_ENDPOINT_USE_PATH_STYLE", peers: [.boolean("IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE")],
            "with an endpoint, the bucket in the path, not the host name (true/false; default true)"
        ) { $0.s3.usesPathStyle = $1 },
        .text(
            "--s3-allowed-buckets", "IMAGO_S3_ALLOWED_BUCKETS", peers: [.same("IMGPROXY_S3_ALLOWED_BUCKETS")],
            "the only S3 buckets read, comma-separated (others are 403)"
        ) {
            $0.s3.buckets.allowed = ServerSetting.list($1)
        },
        .text("--s3-denied-buckets", "IMAGO_S3_DENIED_BUCKETS", peers: [.same("IMGPROXY_S3_DENIED_BUCKETS")], "S3 buckets never read, comma-separated (403)") {
            $0.s3.buckets.denied = ServerSetting.list($1)
        },
        ServerSetting(
            "--gcs", "IMAGO_USE_GCS", peers: [.boolean("IMGPROXY_USE_GCS")], switch: true,
            "read gs://bucket/object[?generation] sources, as the service account of --gcs-key or GOOGLE_APPLICATION_CREDENTIALS (true/false; default false)"
        ) { configuration, text, values throws(ServerError) in
            configuration.readsGCS = try ServerSetting.truth(text, "--gcs", "IMAGO_USE_GCS")
            // As Google's libraries: key file and emulator from their variables; the settings below win.
            let standard = GCSConfiguration.standard(environment: values)
            configuration.gcs.endpoint = standard.endpoint
            configuration.gcs.account = standard.account
        },
        ServerSetting(
            "--gcs-key", "IMAGO_GCS_KEY", peers: [.same("IMGPROXY_GCS_KEY")],
            "a service account key: its JSON, or the path of its file (default none: unsigned requests)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.gcs.account = try ServerSetting.gcsAccount(text, "--gcs-key", "IMAGO_GCS_KEY")
        },
        ServerSetting(
            "--gcs-endpoint", "IMAGO_GCS_ENDPOINT", peers: [.same("IMGPROXY_GCS_ENDPOINT")],
            "a GCS JSON API server's URL (an emulator); trusted whatever its address (default Google's)"
        ) { configuration, text, _ throws(ServerError) in
            guard let url = S3Configuration.endpointURL(text) else { throw ServerSetting.invalid("--gcs-endpoint", "IMAGO_GCS_ENDPOINT") }
            configuration.gcs.endpoint = url
        },
        .text(
            "--gcs-allowed-buckets", "IMAGO_GCS_ALLOWED_BUCKETS", peers: [.same("IMGPROXY_GCS_ALLOWED_BUCKETS")],
            "the only GCS buckets read, comma-separated (others are 403)"
        ) {
            $0.gcs.buckets.allowed = ServerSetting.list($1)
        },
        .text(
            "--gcs-denied-buckets", "IMAGO_GCS_DENIED_BUCKETS", peers: [.same("IMGPROXY_GCS_DENIED_BUCKETS")], "GCS buckets never read, comma-separated (403)"
        ) {
            $0.gcs.buckets.denied = ServerSetting.list($1)
        },
        ServerSetting(
            "--swift", "IMAGO_USE_SWIFT", peers: [.boolean("IMGPROXY_USE_SWIFT")], switch: true,
            "read swift://container/object sources from OpenStack Swift, signed in with v1 auth (true/false; default false)"
        ) { configuration, text, values throws(ServerError) in
            configuration.readsSwift = try ServerSetting.truth(text, "--swift", "IMAGO_USE_SWIFT")
            // As python-swiftclient: ST_AUTH, ST_USER, ST_KEY; the settings below win.
            let standard = SwiftConfiguration.standard(environment: values)
            configuration.swift.authURL = standard.authURL
            configuration.swift.user = standard.user
            configuration.swift.key = standard.key
        },
        ServerSetting(
            "--swift-auth-url", "IMAGO_SWIFT_AUTH_URL", peers: [.same("IMGPROXY_SWIFT_AUTH_URL")],
            "Swift's v1 auth URL (http://host:8080/auth/v1.0); it and the storage URL it answers are trusted whatever their address"
        ) { configuration, text, _ throws(ServerError) in
            guard let url = S3Configuration.endpointURL(text) else { throw ServerSetting.invalid("--swift-auth-url", "IMAGO_SWIFT_AUTH_URL") }
            configuration.swift.authURL = url
        },
        .text("--swift-user", "IMAGO_SWIFT_USERNAME", peers: [.same("IMGPROXY_SWIFT_USERNAME")], "the Swift user (account:user for TempAuth)") {
            $0.swift.user = $1
        },
        .text("--swift-key", "IMAGO_SWIFT_API_KEY", peers: [.same("IMGPROXY_SWIFT_API_KEY")], "the Swift user's key, sent only to the auth URL") {
            $0.swift.key = $1
        },
        ServerSetting(
            "--swift-auth-version", "IMAGO_SWIFT_AUTH_VERSION", peers: [.same("IMGPROXY_SWIFT_AUTH_VERSION")],
            "0 (detect) or 1: Imago signs in with v1 auth only; 2 and 3 (Keystone) stop the server"
        ) { _, text, _ throws(ServerError) in
            guard ["0", "1", ""].contains(text.trimmingCharacters(in: .whitespaces)) else {
                throw ServerError(status: 500, "--swift-auth-version (IMAGO_SWIFT_AUTH_VERSION) \(text.prefix(8)): only Swift's v1 auth is supported")
            }
        },
        .seconds(
            "--swift-connect-timeout", "IMAGO_SWIFT_CONNECT_TIMEOUT", peers: [.same("IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS")],
            "seconds a connection to Swift's auth URL or storage may take to be made", \.swift.connectTimeout),
        .seconds(
            "--swift-timeout", "IMAGO_SWIFT_TIMEOUT", peers: [.same("IMGPROXY_SWIFT_TIMEOUT_SECONDS")],
            "seconds Swift may go without sending a byte (within --download-timeout's)", \.swift.timeout),
        .text(
            "--swift-allowed-containers", "IMAGO_SWIFT_ALLOWED_CONTAINERS", peers: [.same("IMGPROXY_SWIFT_ALLOWED_BUCKETS")],
            "the only Swift containers read, comma-separated (others are 403)"
        ) {
            $0.swift.containers.allowed = ServerSetting.list($1)
        },
        .text(
            "--swift-denied-containers", "IMAGO_SWIFT_DENIED_CONTAINERS", peers: [.same("IMGPROXY_SWIFT_DENIED_BUCKETS")],
            "Swift containers never read, comma-separated (403)"
        ) {
            $0.swift.containers.denied = ServerSetting.list($1)
        },
    ]
}
