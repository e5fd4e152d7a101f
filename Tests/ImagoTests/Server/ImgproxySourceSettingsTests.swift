import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's variables for who may ask and what may be fetched, read under imgproxy's names:
/// `SECRET`, `ALLOWED_SOURCES`, `BASE_URL`, `URL_REPLACEMENTS`, the three kinds of internal
/// address, `ALLOW_ORIGIN`, `HEALTH_CHECK_PATH`, `SIGNATURE_SIZE`, `USER_AGENT`.
@Suite("imgproxy's source and access variables")
struct ImgproxySourceSettingsTests {
    /// A server configured by `variables` alone (imgproxy's names; no `IMAGO_*`).
    static func serving(_ variables: [String: String], _ body: (ServerHarness) async throws -> Void) async throws {
        let configuration = try ServerSettings.configuration(variables).configuration
        try await withServer({ $0 = configuration }, body)
    }

    static let png: Data = {
        let metadata = ImageMetadata(format: .png, originalWidth: 4, originalHeight: 4, orientationApplied: .up, hasAlpha: false)
        return (try? PNGEncoder().encode(Image(width: 4, height: 4, frames: [.init(pixels: [UInt8](repeating: 200, count: 64))], metadata: metadata))) ?? Data()
    }()

    @Test("IMGPROXY_SECRET: image requests without 'Authorization: Bearer' and the secret are 403, a kept answer included; /health is not guarded")
    func secret() async throws {
        try await Self.serving(["IMGPROXY_SECRET": "s3cret", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true"]) { server in
            let source = server.origin.serve(Self.png, at: "/a.png")
            let path = ServerHarness.path(source.absoluteString, ["w:2"])
            #expect(try await server.get(path).status == 403)
            #expect(try await server.get(path, headers: [("Authorization", "Bearer wrong!")]).status == 403)
            #expect(try await server.get(path, headers: [("Authorization", "Bearer s3cret")]).status == 200)
            // Now kept in memory and answered on the event loop: still guarded.
            #expect(try await server.get(path, headers: [("Authorization", "Bearer s3cret")]).status == 200)
            let refused = try await server.get(path, headers: [("Authorization", "Bearer s3cre")])
            #expect(refused.status == 403 && refused.body.count < 64)
            #expect(try await server.get("/health").status == 200)
        }
    }

    @Test(
        "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR: blank, a ? is part of a local:// or s3:// object's name; another separator parts off the query (a version); http(s) sources are left as they are"
    )
    func sourceQuerySeparator() async throws {
        #expect(SourceResolver.separatingQuery("s3://bucket/a?b.jpg", by: "") == "s3://bucket/a%3Fb.jpg")
        #expect(SourceResolver.separatingQuery("s3://bucket/a?b#c.jpg|v2|x", by: "|") == "s3://bucket/a%3Fb%23c.jpg?v2|x")
        #expect(SourceResolver.separatingQuery("s3://bucket/key?v2", by: "?") == "s3://bucket/key?v2")
        #expect(SourceResolver.separatingQuery("https://example.com/a?b", by: "") == "https://example.com/a?b")
        let version = try ServerSettings.configuration(["IMGPROXY_USE_S3": "true", "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR": "|"]).configuration
        let url = try SourceResolver(version).url(for: "s3://bucket/photos/a?b.jpg|3HL4kqtJlcpXroDTDmJ")
        #expect(url.path(percentEncoded: false) == "/photos/a?b.jpg" && url.query == "3HL4kqtJlcpXroDTDmJ")

        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Self.png.write(to: root.appendingPathComponent("a?b.png"))
        for (separator, status) in [("", 200), ("?", 404)] {
            try await Self.serving(["IMGPROXY_LOCAL_FILESYSTEM_ROOT": root.path, "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR": separator]) {
                (server: ServerHarness) async throws in
                #expect(try await server.get(ServerHarness.path("local:///a?b.png", ["w:2"])).status == status, "separator '\(separator)'")
            }
        }
    }

    @Test("IMGPROXY_ALLOWED_SOURCES: prefixes, * not crossing /, a source outside them 404 before it is fetched")
    func allowedSources() async throws {
        let origin = try await TestOrigin.start()
        let base = origin.baseURL.absoluteString.trimmingCharacters(in: ["/"])
        for path in ["/allowed/a.png", "/allowed/sub/a.png", "/other/a.png"] { origin.serve(Self.png, at: path) }
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_ALLOWED_SOURCES": "\(base)/allowed/*.png, https://cdn.example.com/", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]).configuration
        try await withServer({ $0 = configuration }) { (server: ServerHarness) async throws in
            #expect(try await server.get(ServerHarness.path(base + "/allowed/a.png")).status == 200)
            let outside = try await server.get(ServerHarness.path(base + "/other/a.png"))
            #expect(outside.status == 404 && String(decoding: outside.body, as: UTF8.self).contains("Invalid source URL"))
            #expect(try await server.get(ServerHarness.path(base + "/allowed/sub/a.png")).status == 404)
        }
        #expect(origin.log.requests.map(\.path) == ["/allowed/a.png"])
        try await origin.shutdown()
    }

    @Test(
        "IMGPROXY_BASE_URL and IMGPROXY_URL_REPLACEMENTS rewrite imgproxy sources as imgproxy does: replacements, $1 and ${1} naming what * matched, then the base"
    )
    func baseURLAndReplacements() async throws {
        let origin = try await TestOrigin.start()
        let base = origin.baseURL.absoluteString.trimmingCharacters(in: ["/"])
        for path in ["/images/a.png", "/buckets/photos/b.png", "/buckets/art/c.png"] { origin.serve(Self.png, at: path) }
        let loopback = ["IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true"]
        let based = try ServerSettings.configuration(loopback.merging(["IMGPROXY_BASE_URL": "\(base)/images/"]) { $1 }).configuration
        try await withServer({ $0 = based }) { (server: ServerHarness) async throws in
            #expect(try await server.get(ServerHarness.path("a.png")).status == 200)
            #expect(try await server.get(ServerHarness.path(base + "/images/a.png")).status == 200)
        }
        let replaced = try ServerSettings.configuration(
            loopback.merging(["IMGPROXY_URL_REPLACEMENTS": "mys3://*/=\(base)/buckets/$1/;art://=\(base)/buckets/${1}art/"]) { $1 }
        ).configuration
        try await withServer({ $0 = replaced }) { (server: ServerHarness) async throws in
            #expect(try await server.get(ServerHarness.path("mys3://photos/b.png")).status == 200)
            #expect(try await server.get(ServerHarness.path("art://c.png")).status == 200)
        }
        #expect(Set(origin.log.requests.map(\.path)) == ["/images/a.png", "/buckets/photos/b.png", "/buckets/art/c.png"])
        try await origin.shutdown()
    }

