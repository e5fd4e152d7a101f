import Foundation
import Glibc
import ImagoTestSupport
import Testing

@testable import Imago

/// curl's proxy variables, read as curl reads them.
@Suite("proxies: the variables")
struct ProxySettingsTests {
    @Test("http_proxy, https_proxy, all_proxy by scheme, lowercase first; SOCKS5 taken, SOCKS4, SOCKS5 with credentials or https not")
    func variables() {
        let settings = ProxySettings.environment([
            "http_proxy": "http://user:p%40ss@proxy.internal:3128", "HTTP_PROXY": "http://upper:1", "ALL_PROXY": "10.0.0.1:8080",
        ])
        #expect(settings.http == HTTPProxy(host: "proxy.internal", port: 3128, credentials: .init(user: "user", password: "p@ss")))
        #expect(settings.https == HTTPProxy(host: "10.0.0.1", port: 8080))
        #expect(!"\(settings.http!)".contains("p@ss"))
        #expect(ProxySettings.environment(["HTTPS_PROXY": "socks5://127.0.0.1:1081"]).https == HTTPProxy(host: "127.0.0.1", port: 1081, kind: .socks5))
        #expect(ProxySettings.environment(["ALL_PROXY": "socks5h://socks.internal"]).http == HTTPProxy(host: "socks.internal", port: 1080, kind: .socks5))
        #expect(ProxySettings.environment(["HTTPS_PROXY": "socks4://127.0.0.1:1080"]).https == nil)
        #expect(ProxySettings.environment(["HTTPS_PROXY": "socks5://user:secret@127.0.0.1:1080"]).https == nil)
        #expect(ProxySettings.environment(["https_proxy": "https://proxy:443"]).https == nil)
        #expect(ProxySettings.environment([:]) == .none)
    }

    @Test(
        "no_proxy as curl: a name and its subdomains (a leading dot ignored), an address, a network, *, and loopback through the proxy unless named",
        arguments: [
            ("example.com", "http://example.com/a", true), ("example.com", "http://img.example.com/a", true),
            (".example.com", "http://example.com/a", true), ("example.com", "http://notexample.com/a", false),
            ("example.com:8080", "http://example.com/a", true), ("10.0.0.0/8", "http://10.2.3.4/a", true),
            ("10.0.0.0/8", "http://11.2.3.4/a", false), ("127.0.0.1", "http://127.0.0.1:9/a", true), ("", "http://127.0.0.1:9/a", false),
            ("localhost", "http://127.0.0.1/a", false), ("*", "https://anything.example/a", true), ("::1", "http://[::1]:8/a", true),
            ("[::1]", "http://[::1]:8/a", true),
        ])
    func noProxy(entry: String, url: String, direct: Bool) throws {
        let proxy = HTTPProxy(host: "proxy", port: 3128)
        let settings = ProxySettings(http: proxy, https: proxy, noProxy: entry.isEmpty ? [] : [entry])
        #expect((settings.proxy(for: try #require(URL(string: url))) == nil) == direct)
    }
}

/// Transfers through Debian's tinyproxy: plain requests in absolute form and https in a CONNECT
/// tunnel, with credentials; the address policy still applies to the target; a proxy that answers
/// garbage or closes is a clear error.
@Suite("proxies: through tinyproxy", .enabled(if: TinyProxy.isInstalled), .timeLimit(.minutes(6)))
struct ProxyTests {
    static let photo = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg")

