import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// The server's one core: both dialects in one process, one local-root rule for both and the
/// gallery, and a URL's source limits applied before the work they limit.
@Suite("imago serve's core: dialects, local root, limits", .timeLimit(.minutes(6)))
struct ServerCoreTests {
    static func decode(_ data: Data) throws -> Image { try DecoderRegistry.standard().decode(data) }

    static let imgproxySigner = try! URLSigner(hexKeys: ["736563726574"], hexSalts: ["68656C6C6F"])
    static let thumborKey = "thumbor-secret"

    /// imgproxy's `/signature/…` for `unsigned` (a `/_/…` path from ServerHarness), under `prefix`.
    static func signedImgproxy(_ unsigned: String, prefix: String = "") -> String {
        let part = String(unsigned.dropFirst(2))
        return prefix + "/" + URLSigner.signature(for: part, pair: imgproxySigner.pairs[0]) + part
    }

    /// thumbor's `/signature/…` for `part`, under `prefix`.
    static func signedThumbor(_ part: String, prefix: String) -> String {
        prefix + "/" + ThumborSigner.signature(for: part, key: thumborKey) + "/" + part
    }

    /// A local root with `pics/photo.png`, a hidden file and a link leaving the root, beside a
    /// secret file outside it; `body` gets the root and the secret's bytes.
    func withLocalRoot(_ body: (URL, Data) async throws -> Void) async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let root = folder.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("pics"), withIntermediateDirectories: true)
        let picture = try Corpus.data("png/basn2c08.png")
        try picture.write(to: root.appendingPathComponent("pics/photo.png"))
        try picture.write(to: root.appendingPathComponent(".hidden.png"))
        let secret = try Corpus.data("png/basn6a08.png")
        try secret.write(to: folder.appendingPathComponent("secret.png"))
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("escape.png"), withDestinationURL: folder.appendingPathComponent("secret.png"))
        try await body(root, secret)
    }

    @Test("one process answers imgproxy URLs at the root and thumbor URLs under their path, each signed with its own key")
    func bothDialects() async throws {
        try await withLocalRoot { root, _ in
            try await withServer({
                $0.localRoot = root
                $0.signer = Self.imgproxySigner
                $0.thumborSigner = ThumborSigner(key: Self.thumborKey)
                $0.thumborPath = "/thumbor"
            }) { server in
                let imgproxy = try await server.get(Self.signedImgproxy(ServerHarness.path("local:///pics/photo.png", ["rs:fit:16:0"], extension: "png")))
                let thumbor = try await server.get(Self.signedThumbor("16x0/filters:format(png)/pics/photo.png", prefix: "/thumbor"))
                #expect(imgproxy.status == 200 && thumbor.status == 200)
                let (a, b) = (try Self.decode(imgproxy.body), try Self.decode(thumbor.body))
                #expect(a.width == 16 && a.height == 16 && b.width == 16 && b.height == 16)
                // The same picture: both are the source halved, by two resamplers.
                let difference = zip(a.frames[0].pixels, b.frames[0].pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +)
                #expect(Double(difference) / Double(a.frames[0].pixels.count) < 12)
                // Each dialect's key is its own: a thumbor signature made with imgproxy's path fails, and the other way round.
                #expect(try await server.get("/thumbor/unsafe/16x0/pics/photo.png").status == 400)
                #expect(try await server.get(ServerHarness.path("local:///pics/photo.png", ["rs:fit:16:0"])).status == 403)
                let crossed = try await server.get(Self.signedThumbor("16x0/pics/photo.png", prefix: ""))
                // At the root it is an imgproxy path, which its base64 source does not parse as.
                #expect(crossed.status == 400, "\(String(decoding: crossed.body, as: UTF8.self))")
            }
        }
    }

    @Test("thumbor's MAX_AGE gives thumbor answers max-age=N,public, a max_age() filter wins, imgproxy's keep the server's")
    func thumborMaxAge() async throws {
        try await withLocalRoot { root, _ in
            try await withServer({
                $0.localRoot = root
                $0.thumborPath = "/thumbor"
                $0.thumborMaxAge = 600
            }) { server in
                #expect(try await server.get("/thumbor/unsafe/8x0/pics/photo.png").header("Cache-Control") == "max-age=600,public")
                #expect(try await server.get("/thumbor/unsafe/8x0/filters:max_age(30)/pics/photo.png").header("Cache-Control") == "max-age=30,public")
                let imgproxy = try await server.get(ServerHarness.path("local:///pics/photo.png", ["rs:fit:8:0"]))
                #expect(imgproxy.header("Cache-Control") == server.service.configuration.cacheControl)
            }
            try await withServer({
                $0.localRoot = root
                $0.dialect = .thumbor
                $0.thumborMaxAge = 0
            }) { server in
                let answer = try await server.get("/unsafe/8x0/pics/photo.png")
                #expect(answer.status == 200 && answer.header("Cache-Control") == nil)
            }
        }
    }

    @Test("imgproxy's URLs under a path prefix: the signature covers the path after it; other paths are 404")
    func pathPrefix() async throws {
        try await withLocalRoot { root, _ in
            try await withServer({
                $0.localRoot = root
                $0.signer = Self.imgproxySigner
                $0.pathPrefix = "images/"
                $0.trustedSignatures = ["signed-by-hand"]
            }) { server in
                let unsigned = ServerHarness.path("local:///pics/photo.png", ["rs:fit:8:0"], extension: "png")
                let answer = try await server.get(Self.signedImgproxy(unsigned, prefix: "/images"))
                #expect(answer.status == 200)
                #expect(try Self.decode(answer.body).width == 8)
                #expect(try await server.get(Self.signedImgproxy(unsigned)).status == 404)
                // IMGPROXY_TRUSTED_SIGNATURES: a listed signature passes as it is; any other must verify.
                #expect(try await server.get("/images/signed-by-hand" + unsigned.dropFirst(2)).status == 200)
                #expect(try await server.get("/images/signed-by-another" + unsigned.dropFirst(2)).status == 403)
            }
        }
    }

    @Test("the gallery links to the dialect that is mounted, and every link is answered")
    func galleryLinks() async throws {
        for thumborAtRoot in [false, true] {
            try await withLocalRoot { root, _ in
                try await withServer({
                    $0.localRoot = root
                    $0.servesGallery = true
                    $0.signer = Self.imgproxySigner
                    $0.thumborSigner = ThumborSigner(key: Self.thumborKey)
                    if thumborAtRoot { $0.dialect = .thumbor } else { $0.thumborPath = "/thumbor" }
                }) { server in
                    let page = String(decoding: try await server.get("/gallery").body, as: UTF8.self)
                    // The one local-root rule: the hidden file and the link leaving the root are not listed.
                    #expect(page.contains("pics/photo.png") && !page.contains("hidden") && !page.contains("escape"))
                    let sources = page.components(separatedBy: " src=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
                    #expect(sources.count == 1)
                    for source in sources {
                        #expect(source.contains(thumborAtRoot ? "fit-in/640x0/" : "rs:fit:640:0"), "\(source)")
                        let answer = try await server.get(source.replacingOccurrences(of: "&amp;", with: "&"))
                        #expect(answer.status == 200, "\(source)")
                        #expect(try Self.decode(answer.body).width == 32)
                    }
                }
            }
        }
    }

    /// Paths that try to leave the local root, as written in a URL.
    static let traversals = [
        "../secret.png", "%2e%2e/secret.png", "%2E%2E%2Fsecret.png", "%252e%252e/secret.png", "pics/../../secret.png",
        "pics/%2e%2e/%2e%2e/secret.png", "..%5csecret.png", "pics%5c..%5c..%5csecret.png", "pics/photo.png%00.jpg",
        "%2fetc%2fpasswd", "escape.png", ".hidden.png", "pics/./photo.png",
    ]

    @Test("paths leaving the local root are the same 404 in both dialects, and nothing outside is served")
    func traversal() async throws {
        try await withLocalRoot { root, secret in
            try await withServer({
                $0.localRoot = root
                $0.thumborPath = "/thumbor"
            }) { server in
                // The way in works in both, so the refusals below are the rule's and not a broken URL's.
                #expect(try await server.get(ServerHarness.path("local:///pics/photo.png")).status == 200)
                #expect(try await server.get("/thumbor/unsafe/pics/photo.png").status == 200)
                for path in Self.traversals {
                    let imgproxy = try await server.get(ServerHarness.path("local:///" + path))
                    let thumbor = try await server.get("/thumbor/unsafe/" + path)
                    for answer in [imgproxy, thumbor] {
                        #expect(answer.status == 404, "\(path)")
                        #expect(String(decoding: answer.body, as: UTF8.self) == "source not found\n", "\(path)")
                        #expect(answer.body != secret)
                    }
                }
            }
        }
    }

    @Test("the local-root rule itself: decoded once, no dot, hidden, backslash or NUL segment, links resolved")
    func localRootRule() async throws {
        try await withLocalRoot { root, _ in
            let rule = LocalRoot(root)
            let file = try rule.file(encodedPath: "/pics/photo.png")
            #expect(file.lastPathComponent == "photo.png")
            let slashed = try rule.file(encodedPath: "pics%2Fphoto.png")
            #expect(slashed == file)
            for path in Self.traversals where !["%2fetc%2fpasswd", "%252e%252e/secret.png"].contains(path) {
                #expect(throws: ServerError.self, "\(path)") { try rule.file(encodedPath: path) }
            }
            // Decoded once: a double-encoded name is a literal name under the root, not a way out.
            #expect(try rule.file(encodedPath: "%252e%252e/secret.png").path == rule.root.path + "/%2e%2e/secret.png")
            // An absolute path is taken under the root, where nothing is.
            let absolute = try rule.file(encodedPath: "%2fetc%2fpasswd")
            #expect(absolute.path == rule.root.path + "/etc/passwd")
            #expect(rule.files(withExtensions: ["png"], limit: 10) == ["pics/photo.png"])
        }
    }

    @Test("max_src_file_size stops a slow download early, on Content-Length or at the limit")
    func sourceBytesWhileDownloading() async throws {
        try await withServer { server in
            let body = payload(2_000_000)
            var chunked = TestOrigin.Route(body: body)
            chunked.chunked = true
            chunked.bytesPerSecond = 200_000
            server.origin.setRoute("/slow", chunked)
            var announced = TestOrigin.Route(body: body)
            announced.bytesPerSecond = 200_000
            server.origin.setRoute("/announced", announced)
            for name in ["/slow", "/announced"] {
                let before = server.origin.log.bodyBytesWritten
                let answer = try await server.get(ServerHarness.path(server.origin.url(name).absoluteString, ["msfs:50000", "rs:fit:10:10"]))
                #expect(answer.status == 422, "\(name)")
                #expect(String(decoding: answer.body, as: UTF8.self) == "Invalid source image\n")
                // The origin wrote a few tenths of a second of the 2 MB, not the body: the download stopped.
                let written = server.origin.log.bodyBytesWritten - before
                #expect(written < 400_000, "\(name): \(written) bytes written")
            }
        }
    }

    @Test("max_src_resolution refuses a 64-megapixel PNG on its header: no decode runs")
    func sourcePixelsAtHeader() async throws {
        let holder = PipelineHolder()
        try await withServer(
            { $0.limits.maxSourcePixels = 100_000_000 },
            pipeline: { configuration in
                let pipeline = try ImageService.makePipeline(configuration)
                holder.pipeline = pipeline
                return pipeline
            }
        ) { server in
            let png = server.origin.serve(try HostileFiles.data("png-64mp-zeros.png"), at: "/big.png")
            let answer = try await server.get(ServerHarness.path(png.absoluteString, ["msr:1", "rs:fit:10:10"]))
            #expect(answer.status == 422)
            #expect(String(decoding: answer.body, as: UTF8.self) == "Invalid source image\n")
            let statistics = try #require(holder.pipeline).statistics
            #expect(statistics.decodes == 0)
            // Without the URL's limit the same source is decoded (reduced) and answered.
            let small = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/small.png")
            #expect(try await server.get(ServerHarness.path(small.absoluteString, ["msr:1", "rs:fit:10:10"])).status == 200)
            #expect(try #require(holder.pipeline).statistics.decodes == 1)
        }
    }
}

/// The pipeline a test's server was made with.
final class PipelineHolder: @unchecked Sendable {
    var pipeline: ImagePipeline?
}