    @Test("loopback, link-local and private addresses allowed apart, as imgproxy's three variables do")
    func addressKinds() async throws {
        let kinds: [(String, Bool, Bool, Bool)] = [
            ("127.0.0.1", true, false, false), ("::1", true, false, false), ("0.0.0.0", true, false, false), ("::ffff:127.0.0.2", true, false, false),
            ("169.254.169.254", false, true, false), ("fe80::1", false, true, false), ("10.1.2.3", false, false, true),
            ("172.31.0.1", false, false, true), ("192.168.1.1", false, false, true), ("100.64.0.1", false, false, true), ("fd12::1", false, false, true),
            ("8.8.8.8", false, false, false), ("2606:4700::1111", false, false, false), ("172.32.0.1", false, false, false),
        ]
        for (text, loopback, linkLocal, privateNetwork) in kinds {
            let address = try #require(IPAddress(text))
            #expect(address.isLoopback == loopback && address.isLinkLocal == linkLocal && address.isPrivate == privateNetwork, "\(text)")
        }
        let policy = AddressPolicy.publicAnd(loopback: false, linkLocal: false, privateNetwork: true)
        #expect(try policy.allows(#require(IPAddress("10.0.0.1"))) && !policy.allows(#require(IPAddress("127.0.0.1"))))
        #expect(try !policy.allows(#require(IPAddress("169.254.169.254"))) && policy.allows(#require(IPAddress("1.1.1.1"))))
        #expect(try !policy.allows(#require(IPAddress("224.0.0.251"))))
        // Served: the test origin is on loopback, refused until loopback is allowed.
        let origin = try await TestOrigin.start()
        let source = origin.serve(Self.png, at: "/a.png").absoluteString
        for (variables, status) in [
            (["IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": "true", "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": "true"], 403),
            (["IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true"], 200),
            (["IMAGO_ALLOW_PRIVATE_ADDRESSES": "true", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "false"], 403),
        ] {
            let configuration = try ServerSettings.configuration(variables).configuration
            try await withServer({ $0 = configuration }) { (server: ServerHarness) async throws in
                #expect(try await server.get(ServerHarness.path(source)).status == status, "\(variables)")
            }
        }
        try await origin.shutdown()
    }

