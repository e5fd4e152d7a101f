import Foundation
import Imago
import ImagoTestSupport
import Testing

/// Redirects, addresses and slow or endless bodies from an origin that means harm.
@Suite("Hostile origin: redirects, addresses, rates", .timeLimit(.minutes(6)))
struct HostileNetworkTests {
    /// Only 127.0.0.1, where TestOrigin listens: other loopback addresses stand for private ones.
    static let onlyTestOrigin = AddressPolicy { $0 == IPAddress("127.0.0.1") }

    @Test(
        "a redirect to a scheme other than http(s) is refused before anything connects",
        arguments: [
            "http+unix://%2Ftmp%2Fimago.sock/x.png", "file:///etc/passwd", "ftp://127.0.0.1/x.png", "data:image/png;base64,AAAA",
        ])
    func redirectSchemes(location: String) async throws {
        try await withOrigin { origin, pipeline in
            var route = TestOrigin.Route(body: Data())
            route.redirect = location
            origin.setRoute("/go.png", route)
            let error = await loadError(pipeline, ImageRequest(url: origin.url("/go.png")))
            let scheme = String(location.prefix { $0 != ":" })
            #expect(error?.code == .redirectToUnsupportedScheme(scheme))
            #expect(error?.description.contains("only http and https") == true)
            #expect(origin.log.requests.count == 1)
        }
    }

    @Test("a cross-origin redirect drops Authorization, Cookie, Proxy-Authorization and the configured headers; same-origin keeps them")
    func crossOriginHeaders() async throws {
        try await withOrigin(configure: {
            $0.headersDroppedOnCrossOriginRedirect = ["X-Api-Key"]
            $0.headers["X-Api-Key"] = "k"
            $0.headers["Proxy-Authorization"] = "Basic eA=="
            $0.cookies = { _ in "session=1" }
        }) { origin, pipeline in
            try await withTestOrigin { other in
                other.serve(payload(10), at: "/x.png")
                origin.serve(payload(10), at: "/same.png")
                var route = TestOrigin.Route(body: Data())
                route.redirect = other.url("/x.png").absoluteString
                origin.setRoute("/away.png", route)
                route.redirect = "/same.png"
                origin.setRoute("/near.png", route)
                let sent = ["authorization", "cookie", "proxy-authorization", "x-api-key"]
                let credentials = ImageRequest.Credentials(user: "u", password: "p")
                _ = try await pipeline.data(for: ImageRequest(url: origin.url("/away.png"), credentials: credentials, options: .sendCookies))
                _ = try await pipeline.data(for: ImageRequest(url: origin.url("/near.png"), credentials: credentials, options: .sendCookies))
                #expect(origin.log.requests.allSatisfy { request in sent.allSatisfy { request.header($0) != nil } })
                #expect(origin.log.requests.count == 3)
                #expect(other.log.requests.count == 1)
                #expect(other.log.requests.allSatisfy { request in sent.allSatisfy { request.header($0) == nil } })
                #expect(other.log.requests.first?.header("user-agent") != nil)
            }
        }
    }

    @Test(
        ".publicOnly refuses loopback however it is written, before connecting",
        arguments: [
            "127.0.0.1", "localhost", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "[::1]", "[::ffff:127.0.0.1]",
        ])
    func publicOnlyRefusesLoopback(host: String) async throws {
        try await withOrigin(configure: { $0.addressPolicy = .publicOnly }) { origin, pipeline in
            let url = URL(string: "http://\(host):\(origin.port)/a.png")!
            origin.serve(payload(10), at: "/a.png")
            let error = await loadError(pipeline, ImageRequest(url: url))
            guard error?.code.kind == .addressRefused, let address = error?.code.message else {
                Issue.record("got \(String(describing: error))")
                return
            }
            #expect(["127.0.0.1", "::1", "::ffff:127.0.0.1"].contains(address))
            #expect(error?.description.contains("the address policy refuses") == true)
            #expect(origin.log.requests.isEmpty)
        }
    }

    @Test("a name is resolved once and connected to by the address checked; TestOrigin is reached through 'localhost'")
    func policyConnectsToCheckedAddress() async throws {
        try await withOrigin(configure: { $0.addressPolicy = Self.onlyTestOrigin }) { origin, pipeline in
            let body = payload(100)
            origin.serve(body, at: "/a.png")
            let data = try await pipeline.data(for: ImageRequest(url: URL(string: "http://localhost:\(origin.port)/a.png")!)).data
            #expect(data == body)
            #expect(origin.log.requests.first?.header("host") == "localhost:\(origin.port)")
        }
    }

