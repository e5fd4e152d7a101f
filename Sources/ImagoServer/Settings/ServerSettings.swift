import Foundation
import Imago

/// `imago serve`'s settings by name, from flags, then `IMAGO_*` variables, then the peer's own
/// (a flag wins): each declared once in ``all``, so docs/SERVER.md, the variables, the flags and
/// the configuration cannot drift apart.
public enum ServerSettings {
    /// Every setting, in docs/SERVER.md's order.
    public static let all: [ServerSetting] = [
        .text(
            "--listen", "IMAGO_LISTEN",
            peers: [
                PeerVariable("IMGPROXY_BIND") { text, _ throws(ServerError) in
                    guard text.contains(":") else { throw PeerVariable.invalid("IMGPROXY_BIND", "is not host:port (Imago listens on TCP, not a Unix socket)") }
                    return text
                }
            ], "address and port to listen on (default 127.0.0.1:8080)"
        ) { _, _ in },
        ServerSetting("--key", "IMAGO_KEY", peers: [.same("IMGPROXY_KEY")], "hex HMAC keys, comma-separated for rotation; none turns signature checks off") {
            configuration, text, values throws(ServerError) in
            do {
                configuration.signer = try URLSigner(
                    hexKeys: ServerSetting.list(text), hexSalts: ServerSetting.list(values["IMAGO_SALT"] ?? values["IMGPROXY_SALT"] ?? ""))
            } catch let error as ServerError {
                throw ServerError(status: 500, "--key (IMAGO_KEY) and --salt (IMAGO_SALT): \(error.message)")
            } catch {
                throw ServerSetting.invalid("--key", "IMAGO_KEY")
            }
        },
        ServerSetting("--salt", "IMAGO_SALT", peers: [.same("IMGPROXY_SALT")], "hex salts, one per key") { _, _, values throws(ServerError) in
            // Read with the keys; salts without any key are a mistake worth stopping for.
            if (values["IMAGO_KEY"] ?? values["IMGPROXY_KEY"]) == nil { throw ServerError(status: 500, "--salt (IMAGO_SALT) is set without --key (IMAGO_KEY)") }
        },
        ServerSetting(
            "--presets", "IMAGO_PRESETS", peers: [.same("IMGPROXY_PRESETS")], "named option lists: name=rs:fill:300:300/q:80,other=…; `default` applies to all"
        ) {
            configuration, text, _ throws(ServerError) in
            for preset in ServerSetting.list(text) {
                let parts = preset.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !parts[0].isEmpty else { throw ServerSetting.invalid("--presets", "IMAGO_PRESETS") }
                configuration.presets[String(parts[0])] = parts[1].split(separator: "/").map(String.init)
            }
            for (name, options) in configuration.presets {
                do {
                    _ = try ProcessingOptions(parsing: options)
                } catch let error as ServerError {
                    throw ServerError(status: 500, "preset \(name): \(error.message)")
                } catch {
                    throw ServerSetting.invalid("--presets", "IMAGO_PRESETS")
                }
            }
        },
        .text("--allowed-hosts", "IMAGO_ALLOWED_HOSTS", "hosts sources may come from, comma-separated (.example.com takes subdomains); default any public host")
        {
            $0.allowedHosts = ServerSetting.list($1)
        },
        .boolean(
            "--allow-private-addresses", "IMAGO_ALLOW_PRIVATE_ADDRESSES", switch: true,
            "let sources resolve to loopback, link-local and private addresses (true/false; default false)"
        ) { $0.allowsPrivateAddresses = $1 },
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
            "--source-base-url", "IMAGO_SOURCE_BASE_URL", peers: [.same("IMGPROXY_BASE_URL")],
            "put before imgproxy source URLs that do not start with it (default none)"
        ) { $0.sourceBaseURL = $1 },
        ServerSetting(
            "--source-url-replacements", "IMAGO_SOURCE_URL_REPLACEMENTS", peers: [.same("IMGPROXY_URL_REPLACEMENTS")],
            "pattern=replacement;… applied to imgproxy source URLs before the base URL (a pattern is a prefix, * matching anything but /; $1 names it)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.sourceURLReplacements = try text.split(separator: ";").map { pair throws(ServerError) in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw ServerSetting.invalid("--source-url-replacements", "IMAGO_SOURCE_URL_REPLACEMENTS") }
                return (String(parts[0]), String(parts[1]))
            }
        },
        .text(
            "--secret", "IMAGO_SECRET", peers: [.same("IMGPROXY_SECRET")],
            "image requests must carry Authorization: Bearer and this secret (others are 403); default none"
        ) { $0.secret = $1 },
        .text(
            "--allow-origin", "IMAGO_ALLOW_ORIGIN", peers: [.same("IMGPROXY_ALLOW_ORIGIN"), .thumborOrNone("ACCESS_CONTROL_ALLOW_ORIGIN_HEADER")],
            "Access-Control-Allow-Origin of image answers, OPTIONS answered (default none)"
        ) { $0.allowOrigin = $1.isEmpty ? nil : $1 },
        ServerSetting(
            "--health-check-path", "IMAGO_HEALTH_CHECK_PATH", peers: [.same("IMGPROXY_HEALTH_CHECK_PATH")], "another path answered like /health (default none)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.healthCheckPath = try ServerSetting.plainPath(text, "--health-check-path", "IMAGO_HEALTH_CHECK_PATH")
        },
        .integer(
            "--signature-size", "IMAGO_SIGNATURE_SIZE", 1...32, peers: [.same("IMGPROXY_SIGNATURE_SIZE")],
            "bytes of the HMAC an imgproxy signature carries (default 32)"
        ) { $0.signer.signatureSize = $1 },
        .text(
            "--user-agent", "IMAGO_USER_AGENT", peers: [.same("IMGPROXY_USER_AGENT"), .thumbor("HTTP_LOADER_DEFAULT_USER_AGENT")],
            "User-Agent sources are fetched with (default Imago/0.1)"
        ) {
            $0.userAgent = $1.replacingOccurrences(of: "%current_version", with: "0.1")
        },
        .integer(
            "--max-redirects", "IMAGO_MAX_REDIRECTS", 0...100, peers: [.same("IMGPROXY_MAX_REDIRECTS"), .thumbor("HTTP_LOADER_MAX_REDIRECTS")],
            "redirects a source may take (default 5)"
        ) {
            $0.maxRedirects = $1
        },
        .boolean(
            "--ignore-certificate-errors", "IMAGO_IGNORE_CERTIFICATE_ERRORS",
            peers: [.boolean("IMGPROXY_IGNORE_SSL_VERIFICATION"), .thumborNot("HTTP_LOADER_VALIDATE_CERTS")],
            "fetch https sources without checking their certificates (true/false; default false)"
        ) { $0.ignoresCertificateErrors = $1 },
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
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            let account = trimmed.hasPrefix("{") ? GCSServiceAccount(json: Data(trimmed.utf8)) : GCSServiceAccount(file: trimmed)
            guard let account else {
                throw ServerError(status: 500, "--gcs-key (IMAGO_GCS_KEY) is not a service account key (JSON with client_email and private_key)")
            }
            configuration.gcs.account = account
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
        .boolean(
            "--gallery", "IMAGO_GALLERY", switch: true,
            "serve /gallery: the local root's images with srcset and ThumbHash placeholders (true/false; default false)"
        ) { $0.servesGallery = $1 },
        .text("--cache-dir", "IMAGO_CACHE_DIR", "disk cache of sources and variants; default none") { $0.cacheDirectory = URL(fileURLWithPath: $1) },
        .text(
            "--cache-control", "IMAGO_CACHE_CONTROL",
            peers: [
                PeerVariable("IMGPROXY_TTL") { text, _ throws(ServerError) in
                    guard let seconds = Int(text), seconds >= 0 else { throw PeerVariable.invalid("IMGPROXY_TTL") }
                    return "max-age=\(seconds), public"
                }
            ], "Cache-Control of images (default public, max-age=31536000, immutable)"
        ) { $0.cacheControl = $1 },
        .integer("--quality", "IMAGO_QUALITY", 1...100, peers: [.same("IMGPROXY_QUALITY"), .thumbor("QUALITY")], "quality when the URL sets none (default 80)")
        {
            $0.output.defaultQuality = $1
        },
        .qualities(
            "--format-quality", "IMAGO_FORMAT_QUALITY", peers: [.same("IMGPROXY_FORMAT_QUALITY")],
            "quality per format when the URL sets none, before --quality, e.g. jpeg=70,webp=60 (default webp=79,avif=63,jxl=77)"
        ) { $0.output.formatQuality.merge($1) { $1 } },
        ServerSetting(
            "--autoquality-method", "IMAGO_AUTOQUALITY_METHOD",
            peers: [
                PeerVariable("IMGPROXY_AUTOQUALITY_METHOD") { text, _ throws(ServerError) in
                    // imgproxy Pro's dssim and ml have no counterpart; size is the same search.
                    guard ["none", "size"].contains(text.lowercased()) else {
                        throw PeerVariable.invalid("IMGPROXY_AUTOQUALITY_METHOD", "is '\(text)': Imago's methods are none, size and ssimulacra2")
                    }
                    return text.lowercased()
                }
            ],
            "none (default), ssimulacra2 (lowest quality scoring the target) or size (highest quality fitting target bytes)"
        ) { configuration, text, _ throws(ServerError) in
            guard let method = AutoQualitySettings.Method(rawValue: text.lowercased()) else {
                throw ServerSetting.invalid("--autoquality-method", "IMAGO_AUTOQUALITY_METHOD")
            }
            configuration.output.autoQuality.method = method
        },
        .number(
            "--autoquality-target", "IMAGO_AUTOQUALITY_TARGET", 0...Double.greatestFiniteMagnitude, peers: [.same("IMGPROXY_AUTOQUALITY_TARGET")],
            "SSIMULACRA2 score (default 75), or bytes for size"
        ) {
            $0.output.autoQuality.target = $1
        },
        .integer(
            "--autoquality-min", "IMAGO_AUTOQUALITY_MIN", 1...100, peers: [.same("IMGPROXY_AUTOQUALITY_MIN")],
            "lowest quality autoquality may choose (default 70)"
        ) {
            $0.output.autoQuality.minQuality = $1
        },
        .integer(
            "--autoquality-max", "IMAGO_AUTOQUALITY_MAX", 1...100, peers: [.same("IMGPROXY_AUTOQUALITY_MAX")],
            "highest quality autoquality may choose (default 80)"
        ) {
            $0.output.autoQuality.maxQuality = $1
        },
        .qualities(
            "--autoquality-format-min", "IMAGO_AUTOQUALITY_FORMAT_MIN", peers: [.same("IMGPROXY_AUTOQUALITY_FORMAT_MIN")],
            "lowest quality per format, e.g. jpeg=60,avif=40 (default avif=60)"
        ) {
            $0.output.autoQuality.formatMin = $1
        },
        .qualities(
            "--autoquality-format-max", "IMAGO_AUTOQUALITY_FORMAT_MAX", peers: [.same("IMGPROXY_AUTOQUALITY_FORMAT_MAX")],
            "highest quality per format (default avif=65)"
        ) {
            $0.output.autoQuality.formatMax = $1
        },
        .number(
            "--autoquality-allowed-error", "IMAGO_AUTOQUALITY_ALLOWED_ERROR", 0...100, peers: [.same("IMGPROXY_AUTOQUALITY_ALLOWED_ERROR")],
            "SSIMULACRA2 points a score may miss the target by (default 0.5)"
        ) {
            $0.output.autoQuality.allowedError = $1
        },
        .integer(
            "--autoquality-max-resolution", "IMAGO_AUTOQUALITY_MAX_RESOLUTION", 0...1_000_000_000, peers: [.same("IMGPROXY_AUTOQUALITY_MAX_RESOLUTION")],
            "pixels above which quality stays fixed (default 0: the metric's 16.7 MP limit)"
        ) { $0.output.autoQuality.maxResolution = $1 },
        .boolean("--avif", "IMAGO_AVIF", switch: true, "offer AVIF to clients that accept it, as avif in --auto-formats (true/false; default false)") {
            $0.output.negotiatesAVIF = $1
        },
        .formats(
            "--auto-formats", "IMAGO_AUTO_FORMATS",
            peers: [
                .listMember("IMGPROXY_AUTO_WEBP", "webp", start: "webp"), .listMember("IMGPROXY_ENABLE_WEBP_DETECTION", "webp", start: "webp"),
                .listMember("IMGPROXY_AUTO_AVIF", "avif", start: "webp"), .listMember("IMGPROXY_ENABLE_AVIF_DETECTION", "avif", start: "webp"),
                .listMember("IMGPROXY_AUTO_JXL", "jxl", start: "webp"),
            ],
            "formats (webp, avif, jxl) given to clients that accept them when the URL names none, best first jxl, avif, webp (default webp)"
        ) { $0.output.autoFormats = $1 },
        .formats(
            "--enforce-formats", "IMAGO_ENFORCE_FORMATS",
            peers: [
                .listMember("IMGPROXY_ENFORCE_WEBP", "webp", start: ""), .listMember("IMGPROXY_ENFORCE_AVIF", "avif", start: ""),
                .listMember("IMGPROXY_ENFORCE_JXL", "jxl", start: ""),
            ],
            "formats (webp, avif, jxl) given to clients that accept them even over the URL's format (default none)"
        ) { $0.output.enforcedFormats = $1 },
        .integer(
            "--max-source-bytes", "IMAGO_MAX_SOURCE_BYTES", 1...(1 << 40),
            peers: [PeerVariable("IMGPROXY_MAX_SRC_FILE_SIZE") { text, _ in text == "0" ? String(1 << 40) : text }],
            "largest source in bytes (default 50000000)"
        ) {
            $0.limits.maxSourceBytes = Int64($1)
        },
        .integer(
            "--max-source-pixels", "IMAGO_MAX_SOURCE_PIXELS", 1...1_000_000_000,
            peers: [.megapixels("IMGPROXY_MAX_SRC_RESOLUTION"), .thumborWholeNumber("MAX_PIXELS")],
            "most pixels a source may declare (default 50000000)"
        ) {
            $0.limits.maxSourcePixels = $1
        },
        .integer(
            "--max-frames", "IMAGO_MAX_FRAMES", 1...100_000, peers: [.same("IMGPROXY_MAX_ANIMATION_FRAMES")], "most frames of an animated source (default 200)"
        ) { $0.limits.maxFrames = $1 },
        .seconds(
            "--source-timeout", "IMAGO_SOURCE_TIMEOUT", peers: [.same("IMGPROXY_DOWNLOAD_TIMEOUT"), .thumborSeconds("HTTP_LOADER_REQUEST_TIMEOUT")],
            "seconds a source may take (default 20)"
        ) { $0.sourceTimeout = $1 },
        .seconds(
            "--timeout", "IMAGO_TIMEOUT", peers: [.same("IMGPROXY_TIMEOUT")], "seconds a new image may take in all, source included, before a 504 (default 30)"
        ) { $0.workTimeout = $1 },
        .integer("--max-concurrent-work", "IMAGO_MAX_CONCURRENT_WORK", 1...100_000, "images made at once before 503 (default 4 per core)") {
            $0.maxConcurrentWork = $1
        },
        .integer(
            "--memory-bytes", "IMAGO_MEMORY_BYTES", (1 << 20)...(1 << 40),
            "bytes kept in memory between requests: encoded variants and their paths (default 268435456)"
        ) { $0.memoryBytes = $1 },
        .boolean(
            "--strip-color-profile", "IMAGO_STRIP_COLOR_PROFILE", peers: [.boolean("IMGPROXY_STRIP_COLOR_PROFILE")],
            "convert images to sRGB and drop their colour profile unless a URL says scp:0 (default true)"
        ) { $0.output.stripsColorProfile = $1 },
        .boolean(
            "--keep-hdr", "IMAGO_KEEP_HDR", peers: [.boolean("IMGPROXY_PRESERVE_HDR")],
            "keep an HDR photo's gain map in JPEG answers (Ultra HDR) unless a URL says preserve_hdr:0 (default true)"
        ) { $0.output.keepsGainMap = $1 },
        .boolean(
            "--strip-metadata", "IMAGO_STRIP_METADATA", peers: [.boolean("IMGPROXY_STRIP_METADATA"), .thumborNot("PRESERVE_EXIF_INFO")],
            "drop EXIF and XMP unless a URL says sm:0 (default true)"
        ) { $0.output.stripsMetadata = $1 },
        .boolean(
            "--keep-copyright", "IMAGO_KEEP_COPYRIGHT", peers: [.boolean("IMGPROXY_KEEP_COPYRIGHT")],
            "keep the copyright and author when metadata is dropped (default true)"
        ) {
            $0.output.keepsCopyright = $1
        },
        .text("--watermark-path", "IMAGO_WATERMARK_PATH", peers: [.same("IMGPROXY_WATERMARK_PATH")], "image file placed by the watermark option; default none")
        { $0.output.watermark = .path($1) },
        ServerSetting(
            "--watermark-url", "IMAGO_WATERMARK_URL", peers: [.same("IMGPROXY_WATERMARK_URL")], "http(s) URL of the watermark image, fetched once on first use"
        ) {
            configuration, text, _ throws(ServerError) in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw ServerSetting.invalid("--watermark-url", "IMAGO_WATERMARK_URL")
            }
            configuration.output.watermark = .url(url)
        },
        ServerSetting("--watermark-data", "IMAGO_WATERMARK_DATA", peers: [.same("IMGPROXY_WATERMARK_DATA")], "the watermark image as base64") {
            configuration, text, _ throws(ServerError) in
            guard let data = Data(base64Encoded: text), !data.isEmpty else {
                throw ServerSetting.invalid("--watermark-data", "IMAGO_WATERMARK_DATA")
            }
            configuration.output.watermark = .data(data)
        },
        .number(
            "--watermark-opacity", "IMAGO_WATERMARK_OPACITY", 0...1, peers: [.same("IMGPROXY_WATERMARK_OPACITY")],
            "the watermark's opacity, multiplied by each URL's (0–1; default 1)"
        ) {
            $0.output.watermarkOpacity = $1
        },
        .integer(
            "--max-result-dimension", "IMAGO_MAX_RESULT_DIMENSION", 0...65_535, peers: [.same("IMGPROXY_MAX_RESULT_DIMENSION")],
            "longest side of a result; larger ones are scaled down (default 0: none)"
        ) { $0.output.maxResultDimension = $1 },
        .boolean(
            "--return-attachment", "IMAGO_RETURN_ATTACHMENT", peers: [.boolean("IMGPROXY_RETURN_ATTACHMENT")],
            "Content-Disposition: attachment unless a URL says att:0 (default false)"
        ) {
            $0.returnsAttachment = $1
        },
        ServerSetting(
            "--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS", peers: [.same("IMGPROXY_SKIP_PROCESSING_FORMATS")],
            "source formats sent as they came when asked in their own format (e.g. gif,svg)"
        ) { configuration, text, _ throws(ServerError) in
            for name in ServerSetting.list(text) {
                guard let format = ImageFormatName.canonical(name) else {
                    throw ServerSetting.invalid("--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS")
                }
                configuration.output.skipProcessingFormats.append(format)
            }
        },
        ServerSetting(
            "--preferred-formats", "IMAGO_PREFERRED_FORMATS", peers: [.same("IMGPROXY_PREFERRED_FORMATS")],
            "formats a source keeps when none is asked, else the first that fits (default jpeg,png,webp,gif,avif)"
        ) { configuration, text, _ throws(ServerError) in
            let names = ServerSetting.list(text)
            let formats = names.compactMap(OutputFormat.init(extension:)).filter { $0.isEncoded }
            guard formats.count == names.count, !formats.isEmpty else {
                throw ServerSetting.invalid("--preferred-formats", "IMAGO_PREFERRED_FORMATS")
            }
            configuration.output.preferredFormats = formats
        },
        .boolean(
            "--jpeg-progressive", "IMAGO_JPEG_PROGRESSIVE", peers: [.boolean("IMGPROXY_JPEG_PROGRESSIVE"), .thumbor("PROGRESSIVE_JPEG")],
            "write progressive JPEG (default false)"
        ) {
            $0.output.encoding.progressive = $1
        },
        .boolean(
            "--jpeg-optimize-coding", "IMAGO_JPEG_OPTIMIZE_CODING", "JPEG Huffman tables computed per image, as libvips' optimize_coding (default true)"
        ) { $0.output.encoding.optimizesCoding = $1 },
        .boolean("--png-interlaced", "IMAGO_PNG_INTERLACED", peers: [.boolean("IMGPROXY_PNG_INTERLACED")], "write Adam7-interlaced PNG (default false)") {
            $0.output.encoding.interlaced = $1
        },
        .boolean(
            "--png-quantize", "IMAGO_PNG_QUANTIZE", peers: [.boolean("IMGPROXY_PNG_QUANTIZE")],
            "write PNG with a palette (median cut) unless it has partial transparency (default false)"
        ) { $0.output.encoding.paletteColors = $1 ? ($0.output.encoding.paletteColors ?? 256) : nil },
        .integer(
            "--png-quantization-colors", "IMAGO_PNG_QUANTIZATION_COLORS", 2...256, peers: [.same("IMGPROXY_PNG_QUANTIZATION_COLORS")],
            "most palette entries with --png-quantize (default 256)"
        ) { configuration, colors in
            if configuration.output.encoding.paletteColors != nil { configuration.output.encoding.paletteColors = colors }
        },
        ServerSetting(
            "--webp-compression", "IMAGO_WEBP_COMPRESSION", peers: [.same("IMGPROXY_WEBP_COMPRESSION")],
            "lossy (default), near_lossless or lossless"
        ) { configuration, text, _ throws(ServerError) in
            switch text.lowercased() {
            case "lossy": (configuration.output.encoding.lossless, configuration.output.encoding.nearLossless) = (false, false)
            case "near_lossless": (configuration.output.encoding.lossless, configuration.output.encoding.nearLossless) = (false, true)
            case "lossless": (configuration.output.encoding.lossless, configuration.output.encoding.nearLossless) = (true, false)
            default: throw ServerSetting.invalid("--webp-compression", "IMAGO_WEBP_COMPRESSION")
            }
        },
        .boolean(
            "--webp-smart-subsample", "IMAGO_WEBP_SMART_SUBSAMPLE", peers: [.boolean("IMGPROXY_WEBP_SMART_SUBSAMPLE")],
            "WebP's sharper RGB→YUV conversion: coloured edges kept, slower (default false)"
        ) { $0.output.encoding.smartSubsample = $1 },
        .integer("--webp-effort", "IMAGO_WEBP_EFFORT", 1...6, peers: [.same("IMGPROXY_WEBP_EFFORT")], "WebP effort 1–6, slower and smaller (default 4)") {
            $0.output.encoding.webpEffort = $1
        },
        ServerSetting(
            "--webp-preset", "IMAGO_WEBP_PRESET", peers: [.same("IMGPROXY_WEBP_PRESET")], "default, photo, picture, drawing, icon or text (default default)"
        ) { configuration, text, _ throws(ServerError) in
            guard let preset = WebPEncoder.Preset(rawValue: text.lowercased()) else { throw ServerSetting.invalid("--webp-preset", "IMAGO_WEBP_PRESET") }
            configuration.output.encoding.webpPreset = preset
        },
        .integer("--avif-speed", "IMAGO_AVIF_SPEED", 0...9, peers: [.same("IMGPROXY_AVIF_SPEED")], "AVIF speed 0 (slowest, smallest) to 9 (default 8)") {
            $0.output.encoding.speed = $1
        },
        .integer("--jxl-effort", "IMAGO_JXL_EFFORT", 1...9, peers: [.same("IMGPROXY_JXL_EFFORT")], "JPEG XL effort 1–9, slower and smaller (default 4)") {
            $0.output.encoding.effort = $1
        },
        .boolean(
            "--always-rasterize-svg", "IMAGO_ALWAYS_RASTERIZE_SVG", peers: [.boolean("IMGPROXY_ALWAYS_RASTERIZE_SVG")],
            "rasterise SVG sources when the URL names no format (default false: sanitised SVG)"
        ) {
            $0.output.alwaysRasterizesSVG = $1
        },
        ServerSetting("--dialect", "IMAGO_DIALECT", "URLs answered at the root: imgproxy (default) or thumbor") { configuration, text, _ throws(ServerError) in
            guard let dialect = ServerConfiguration.Dialect(rawValue: text.lowercased()) else {
                throw ServerSetting.invalid("--dialect", "IMAGO_DIALECT")
            }
            configuration.dialect = dialect
        },
        .text(
            "--path-prefix", "IMAGO_PATH_PREFIX", peers: [.same("IMGPROXY_PATH_PREFIX")],
            "path imgproxy's URLs are under, taken off before the signature is checked (default none: the root)"
        ) { $0.pathPrefix = $1 },
        .text(
            "--thumbor-config", "IMAGO_THUMBOR_CONFIG",
            "thumbor.conf to read thumbor's own settings from (SECURITY_KEY, QUALITY, …; docs/SERVER.md); thumbor's URLs then answer at the root unless --dialect or --thumbor-path says otherwise"
        ) { _, _ in },
        .text("--thumbor-path", "IMAGO_THUMBOR_PATH", "path thumbor's URLs are under, beside imgproxy's in one process (default none)") {
            $0.thumborPath = $1
        },
        .text(
            "--trusted-signatures", "IMAGO_TRUSTED_SIGNATURES", peers: [.same("IMGPROXY_TRUSTED_SIGNATURES")],
            "imgproxy signatures accepted without checking, comma-separated (default none)"
        ) { $0.trustedSignatures = Set(ServerSetting.list($1)) },
        ServerSetting("--thumbor-key", "IMAGO_THUMBOR_KEY", peers: [.thumbor("SECURITY_KEY")], "thumbor's SECURITY_KEY, for signed thumbor URLs; default none")
        {
            configuration, text, _ in
            // --allow-unsafe-url, read after, may change what the key implies.
            configuration.thumborSigner = ThumborSigner(key: text)
        },
        .boolean(
            "--allow-unsafe-url", "IMAGO_ALLOW_UNSAFE_URL", peers: [.thumbor("ALLOW_UNSAFE_URL")],
            "answer thumbor's /unsafe/ URLs (true/false; default true without a thumbor key, false with one)"
        ) { configuration, allows in
            let key = configuration.thumborSigner.key.map { String(decoding: $0, as: UTF8.self) }
            configuration.thumborSigner = ThumborSigner(key: key, allowsUnsafe: allows)
        },
        .boolean(
            "--auto-webp", "IMAGO_AUTO_WEBP", peers: [.thumbor("AUTO_WEBP")],
            "thumbor URLs without a format give WebP to clients that accept it (true/false; default false)"
        ) {
            $0.output.thumborAutoWebP = $1
        },
        .integer(
            "--thumbor-max-age", "IMAGO_THUMBOR_MAX_AGE", 0...(1 << 31), peers: [.thumbor("MAX_AGE")],
            "thumbor's MAX_AGE: seconds thumbor answers without max_age() may be cached, as max-age=N,public (0: no Cache-Control); default the server's"
        ) { $0.thumborMaxAge = $1 },
        .boolean(
            "--respect-orientation", "IMAGO_RESPECT_ORIENTATION", peers: [.thumbor("RESPECT_ORIENTATION")],
            "thumbor URLs turn images by their EXIF orientation (true/false; default false, as thumbor)"
        ) { $0.output.thumborRespectsOrientation = $1 },
        .integer(
            "--thumbor-max-width", "IMAGO_THUMBOR_MAX_WIDTH", 0...(1 << 20), peers: [.thumbor("MAX_WIDTH")],
            "thumbor's MAX_WIDTH: the widest box thumbor URLs get, and the width a wider source is scaled to on load (default 0: none)"
        ) { $0.output.thumborMaxWidth = $1 },
        .integer(
            "--thumbor-max-height", "IMAGO_THUMBOR_MAX_HEIGHT", 0...(1 << 20), peers: [.thumbor("MAX_HEIGHT")],
            "thumbor's MAX_HEIGHT: as --thumbor-max-width, for heights (default 0: none)"
        ) { $0.output.thumborMaxHeight = $1 },
        .text(
            "--thumbor-filters", "IMAGO_THUMBOR_FILTERS", peers: [.thumbor("FILTERS")],
            "thumbor's FILTERS: the filters thumbor URLs may use, comma-separated names or module paths (default thumbor's BUILTIN_FILTERS, without autojpg)"
        ) { $0.output.thumborFilters = Set(ServerSetting.list($1).map(ThumborFilter.name(ofModule:))) },
        .boolean(
            "--thumbor-auto-png-to-jpg", "IMAGO_THUMBOR_AUTO_PNG_TO_JPG", peers: [.thumbor("AUTO_PNG_TO_JPG")],
            "thumbor's AUTO_PNG_TO_JPG: a PNG without transparency answered as JPEG unless autojpg() says not (true/false; default false)"
        ) { $0.output.thumborAutoPNGToJPG = $1 },
        .integer(
            "--thumbor-webp-quality", "IMAGO_THUMBOR_WEBP_QUALITY", 1...100, peers: [.thumbor("WEBP_QUALITY")],
            "thumbor's WEBP_QUALITY: quality of WebP answers whose URL sets none (default --quality)"
        ) { $0.output.thumborFormatQuality[.webp] = $1 },
        .integer(
            "--thumbor-avif-quality", "IMAGO_THUMBOR_AVIF_QUALITY", 1...100, peers: [.thumbor("AVIF_QUALITY")],
            "thumbor's AVIF_QUALITY: quality of AVIF answers whose URL sets none (default --quality)"
        ) { $0.output.thumborFormatQuality[.avif] = $1 },
        .text(
            "--thumbor-allowed-sources", "IMAGO_THUMBOR_ALLOWED_SOURCES", peers: [.thumbor("ALLOWED_SOURCES")],
            "thumbor's ALLOWED_SOURCES: hosts thumbor URLs' images may come from, comma-separated, each a name or a regular expression of the whole host (default any)"
        ) { $0.thumborAllowedSources = ServerSetting.list($1) },
        ServerSetting(
            "--thumbor-healthcheck-route", "IMAGO_THUMBOR_HEALTHCHECK_ROUTE", peers: [.thumbor("HEALTHCHECK_ROUTE")],
            "thumbor's HEALTHCHECK_ROUTE, answered WORKING under thumbor's mount (default /healthcheck)"
        ) { configuration, route, _ throws(ServerError) in
            // thumbor's default is the expression `/healthcheck/?`: the optional final slash is implied.
            let path = route.hasSuffix("/?") ? String(route.dropLast(2)) : route
            configuration.thumborHealthcheckRoute = try ServerSetting.plainPath(path, "--thumbor-healthcheck-route", "IMAGO_THUMBOR_HEALTHCHECK_ROUTE")
        },
        ServerSetting(
            "--thumbor-detectors", "IMAGO_THUMBOR_DETECTORS", peers: [.thumbor("DETECTORS")],
            "thumbor's DETECTORS: what /smart/ URLs look for, in order, comma-separated names or module paths: face_detector, profile_detector, glasses_detector, feature_detector (default none: Imago's saliency)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.thumborDetectors = try ServerSetting.list(text).map { module throws(ServerError) in
                guard let kind = ThumborDetectors.Kind(module: module) else {
                    throw ServerError(status: 500, "--thumbor-detectors (IMAGO_THUMBOR_DETECTORS): Imago has no detector \(module)")
                }
                return kind
            }
        },
        .text(
            "--thumbor-cascade-dir", "IMAGO_THUMBOR_CASCADE_DIR",
            "the folder thumbor's cascade file names are read from when not absolute (default /usr/share/opencv4/haarcascades, Debian's opencv-data)"
        ) { $0.thumborCascadeFiles.directory = $1 },
        .text(
            "--thumbor-face-cascade", "IMAGO_THUMBOR_FACE_CASCADE", peers: [.thumbor("FACE_DETECTOR_CASCADE_FILE")],
            "thumbor's FACE_DETECTOR_CASCADE_FILE: the face detector's OpenCV cascade (default haarcascade_frontalface_alt.xml)"
        ) { $0.thumborCascadeFiles.face = $1 },
        .text(
            "--thumbor-profile-cascade", "IMAGO_THUMBOR_PROFILE_CASCADE", peers: [.thumbor("PROFILE_DETECTOR_CASCADE_FILE")],
            "thumbor's PROFILE_DETECTOR_CASCADE_FILE (default haarcascade_profileface.xml)"
        ) { $0.thumborCascadeFiles.profile = $1 },
        .text(
            "--thumbor-glasses-cascade", "IMAGO_THUMBOR_GLASSES_CASCADE", peers: [.thumbor("GLASSES_DETECTOR_CASCADE_FILE")],
            "thumbor's GLASSES_DETECTOR_CASCADE_FILE (default haarcascade_eye_tree_eyeglasses.xml)"
        ) { $0.thumborCascadeFiles.glasses = $1 },
        .text(
            "--face-cascade", "IMAGO_FACE_CASCADE",
            "the OpenCV face cascade imgproxy's object gravity (g:obj:face) and face-aware smart gravity use (default Debian's haarcascade_frontalface_alt.xml, when installed)"
        ) { $0.faceCascade = $1 },
        .boolean(
            "--smart-crop-face-detection", "IMAGO_SMART_CROP_FACE_DETECTION", peers: [.boolean("IMGPROXY_SMART_CROP_FACE_DETECTION")],
            "imgproxy's smart gravity keeps the faces --face-cascade finds before saliency decides (default false)"
        ) { $0.imgproxySmartCropFindsFaces = $1 },
        .boolean(
            "--object-detection-fallback-to-smart-crop", "IMAGO_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP",
            peers: [.boolean("IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP")],
            "an object gravity (g:obj) that finds no face is smart gravity; false: the centre (default true)"
        ) { $0.imgproxyObjectsFallBackToSmart = $1 },
        .seconds(
            "--request-head-timeout", "IMAGO_REQUEST_HEAD_TIMEOUT",
            "seconds a client may take to send a request's head before its connection is closed (default 10)"
        ) { $0.requestHeadTimeout = $1 },
    ]

    /// (flag, variable, what it sets), in docs/SERVER.md's order.
    public static var table: [(flag: String, variable: String, help: String)] { all.map { ($0.flag, $0.variable, $0.help) } }

    /// A setting's text from `values` (variable name → text): Imago's variable, else what its
    /// peer's variables make (nil when neither is set), with the variable it came from.
    static func text(of setting: ServerSetting, in values: [String: String]) throws(ServerError) -> (text: String, from: String)? {
        if let text = values[setting.variable] { return (text, setting.variable) }
        var made: (text: String, from: String)?
        for peer in setting.peers {
            guard let text = values[peer.name], !text.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            made = (try peer.convert(text.trimmingCharacters(in: .whitespaces), made?.text), (made.map { $0.from + ", " } ?? "") + peer.name)
        }
        return made
    }

    /// The listen address and the configuration `values` (variable name → text) give.
    public static func configuration(_ values: [String: String]) throws(ServerError) -> (host: String, port: Int, configuration: ServerConfiguration) {
        var configuration = ServerConfiguration()
        // As curl: the proxy variables of the environment, which --proxy and --no-proxy override.
        configuration.proxies = ProxySettings.environment(values)
        // As OpenSSL's tools: certificate authorities trusted besides the system's.
        configuration.trustRoots = TrustRoots.environment(values)
        if let unreadable = configuration.trustRoots.unreadablePaths.first {
            throw ServerError(status: 500, "SSL_CERT_FILE or SSL_CERT_DIR names \(unreadable), which cannot be read")
        }
        var listen = "127.0.0.1:8080"
        var watermarks: [String] = []
        for setting in all {
            guard let (text, source) = try text(of: setting, in: values) else { continue }
            if setting.variable == "IMAGO_LISTEN" { listen = text }
            if ["IMAGO_WATERMARK_PATH", "IMAGO_WATERMARK_URL", "IMAGO_WATERMARK_DATA"].contains(setting.variable) { watermarks.append(setting.flag) }
            do {
                try setting.apply(&configuration, text, values)
            } catch  where source != setting.variable {
                // A peer's variable is named as the operator wrote it.
                throw ServerError(status: 500, "\(source) has a value Imago cannot use (\(error.message))")
            }
        }
        if values["IMAGO_THUMBOR_CONFIG"] != nil, values["IMAGO_DIALECT"] == nil, values["IMAGO_THUMBOR_PATH"] == nil { configuration.dialect = .thumbor }
        guard watermarks.count <= 1 else { throw ServerError(status: 500, "set one of \(watermarks.joined(separator: ", "))") }
        if let thumbor = configuration.thumborMount, thumbor == configuration.imgproxyMount {
            throw ServerError(status: 500, "imgproxy's and thumbor's URLs cannot both be at '\(thumbor.isEmpty ? "/" : thumbor)'")
        }
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ServerSetting.invalid("--listen", "IMAGO_LISTEN")
        }
        let host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (host.isEmpty ? "0.0.0.0" : host, port, configuration)
    }

    /// The `IMGPROXY_*` variables and thumbor.conf settings among `values` that no setting reads,
    /// sorted (thumbor.conf's as `thumbor.conf:NAME`): the command logs each once at start, so an
    /// operator moving from imgproxy or thumbor sees what Imago ignores.
    public static func unsupportedPeerVariables(in values: [String: String]) -> [String] {
        let read = Set(all.flatMap(\.peerVariables))
        return values.keys.filter { ($0.hasPrefix("IMGPROXY_") || $0.hasPrefix(PeerVariable.thumborConfPrefix)) && !read.contains($0) }.sorted()
    }

    /// `file`'s settings as values (`thumbor.conf:NAME` → the literal's text); a `None` is left
    /// out (thumbor's default stands), a dict is blank (no setting takes one).
    public static func values(thumborConfig file: ThumborConfigFile) -> [String: String] {
        var values: [String: String] = [:]
        for (name, value) in file.settings where value != .none {
            values[PeerVariable.thumborConfPrefix + name] = value.settingText ?? ""
        }
        return values
    }

    /// The thumbor.conf at `path` as values; throws naming the file and the line it cannot read.
    static func values(thumborConfigAt path: String) throws(ServerError) -> [String: String] {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: ThumborConfigFile.maxBytes + 1) ?? Data()
        } catch {
            throw ServerError(status: 500, "--thumbor-config (IMAGO_THUMBOR_CONFIG): cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ServerError(status: 500, "\(path) is not UTF-8 text") }
        do {
            return values(thumborConfig: try ThumborConfigFile(parsing: text))
        } catch {
            throw ServerError(status: 500, "\(path), line \(error.line): \(error.reason)")
        }
    }

    /// Variables of other tools that settings read as those tools do: the AWS credentials, region
    /// and endpoint, `HOME` for `~/.aws/credentials`, Google's key file and emulator, curl's proxy
    /// variables, OpenSSL's certificate file and directory.
    static let ambientVariables: Set<String> = [
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION",
        "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "HOME", "GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST",
        "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
    ]

    /// The settings `arguments` give (`--flag value`, `--flag=value`, or a switch alone), on top of
    /// `environment`'s `IMAGO_*` and peer variables: a flag wins. Throws naming an unknown flag or
    /// a flag without its value.
    public static func values(arguments: [String], environment: [String: String]) throws(ServerError) -> [String: String] {
        let variables = Set(all.flatMap { [$0.variable] + $0.peerVariables })
        // imgproxy's variables Imago does not read are kept, to be named at start.
        var values = environment.filter {
            variables.contains($0.key) && !$0.key.hasPrefix(PeerVariable.thumborConfPrefix) || $0.key.hasPrefix("IMGPROXY_")
                || ambientVariables.contains($0.key)
        }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1)
            guard let setting = all.first(where: { $0.flag == parts[0] }) else { throw ServerError(status: 500, "unknown option '\(argument)'") }
            if parts.count == 2 {
                values[setting.variable] = String(parts[1])
            } else if setting.isSwitch {
                values[setting.variable] = "true"
            } else {
                guard let value = rest.popFirst() else { throw ServerError(status: 500, "\(setting.flag) needs a value") }
                values[setting.variable] = value
            }
        }
        if let path = values["IMAGO_THUMBOR_CONFIG"] { values.merge(try Self.values(thumborConfigAt: path)) { own, _ in own } }
        return values
    }

    /// docs/SERVER.md's table of the settings, as Markdown.
    public static var markdownTable: String {
        let rows = all.map { setting in
            let variables = ([setting.variable] + setting.peerVariables).map { "`\($0)`" }.joined(separator: ", ")
            return "| `\(setting.flag)` | \(variables) | \(setting.help) |"
        }
        return (["| flag | variables | sets |", "| --- | --- | --- |"] + rows).joined(separator: "\n") + "\n"
    }

    /// docs/SERVER.md's "moving from imgproxy" table, as Markdown: every open-source `IMGPROXY_*`
    /// variable of imgproxy 4 (and the Pro ones Imago reads), with the setting that reads it or
    /// why none does.
    public static var imgproxyMarkdownTable: String {
        let readers = Dictionary(all.flatMap { setting in setting.peerVariables.map { ($0, setting.flag) } }, uniquingKeysWith: { first, _ in first })
        let pro = all.flatMap(\.peerVariables).filter { $0.hasPrefix("IMGPROXY_") && !ImgproxyVariables.openSource.contains($0) }
        let rows = (ImgproxyVariables.openSource + pro).map { name in
            let proMark = pro.contains(name) ? " (Pro)" : ""
            if let flag = readers[name] { return "| `\(name)`\(proMark) | read as `\(flag)` |" }
            return "| `\(name)` | not supported\(ImgproxyVariables.notes[name].map { ": " + $0 } ?? "") |"
        }
        return (["| imgproxy's variable | in Imago |", "| --- | --- |"] + rows).joined(separator: "\n") + "\n"
    }

    /// The settings as the command's help lists them.
    public static var help: String {
        all.map { setting in
            let peers = setting.peerVariables.isEmpty ? "" : ", " + setting.peerVariables.joined(separator: ", ")
            return "  \(setting.flag)\(setting.isSwitch ? "" : " <value>") (\(setting.variable)\(peers))\n      \(setting.help)"
        }
        .joined(separator: "\n")
    }

    /// The flag that sets `variable`.
    public static func flag(_ variable: String) -> String {
        all.first { $0.variable == variable }?.flag ?? variable
    }
}