    static func pipeline(_ proxies: ProxySettings, policy: AddressPolicy = .allowAll) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration()
        configuration.proxies = proxies
        configuration.addressPolicy = policy
        configuration.memoryCache = nil
        configuration.allowInvalidCertificates = true
        return ImagePipeline(configuration: configuration)
    }

    @Test("http in absolute form and https in a CONNECT tunnel, both through the proxy (its log and its Via header show it), loopback included")
    func throughProxy() async throws {
        let photo = try Data(contentsOf: Self.photo)
        try await withTinyProxy { proxy in
            let settings = ProxySettings.environment(["http_proxy": proxy.url, "https_proxy": proxy.url])
            let pipeline = Self.pipeline(settings)
            let plain = try await TestOrigin.start()
            let url = plain.serve(photo, at: "/plain.jpg")
            #expect(try await pipeline.data(for: ImageRequest(url: url)).data == photo)
            #expect(plain.log.requests.first?.header("Via")?.contains(TinyProxy.viaName) == true)
            #expect(proxy.log.contains("GET http://127.0.0.1:\(plain.port)/plain.jpg"), "\(proxy.log)")
            try await plain.shutdown()

            let secure = try await TestOrigin.start(tls: true)
            let secureURL = secure.serve(photo, at: "/secure.jpg")
            #expect(try await pipeline.data(for: ImageRequest(url: secureURL)).data == photo)
            #expect(proxy.log.contains("CONNECT 127.0.0.1:\(secure.port)"), "\(proxy.log)")
            // Inside the tunnel the proxy sees nothing: no Via on the request.
            #expect(secure.log.requests.first?.header("Via") == nil)
            try await secure.shutdown()
        }
    }

    @Test(
        "a proxy that wants credentials: without them http is its 407 and https a refused tunnel naming 407; with them both pass; the password never in an error"
    )
    func credentials() async throws {
        let photo = try Data(contentsOf: Self.photo)
        try await withTinyProxy(user: "imago", password: "proxy-secret-42") { proxy in
            let plain = try await TestOrigin.start()
            let secure = try await TestOrigin.start(tls: true)
            let urls = [plain.serve(photo, at: "/a.jpg"), secure.serve(photo, at: "/b.jpg")]
            let anonymous = Self.pipeline(ProxySettings.environment(["all_proxy": proxy.url]))
            let httpError = try #require(await loadError(anonymous, ImageRequest(url: urls[0])))
            #expect(httpError.code == .httpStatus(407))
            let tunnelError = try #require(await loadError(anonymous, ImageRequest(url: urls[1])))
            #expect(tunnelError.code == .connectionFailed && tunnelError.reason?.contains("refused the tunnel with HTTP 407") == true, "\(tunnelError)")

            let wrong = Self.pipeline(ProxySettings.environment(["all_proxy": "http://imago:wrong-password-7@127.0.0.1:\(proxy.port)"]))
            let wrongError = try #require(await loadError(wrong, ImageRequest(url: urls[1])))
            #expect(!"\(wrongError) \(wrongError.reason ?? "")".contains("wrong-password-7"))

            let signedIn = Self.pipeline(ProxySettings.environment(["all_proxy": "http://imago:proxy-secret-42@127.0.0.1:\(proxy.port)"]))
            for url in urls { #expect(try await signedIn.data(for: ImageRequest(url: url)).data == photo) }
            // The proxy's credentials go to the proxy only.
            #expect(plain.log.requests.allSatisfy { $0.header("Proxy-Authorization") == nil })
            try await plain.shutdown()
            try await secure.shutdown()
        }
    }

    @Test("no_proxy naming the host goes directly; the address policy refuses a loopback target before the proxy hears of it")
    func directAndPolicy() async throws {
        let photo = try Data(contentsOf: Self.photo)
        try await withTinyProxy { proxy in
            let origin = try await TestOrigin.start()
            let url = origin.serve(photo, at: "/a.jpg")
            let direct = Self.pipeline(ProxySettings.environment(["http_proxy": proxy.url, "no_proxy": "localhost,127.0.0.1"]))
            #expect(try await direct.data(for: ImageRequest(url: url)).data == photo)
            #expect(origin.log.requests.first?.header("Via") == nil)

            let guarded = Self.pipeline(ProxySettings.environment(["http_proxy": proxy.url]), policy: .publicOnly)
            #expect(await loadError(guarded, ImageRequest(url: url))?.code.kind == .addressRefused)
            #expect(!proxy.log.contains("Request"), "\(proxy.log)")
            #expect(origin.log.requests.count == 1)
            try await origin.shutdown()
        }
    }
}