    @Test(
        "every redirect hop is checked: a redirect to a refused address fails without connecting there",
        arguments: [
            "http://127.0.0.2:1/x.png", "http://10.0.0.1/x.png", "http://169.254.169.254/latest/meta-data/", "http://[::1]:1/x.png",
        ])
    func redirectToRefusedAddress(location: String) async throws {
        try await withOrigin(configure: { $0.addressPolicy = Self.onlyTestOrigin }) { origin, pipeline in
            var route = TestOrigin.Route(body: Data())
            route.redirect = location
            origin.setRoute("/go.png", route)
            let error = await loadError(pipeline, ImageRequest(url: origin.url("/go.png")))
            guard error?.code.kind == .addressRefused else {
                Issue.record("got \(String(describing: error))")
                return
            }
            #expect(origin.log.requests.count == 1)
        }
    }

    @Test(
        "IPAddress.isPublic",
        arguments: [
            ("8.8.8.8", true), ("1.1.1.1", true), ("2606:4700:4700::1111", true), ("::ffff:8.8.8.8", true),
            ("127.0.0.1", false), ("10.1.2.3", false), ("172.16.0.1", false), ("172.31.255.255", false), ("172.32.0.1", true),
            ("192.168.1.1", false), ("100.64.0.1", false), ("100.128.0.1", true), ("169.254.169.254", false), ("0.0.0.0", false),
            ("224.0.0.1", false), ("255.255.255.255", false), ("::", false), ("::1", false), ("fc00::1", false), ("fd12::1", false),
            ("fe80::1", false), ("ff02::1", false), ("::ffff:127.0.0.1", false), ("::ffff:10.0.0.1", false), ("64:ff9b::a00:1", false),
            ("2002:a00:1::", false), ("2002:808:808::", true), ("::127.0.0.1", false), ("2001:db8::1", false),
        ])
    func publicAddresses(text: String, isPublic: Bool) throws {
        let address = try #require(IPAddress(text))
        #expect(address.isPublic == isPublic)
        #expect(AddressPolicy.publicOnly.allows(address) == isPublic)
        #expect(AddressPolicy.allowAll.allows(address))
    }

    @Test("a body dripping slower than the minimum rate is stopped after the grace period")
    func slowDrip() async throws {
        try await withOrigin(configure: {
            $0.minimumTransferRate = TransferRate(bytesPerSecond: 1000, gracePeriod: .milliseconds(300))
        }) { origin, pipeline in
            // 10 bytes a second, for 10 s if nothing stops it.
            origin.serve(payload(100), at: "/drip.png")
            let error = await loadError(pipeline, ImageRequest(url: origin.url("/drip.png?rate=10")))
            #expect(error?.code == .tooSlow(minimumBytesPerSecond: 1000))
            #expect(error?.description.contains("minimum of 1000 bytes/s") == true)
        }
    }

    @Test("the defaults bound a transfer: a 120 s deadline and 1 KiB/s after 20 s")
    func defaultLimits() {
        let configuration = ImagePipeline.Configuration()
        #expect(configuration.deadline == .seconds(120))
        #expect(configuration.minimumTransferRate == TransferRate(bytesPerSecond: 1024, gracePeriod: .seconds(20)))
        #expect(configuration.addressPolicy.checksAddresses == false)
    }

    @Test("an endless chunked body stops at maxResponseSize")
    func endlessChunkedBody() async throws {
        try await withOrigin(configure: { $0.maxResponseSize = 100_000 }) { origin, pipeline in
            var route = TestOrigin.Route(body: payload(5_000_000))
            route.chunked = true
            origin.setRoute("/endless.png", route)
            let error = await loadError(pipeline, ImageRequest(url: origin.url("/endless.png")))
            #expect(error?.code == .tooLarge(limit: 100_000))
        }
    }

    @Test("a flood of response headers fails cleanly or loads, and is never cached")
    func headerFlood() async throws {
        try await withOrigin { origin, pipeline in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.headers = (0..<20_000).map { ("X-Flood-\($0)", String(repeating: "v", count: 40)) }
            origin.setRoute("/flood.jpg", route)
            do {
                let image = try await pipeline.image(for: origin.url("/flood.jpg"))
                #expect(image.width == 150)
            } catch let error as ImagoError {
                #expect(!error.description.isEmpty)
            }
        }
    }
}