    @Test("a health path that is a route pattern stops the server naming its variable; one taken already, or thumbor's on /health, starts it unchanged")
    func healthPaths() async throws {
        for pattern in ["/**", "/a/:id", "/{x}", "/a b", "//", "/"] {
            #expect(throws: ServerError.self, "\(pattern)") { try ServerSettings.configuration(["IMGPROXY_HEALTH_CHECK_PATH": pattern]) }
            do { _ = try ServerSettings.configuration(["IMGPROXY_HEALTH_CHECK_PATH": pattern]) } catch {
                #expect(error.message.contains("IMGPROXY_HEALTH_CHECK_PATH"), "\(error.message)")
            }
        }
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_HEALTH_CHECK_PATH": "/metrics", "IMAGO_THUMBOR_PATH": "/t", "IMAGO_THUMBOR_HEALTHCHECK_ROUTE": "/health",
        ]).configuration
        try await withServer({ $0 = configuration }) { (server: ServerHarness) async throws in
            let metrics = try await server.get("/metrics")
            #expect(metrics.status == 200 && String(decoding: metrics.body, as: UTF8.self).contains("# TYPE"))
            #expect(String(decoding: try await server.get("/t/health").body, as: UTF8.self) == "WORKING")
        }
    }

    @Test("IMGPROXY_ALLOW_ORIGIN, IMGPROXY_HEALTH_CHECK_PATH, IMGPROXY_USER_AGENT and IMGPROXY_SIGNATURE_SIZE")
    func answersAndSignatures() async throws {
        let pair = URLSigner.Pair(key: Array("secret-key".utf8), salt: Array("salt".utf8))
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        try await Self.serving([
            "IMGPROXY_ALLOW_ORIGIN": "https://app.example", "IMGPROXY_HEALTH_CHECK_PATH": "/healthz", "IMGPROXY_USER_AGENT": "Fetcher/%current_version",
            "IMGPROXY_SIGNATURE_SIZE": "8", "IMGPROXY_KEY": hex(pair.key), "IMGPROXY_SALT": hex(pair.salt), "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true",
        ]) { server in
            let source = server.origin.serve(Self.png, at: "/a.png")
            let part = "/w:2/plain/" + (source.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let short = URLSigner.signature(for: part, pair: pair, size: 8)
            #expect(short.count == 11)
            let answer = try await server.get("/" + short + part)
            #expect(answer.status == 200)
            #expect(answer.header("Access-Control-Allow-Origin") == "https://app.example" && answer.header("Access-Control-Allow-Methods") == "GET, OPTIONS")
            #expect(try await server.get("/" + URLSigner.signature(for: part, pair: pair) + part).status == 403)
            let preflight = try await server.get("/" + short + part, method: .OPTIONS)
            #expect(preflight.status == 200 && preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            let health = try await server.get("/healthz")
            #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self) == "ok\n")
            #expect(server.origin.log.requests.first?.header("User-Agent") == "Fetcher/0.1")
        }
    }
}

