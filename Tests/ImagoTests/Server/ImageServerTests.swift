import Foundation
import Imago
@testable import ImagoServer
import ImagoTestSupport
import Testing

/// `imago serve`'s router over HTTP, sources from a TestOrigin.
@Suite("imago serve", .timeLimit(.minutes(6)))
struct ImageServerTests {
    static func decode(_ data: Data) throws -> Image { try DecoderRegistry.standard().decode(data) }

    /// A server that signs with a known key, over a disk cache, with a JPEG and a PNG with alpha
    /// at its origin; `body` gets the server, the signed `rs:fit:64:64` path of the JPEG, and a
    /// function that signs an unsigned path.
    func withSignedServer(
        _ body: (ServerHarness, _ fit: String, _ sign: (String) -> String, _ photo: URL, _ alpha: URL) async throws -> Void
    ) async throws {
        let signer = try URLSigner(hexKeys: ["736563726574"], hexSalts: ["68656C6C6F"])
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        try await withServer({
            $0.signer = signer
            $0.cacheDirectory = cache
        }) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let alpha = server.origin.serve(try Corpus.data("png/basn6a08.png"), at: "/alpha.png")
            let sign = { (unsigned: String) -> String in
                let part = String(unsigned.dropFirst(2))
                return "/" + URLSigner.signature(for: part, pair: signer.pairs[0]) + part
            }
            try await body(server, sign(ServerHarness.path(photo.absoluteString, ["rs:fit:64:64"])), sign, photo, alpha)
        }
    }

    @Test("a signed URL with Accept: image/webp gives the resized WebP with Vary, an immutable Cache-Control and a strong ETag")
    func negotiatesWebP() async throws {
        try await withSignedServer { server, fit, _, _, _ in
            let webp = try await server.get(fit, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(webp.status == 200)
            #expect(webp.header("Content-Type") == "image/webp")
            #expect(webp.header("Vary") == "Accept")
            #expect(webp.header("Cache-Control") == "public, max-age=31536000, immutable")
            let image = try Self.decode(webp.body)
            #expect((image.metadata.format, image.width, image.height) == (.webp, 64, 44))
            let etag = try #require(webp.header("ETag"))
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        }
    }

    @Test("@bmp, @tiff, @jxl, @heic and @ico answer their formats (an ICO result over 256 px fitted into 256×256)")
    func bmpAndICO() async throws {
        try await withSignedServer { server, _, sign, photo, alpha in
            let bmp = try await server.get(sign(ServerHarness.path(alpha.absoluteString, ["rs:fit:20:20"], extension: "bmp")))
            #expect(bmp.status == 200 && bmp.header("Content-Type") == "image/bmp")
            let bmpImage = try Self.decode(bmp.body)
            #expect((bmpImage.metadata.format, bmpImage.width, bmpImage.height, bmpImage.metadata.hasAlpha) == (.bmp, 20, 20, true))
            var formats: [(ext: String, mime: String, format: ImageFormat)] = []
            #if TIFF
                formats.append(("tiff", "image/tiff", .tiff))
            #endif
            #if JXL
                formats.append(("jxl", "image/jxl", .jxl))
            #endif
            #if HEIF
                formats.append(("heic", "image/heif", .heif))
            #endif
            for (ext, mime, format) in formats {
                let answer = try await server.get(sign(ServerHarness.path(photo.absoluteString, ["rs:fit:30:30"], extension: ext)))
                #expect(answer.status == 200 && answer.header("Content-Type") == mime, "\(ext)")
                let image = try Self.decode(answer.body)
                #expect((image.metadata.format, image.width, image.height) == (format, 30, 21), "\(ext)")
            }
            let ico = try await server.get(sign(ServerHarness.path(photo.absoluteString, ["rs:fit:400:400:1"], extension: "ico")))
            #expect(ico.status == 200 && ico.header("Content-Type") == "image/x-icon" && ico.body.starts(with: [0, 0, 1, 0, 1, 0]))
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("answer.ico")
            try ico.body.write(to: file)
            let size = try await runProcess(URL(fileURLWithPath: "/usr/bin/identify"), ["-format", "%w %h", file.path])
            // The 150 × 103 photo enlarged to 400 × 275, then fitted into 256 × 256.
            #expect(String(decoding: size.output, as: UTF8.self) == "256 176")
        }
    }

    @Test("without Accept, JPEG for an opaque source (its own ETag) and PNG for one with alpha")
    func fallsBackByAlpha() async throws {
        try await withSignedServer { server, fit, sign, _, alpha in
            let webp = try await server.get(fit, headers: [("Accept", "image/webp")])
            let jpeg = try await server.get(fit)
            #expect(jpeg.header("Content-Type") == "image/jpeg")
            #expect(try Self.decode(jpeg.body).width == 64)
            #expect(jpeg.header("ETag") != nil && jpeg.header("ETag") != webp.header("ETag"))
            let png = try await server.get(sign(ServerHarness.path(alpha.absoluteString, ["w:16"])))
            #expect(png.header("Content-Type") == "image/png")
            #expect(try Self.decode(png.body).metadata.hasAlpha)
        }
    }

    @Test("If-None-Match with the variant's ETag is a 304 without a body; HEAD has the headers and no body")
    func conditionalAndHead() async throws {
        try await withSignedServer { server, fit, _, _, _ in
            let webp = try await server.get(fit, headers: [("Accept", "image/webp")])
            let etag = try #require(webp.header("ETag"))
            let unchanged = try await server.get(fit, headers: [("Accept", "image/webp"), ("If-None-Match", etag)])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.header("ETag") == etag)
            let head = try await server.get(fit, method: .HEAD, headers: [("Accept", "image/webp")])
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Type") == "image/webp")
        }
    }

    @Test("an extension picks the format over Accept, without Vary; every variant is made from one fetch of the source")
    func extensionWins() async throws {
        try await withSignedServer { server, fit, sign, photo, _ in
            _ = try await server.get(fit, headers: [("Accept", "image/webp")])
            let explicit = try await server.get(
                sign(ServerHarness.path(photo.absoluteString, ["rs:fill:40:40"], extension: "png")), headers: [("Accept", "image/webp")])
            #expect(explicit.header("Content-Type") == "image/png" && explicit.header("Vary") == nil)
            #expect(try Self.decode(explicit.body).width == 40)
            // The source was fetched once: the second variant came from the disk cache's copy.
            #expect(server.origin.log.requests(to: "/photo.jpg").count == 1)
        }
    }

    @Test("a signed path changed after signing is a 403 that says the signature is invalid")
    func tamperedSignature() async throws {
        try await withSignedServer { server, fit, _, _, _ in
            let tampered = try await server.get(fit.replacingOccurrences(of: "64:64", with: "65:64"))
            #expect(tampered.status == 403)
            #expect(String(decoding: tampered.body, as: UTF8.self) == "invalid signature\n")
            #expect(server.origin.log.requests.isEmpty)
        }
    }

    @Test("repeats come from the kept variants by their path, each Accept class its own")
    func repeatsFromKeptVariants() async throws {
        try await withSignedServer { server, fit, _, _, _ in
            let webp = try await server.get(fit, headers: [("Accept", "image/webp")])
            let jpeg = try await server.get(fit)
            let before = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            let again = try await server.get(fit, headers: [("Accept", "image/webp")])
            #expect(again.body == webp.body && again.header("Content-Type") == "image/webp" && again.header("Vary") == "Accept")
            #expect(try await server.get(fit).body == jpeg.body)
            let after = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            func kept(_ text: String) -> Int {
                text.split(separator: "\n").first { $0.hasPrefix(#"imago_serve_images_total{from="variant-memory"}"#) }
                    .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            }
            #expect(kept(after) == kept(before) + 2)
        }
    }

    @Test("each error has its status and a short body that names no internals")
    func errors() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("png/basn2c08.png").write(to: root.appendingPathComponent("local.png"))
        try await withServer({
            $0.localRoot = root
            $0.limits.maxSourceBytes = 20_000
        }) { server in
            let text = server.origin.serve(Data("not an image at all".utf8), at: "/text")
            let big = server.origin.serve(payload(50_000), at: "/big")
            let cases: [(String, Int, String)] = [
                (ServerHarness.path(server.origin.url("/photo.jpg").absoluteString, ["zz:1"]), 400, "unknown option 'zz'"),
                (ServerHarness.path(server.origin.url("/missing.jpg").absoluteString), 404, "source not found"),
                (ServerHarness.path(text.absoluteString), 422, "source is not an image Imago reads"),
                (ServerHarness.path(big.absoluteString), 422, "Invalid source image"),
                (ServerHarness.path("ftp://example.com/a.jpg"), 403, "source not allowed"),
                (ServerHarness.path("local:///../etc/passwd"), 404, "source not found"),
                (ServerHarness.path("local:///local.png", [], extension: "tga"), 400, "Imago does not write 'tga'"),
                (ServerHarness.path("local:///local.png", ["rs:fit:20000:20000:1"]), 400, "the size asked for is over 50000000 pixels"),
            ]
            for (path, status, message) in cases {
                let answer = try await server.get(path)
                #expect(answer.status == status, "\(path)")
                #expect(String(decoding: answer.body, as: UTF8.self) == message + "\n", "\(path)")
                #expect(answer.header("Cache-Control") == "no-store")
            }
            let local = try await server.get(ServerHarness.path("local:///local.png", ["w:8"], extension: "png"))
            #expect(local.status == 200)
            #expect(try Self.decode(local.body).width == 8)
            #expect(try await server.get("/health").status == 200)
        }
    }

    @Test("sources on loopback are refused under the default policy; an allow-list refuses other hosts")
    func addressPolicy() async throws {
        try await withServer({ $0.allowsPrivateAddresses = false }) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let answer = try await server.get(ServerHarness.path(photo.absoluteString))
            #expect(answer.status == 403)
            #expect(server.origin.log.requests.isEmpty)
        }
        try await withServer({ $0.allowedHosts = ["images.example.com"] }) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            #expect(try await server.get(ServerHarness.path(photo.absoluteString)).status == 403)
            #expect(server.origin.log.requests.isEmpty)
        }
    }

    @Test("identical requests in flight share one fetch and one encode; with every worker busy and no queue a request gets 429 with Retry-After")
    func coalescingAndOverload() async throws {
        try await withServer({
            $0.workers = 1
            $0.requestsQueueSize = 0
        }) { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "photo"
            server.origin.setRoute("/photo.jpg", route)
            let other = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/other.png")
            let path = ServerHarness.path(server.origin.url("/photo.jpg").absoluteString, ["w:50"])
            async let first = server.get(path)
            async let second = server.get(path)
            await server.origin.wait { $0.requests(to: "/photo.jpg").count == 1 }
            // The one place of work is taken by the held request: a different image is refused.
            let refused = try await server.get(ServerHarness.path(other.absoluteString))
            #expect(refused.status == 429 && String(decoding: refused.body, as: UTF8.self) == "Too many requests\n")
            #expect(refused.header("Retry-After") == "1")
            server.origin.release("photo")
            let (a, b) = try await (first, second)
            #expect(a.status == 200 && b.status == 200 && a.body == b.body)
            #expect(server.origin.log.requests(to: "/photo.jpg").count == 1)
            #expect(server.service.workInFlight == 0)
            #expect(try await server.get(ServerHarness.path(other.absoluteString)).status == 200)

            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("imago_serve_coalesced_total 1"))
            #expect(metrics.contains(#"imago_serve_requests_total{status="429"} 1"#) && metrics.contains("imago_serve_queue_full_total 1"))
            #expect(metrics.contains(#"imago_serve_requests_total{status="200"} 3"#))
            #expect(metrics.contains("imago_serve_request_duration_seconds_count"))
            #expect(metrics.contains("imago_transfers"), "the pipeline's own metrics share the registry")
        }
    }

    @Test("a source that broke off is resumed by the next request for it: the origin sends only the rest")
    func resumesSource() async throws {
        try await withServer { server in
            let jpeg = try Corpus.data("jpeg/video-001.jpeg")
            var route = TestOrigin.Route(body: jpeg)
            route.etag = "\"s1\""
            route.truncateAfter = jpeg.count / 3
            route.cutFirst = 1
            server.origin.setRoute("/photo.jpg", route)
            let path = ServerHarness.path(server.origin.url("/photo.jpg").absoluteString, ["w:50"], extension: "png")
            let broken = try await server.get(path)
            #expect(broken.status >= 500)
            // Kept in memory until the next request, and counted as memory the service keeps.
            #expect(server.service.pipeline.resumableBytes == jpeg.count / 3)
            #expect(server.service.memoryInUse >= jpeg.count / 3)
            #expect(server.service.pipeline.configuration.resumableDataLimit == server.service.configuration.memoryShares.resumable)
            let answer = try await server.get(path)
            #expect(answer.status == 200)
            #expect(try Self.decode(answer.body).width == 50)
            #expect(server.origin.log.requests(to: "/photo.jpg").map { $0.header("range") } == [nil, "bytes=\(jpeg.count / 3)-"])
            #expect(server.origin.log.responses.last?.bodyBytes == jpeg.count - jpeg.count / 3)
            #expect(server.service.pipeline.resumableBytes == 0)
        }
    }

    @Test("a graceful stop lets a request in flight finish whole, then refuses new connections")
    func gracefulStop() async throws {
        try await withServer { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "photo"
            server.origin.setRoute("/photo.jpg", route)
            let path = ServerHarness.path(server.origin.url("/photo.jpg").absoluteString, [], extension: "png")
            async let inFlight = server.get(path)
            await server.origin.wait { $0.requests(to: "/photo.jpg").count == 1 }
            #expect(!server.refusesConnections())
            await server.stop()
            server.origin.release("photo")
            let answer = try await inFlight
            #expect(answer.status == 200)
            let image = try Self.decode(answer.body)
            #expect((image.width, image.height) == (150, 103))
            // Hummingbird closes its listener from a task of its own after the signal, which may run
            // after the answer under load: wait for the server to have stopped (the answer's
            // connection was its last), then try. A plain connect: AsyncHTTPClient would retry a
            // refused connection until its timeout.
            await server.stopped()
            #expect(server.refusesConnections())
        }
    }

    @Test("a client that trickles its request head is cut off at the head deadline while others are answered")
    func tricklingClient() async throws {
        // Three seconds, so the other clients' whole heads arrive within it even when the suite
        // runs at once under a sanitizer on two cores (with one second, once, they did not).
        try await withServer({ $0.requestHeadTimeout = .seconds(3) }) { server in
            // 100 bytes at 10 a second would take 10 s; the deadline is 3 s.
            let head = "GET /health HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Slow: a\r\n", count: 6) + "\r\n"
            async let sent = server.trickle(head)
            // Not kept alive: idle for as long as the trickle takes, a kept connection would reach
            // the same deadline and could be closed just as the request after is sent on it (once,
            // under TSan: "I/O on closed channel").
            let during = try await server.get("/health", headers: [("Connection", "close")])
            #expect(during.status == 200)
            let bytes = await sent
            #expect(bytes != nil, "the connection was never closed")
            #expect((bytes ?? head.utf8.count) < head.utf8.count)
            let after = try await server.get("/health")
            #expect(after.status == 200)
        }
    }

    @Test("an animated GIF stays animated as WebP and, without Accept, as GIF (its own format), resized frame by frame; as JPEG it is its first frame")
    func animatedSource() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let gif = try await Data(contentsOf: try GIFDecoderTests.animationFile(disposal: "none", in: directory))
        try await withServer { server in
            let url = server.origin.serve(gif, at: "/anim.gif")
            let webp = try await server.get(ServerHarness.path(url.absoluteString, ["w:75"]), headers: [("Accept", "image/webp")])
            #expect(webp.header("Content-Type") == "image/webp")
            let animation = try Self.decode(webp.body)
            #expect((animation.frames.count, animation.width) == (3, 75))
            #expect(animation.frames.map(\.duration) == [.milliseconds(50), .milliseconds(100), .milliseconds(200)])
            let kept = try await server.get(ServerHarness.path(url.absoluteString, ["w:75"]))
            #expect(kept.header("Content-Type") == "image/gif")
            let gifAnimation = try Self.decode(kept.body)
            #expect((gifAnimation.frames.count, gifAnimation.width, gifAnimation.loopCount) == (3, 75, 2))
            #expect(gifAnimation.frames.map(\.duration) == [.milliseconds(50), .milliseconds(100), .milliseconds(200)])
            let jpeg = try await server.get(ServerHarness.path(url.absoluteString, ["w:75"], extension: "jpg"))
            #expect(jpeg.header("Content-Type") == "image/jpeg")
            #expect(try Self.decode(jpeg.body).frames.count == 1)
        }
    }

    @Test(
        "sources over the pixel or frame limit are 422 'Invalid source image', as imgproxy answers; a redirect to a private address is 403 without reaching it")
    func limitsAndRedirects() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let gif = try await Data(contentsOf: try GIFDecoderTests.animationFile(disposal: "none", in: directory))
        try await withServer({
            $0.limits.maxSourcePixels = 10_000
            $0.limits.maxFrames = 2
        }) { server in
            // 150 × 103 = 15,450 pixels.
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let pixels = try await server.get(ServerHarness.path(photo.absoluteString, ["w:20"]))
            #expect(pixels.status == 422 && String(decoding: pixels.body, as: UTF8.self) == "Invalid source image\n")
            let animation = server.origin.serve(gif, at: "/anim.gif")
            let frames = try await server.get(ServerHarness.path(animation.absoluteString, ["w:20"]), headers: [("Accept", "image/webp")])
            #expect(frames.status == 422 && String(decoding: frames.body, as: UTF8.self) == "Invalid source image\n")
        }
        // Only the test origin's own address is allowed, as a public one would be; every other is
        // refused as private ones are under the public-only policy.
        let onlyOrigin: @Sendable (ServerConfiguration) throws -> ImagePipeline = { configuration in
            var pipeline = ImagePipeline.Configuration()
            pipeline.addressPolicy = HostileNetworkTests.onlyTestOrigin
            pipeline.maxResponseSize = configuration.limits.maxSourceBytes
            return ImagePipeline(configuration: pipeline)
        }
        try await withServer(pipeline: onlyOrigin) { server in
            var route = TestOrigin.Route(body: Data())
            route.redirect = "http://169.254.169.254/latest/meta-data/"
            server.origin.setRoute("/go.jpg", route)
            let answer = try await server.get(ServerHarness.path(server.origin.url("/go.jpg").absoluteString))
            #expect(answer.status == 403 && String(decoding: answer.body, as: UTF8.self) == "source not allowed\n")
            #expect(server.origin.log.requests.count == 1)
        }
    }

    @Test("a plain X-Request-Id is echoed, a forged one replaced")
    func requestIDs() async throws {
        try await withServer { server in
            let plain = try await server.get("/_/plain/local:%2F%2F%2Fnone", headers: [("X-Request-Id", "abc-123")])
            #expect(plain.header("X-Request-Id") == "abc-123")
            let forged = try await server.get("/_/plain/local:%2F%2F%2Fnone", headers: [("X-Request-Id", "a b status=200")])
            let id = try #require(forged.header("X-Request-Id"))
            #expect(!id.contains(" ") && !id.isEmpty)
        }
    }

    @Test("a source that hangs is a 504 once the source timeout passes")
    func hangingSource() async throws {
        try await withServer({ $0.sourceTimeout = .seconds(1) }) { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "never"
            server.origin.setRoute("/hang.jpg", route)
            let answer = try await server.get(ServerHarness.path(server.origin.url("/hang.jpg").absoluteString))
            #expect(answer.status == 504)
            server.origin.release("never")
        }
    }

    @Test("a new image that outlasts the work timeout is a 504; its work is cancelled and its place freed")
    func workTimeout() async throws {
        try await withServer({
            $0.sourceTimeout = .seconds(600)
            // The first request waits on a gate that never opens, so any deadline cuts it off; a
            // long one leaves the second, ungated request room on a loaded machine (CI once took
            // 6 s for it under 5 s, while Chromium and the cgroup suites held both cores). Under the
            // loader's 15 s without bytes, which would answer "source took too long" first.
            $0.workTimeout = .seconds(12)
            $0.workers = 1
        }) { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "slow"
            server.origin.setRoute("/slow.jpg", route)
            let path = ServerHarness.path(server.origin.url("/slow.jpg").absoluteString, ["w:40"])
            let answer = try await server.get(path)
            #expect(answer.status == 504)
            #expect(String(decoding: answer.body, as: UTF8.self) == "the image took too long\n")
            // The cancelled work closed its transfer and gave its place back.
            await server.origin.wait { $0.requests(to: "/slow.jpg").count == 1 && $0.openConnections == 0 }
            await server.service.untilNoWork()
            #expect(server.service.workInFlight == 0)
            server.origin.release("slow")
            let again = try await server.get(path)
            #expect(again.status == 200)
            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"imago_serve_requests_total{status="504"} 1"#))
        }
    }
}