/// Proxies that misbehave: each a clear error naming the proxy.
@Suite("proxies: hostile proxies", .timeLimit(.minutes(6)))
struct HostileProxyTests {
    @Test(
        "a proxy that answers CONNECT with garbage, closes at once, answers too long, or sends bytes after its 200 is a clear error; a refusal with a page is the refusal",
        arguments: [
            ("garbage\r\n\r\n", ImagoError.Code.invalidResponse), ("", ImagoError.Code.connectionReset),
            ("HTTP/1.1 200 OK\r\n\r\nnot-tls", ImagoError.Code.invalidResponse),
            ("HTTP/1.0 403 Forbidden\r\nContent-Length: 9\r\n\r\nforbidden", ImagoError.Code.connectionFailed),
            ("HTTP/1.1 200 OK\r\n" + String(repeating: "X-Pad: 0123456789\r\n", count: 1200), ImagoError.Code.invalidResponse),
        ])
    func hostileProxy(answer: String, code: ImagoError.Code) async throws {
        let (port, accepted) = try oneShotServer(answer: answer)
        let pipeline = ProxyTests.pipeline(ProxySettings(https: HTTPProxy(host: "127.0.0.1", port: port)))
        let error = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "https://images.example/a.jpg")!)))
        #expect(error.code == code, "\(error)")
        #expect(error.reason?.contains("proxy") == true)
        _ = await accepted.value
    }

    /// A TCP listener on 127.0.0.1 that accepts one connection, reads what comes, writes `answer`
    /// and closes.
    private func oneShotServer(answer: String) throws -> (port: Int, done: Task<Void, Never>) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ready else { throw POSIXError(.EADDRINUSE) }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let done = Task {
            await offThePool {
                let connection = accept(listener, nil, nil)
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = read(connection, &buffer, buffer.count)
                let bytes = Array(answer.utf8)
                _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
                close(listener)
            }
        }
        return (port, done)
    }
}

@Suite("proxies: through Dante (SOCKS5)", .enabled(if: DanteProxy.isInstalled), .timeLimit(.minutes(6)))
struct SOCKSProxyTests {
    static func pipeline(
        _ proxy: DanteProxy, policy: AddressPolicy = .allowAll, configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration()
        configuration.proxies = ProxySettings.environment(["all_proxy": proxy.url])
        configuration.addressPolicy = policy
        configure(&configuration)
        return ImagePipeline(configuration: configuration)
    }

    @Test("http and https go through the SOCKS5 proxy (its log names each target), requests in origin form, loopback included")
    func throughSOCKS() async throws {
        try await withDanteProxy { proxy in
            let pipeline = Self.pipeline(proxy) { $0.allowInvalidCertificates = true }
            let plain = try await TestOrigin.start()
            let body = payload(30_000)
            let url = plain.serve(body, at: "/plain.jpg")
            let plainResponse = try await pipeline.data(for: ImageRequest(url: url))
            #expect(plainResponse.data == body)
            #expect(plain.log.requests.first?.path == "/plain.jpg", "origin form, not the absolute URL an HTTP proxy gets")
            // Dante's line: client, proxy -> its own outgoing address, the target (address.port).
            #expect(await proxy.peer.waitForLog(" 127.0.0.1.\(plain.port)\n"), "\(proxy.log)")
            try await plain.shutdown()

            let secure = try await TestOrigin.start(tls: true)
            let secureURL = secure.serve(body, at: "/secure.jpg")
            let secureResponse = try await pipeline.data(for: ImageRequest(url: secureURL))
            #expect(secureResponse.data == body)
            #expect(await proxy.peer.waitForLog(" 127.0.0.1.\(secure.port)\n"), "\(proxy.log)")
            try await secure.shutdown()
        }
    }

    @Test("the address policy refuses a loopback target before the SOCKS proxy hears of it")
    func policyBeforeProxy() async throws {
        try await withDanteProxy { proxy in
            let origin = try await TestOrigin.start()
            let url = origin.serve(payload(10), at: "/x.jpg")
            let error = await loadError(Self.pipeline(proxy, policy: .publicOnly), ImageRequest(url: url))
            #expect(error?.code.kind == .addressRefused)
            #expect(!proxy.log.contains("tcp/connect"))
            #expect(origin.log.requests.isEmpty)
            try await origin.shutdown()
        }
    }

    @Test("a SOCKS proxy that cannot reach the target says so: connectionFailed with its reply")
    func targetRefused() async throws {
        try await withDanteProxy { proxy in
            let closed = try PeerProcess.freePort()
            let error = await loadError(Self.pipeline(proxy), ImageRequest(url: URL(string: "http://127.0.0.1:\(closed)/x.jpg")!))
            #expect(error?.code == .connectionFailed)
            #expect(error?.description.contains("SOCKS proxy could not connect") == true, "\(String(describing: error))")
        }
    }
}
