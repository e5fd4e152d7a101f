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

    @Test("IMGPROXY_BASE_URL and IMGPROXY_URL_REPLACEMENTS rewrite imgproxy sources as imgproxy does: replacements, $1 and ${1} naming what * matched, then the base")
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