/// thumbor.conf's settings beyond the URL's: the hosts images may come from, `AUTO_PNG_TO_JPG`,
/// `WEBP_QUALITY`, the health check route, the CORS header, and the loader's settings, read by
/// `--thumbor-config` from thumbor's own file.
@Suite("thumbor.conf's loader, format and route settings")
struct ThumborConfSettingsTests {
    @Test(
        "ALLOWED_SOURCES (a name and a legacy expression), AUTO_PNG_TO_JPG, WEBP_QUALITY, HEALTHCHECK_ROUTE, ACCESS_CONTROL_ALLOW_ORIGIN_HEADER and the loader's"
    )
    func settings() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let conf = folder.appendingPathComponent("thumbor.conf")
        try #"""
        ALLOWED_SOURCES = ['127.0.0.1', r'cdn[0-9]+\.example\.com']
        AUTO_PNG_TO_JPG = True
        AUTO_WEBP = True
        WEBP_QUALITY = 33
        MAX_PIXELS = 75e6
        PRESERVE_EXIF_INFO = True
        HTTP_LOADER_VALIDATE_CERTS = False
        HTTP_LOADER_MAX_REDIRECTS = 2
        HTTP_LOADER_DEFAULT_USER_AGENT = 'Thumbor/7.8'
        HEALTHCHECK_ROUTE = r'/status/?'
        ACCESS_CONTROL_ALLOW_ORIGIN_HEADER = '*'
        PROGRESSIVE_JPEG = True
        """#.write(to: conf, atomically: true, encoding: .utf8)
        var configuration = try ServerSettings.configuration(ServerSettings.values(arguments: ["--thumbor-config", conf.path], environment: [:])).configuration
        #expect(configuration.dialect == .thumbor && configuration.limits.maxSourcePixels == 75_000_000 && !configuration.output.stripsMetadata)
        #expect(configuration.ignoresCertificateErrors && configuration.maxRedirects == 2 && configuration.userAgent == "Thumbor/7.8")
        #expect(configuration.output.encoding.progressive && configuration.thumborHealthcheckRoute == "/status" && configuration.allowOrigin == "*")
        #expect(ThumborHostPattern(#"cdn[0-9]+\.example\.com"#).matches("cdn12.example.com"))
        #expect(!ThumborHostPattern(#"cdn[0-9]+\.example\.com"#).matches("cdn12.example.com.evil.org"))
        #expect(!ThumborHostPattern("127.0.0.1").matches("127x0x0x1"))
        configuration.allowsPrivateAddresses = true
        try await withServer({ $0 = configuration }) { (server: ServerHarness) async throws in
            let png = ImgproxySourceSettingsTests.png
            let source = server.origin.serve(png, at: "/a.png")
            let hostAndPath = "127.0.0.1:\(source.port ?? 0)/a.png"
            let jpeg = try await server.get("/unsafe/2x2/" + hostAndPath)
            #expect(jpeg.status == 200 && jpeg.header("Content-Type") == "image/jpeg" && jpeg.header("Access-Control-Allow-Origin") == "*")
            // WEBP_QUALITY: a WebP answer without quality() is the one quality(33) gives, not quality(80)'s.
            let photo = "127.0.0.1:\(source.port ?? 0)" + server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/p.jpg").path
            let accept = [("Accept", "image/webp,*/*")]
            let webp = try await server.get("/unsafe/100x0/" + photo, headers: accept)
            #expect(webp.status == 200 && webp.header("Content-Type") == "image/webp")
            #expect(try await server.get("/unsafe/100x0/filters:quality(33)/" + photo, headers: accept).body == webp.body)
            #expect(try await server.get("/unsafe/100x0/filters:quality(80)/" + photo, headers: accept).body != webp.body)
            #expect(try await server.get("/unsafe/2x2/localhost:\(source.port ?? 0)/a.png").status == 400)
            for path in ["/status", "/status/"] {
                let health = try await server.get(path)
                #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self) == "WORKING" && health.header("Cache-Control") == "no-cache")
            }
        }
    }
}
