import Foundation
import Imago
import Testing

@testable import ImagoServer

/// What an operator moving from imgproxy sees through a live server: the source's format kept,
/// `Content-Disposition`, `expires`, `raw` and `skip_processing`, the watermark setting,
/// `max_bytes`, smart gravity, and variants kept on disk as their own bytes.
@Suite("imago serve as imgproxy")
struct ImgproxyDropInTests {
    static func decode(_ data: Data) throws -> Image { try DecoderRegistry.standard().decode(data) }

    @Test("with no format asked, a WebP source gives WebP and a PNG source PNG, not JPEG")
    func keepsSourceFormat() async throws {
        try await withServer { server in
            let webp = server.origin.serve(try Corpus.data("webp/blue-purple-pink-large.lossless.webp"), at: "/a.webp")
            let answer = try await server.get(ServerHarness.path(webp.absoluteString, ["w:32"]))
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/webp")
            #expect(try Self.decode(answer.body).width == 32)
            let png = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/b.png")
            #expect(try await server.get(ServerHarness.path(png.absoluteString, ["w:16"])).header("Content-Type") == "image/png")
        }
        // imgproxy's own default preferred formats: a WebP source gives JPEG (no alpha) or PNG.
        let preferred = try ServerSettings.configuration(["IMAGO_PREFERRED_FORMATS": "jpg,png"]).configuration.output.preferredFormats
        try await withServer({ $0.output.preferredFormats = preferred }) { server in
            let webp = server.origin.serve(try Corpus.data("webp/blue-purple-pink-large.lossless.webp"), at: "/a.webp")
            let answer = try await server.get(ServerHarness.path(webp.absoluteString, ["w:32"]))
            #expect(answer.header("Content-Type") == "image/jpeg")
        }
        #expect(try ServerSettings.configuration(["IMAGO_PREFERRED_FORMATS": "jpeg,png,gif"]).configuration.output.preferredFormats == [.jpeg, .png, .gif])
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMAGO_PREFERRED_FORMATS": "tga"]) }
    }

    @Test("Content-Disposition names the file from the source or the filename option, inline or as an attachment, made safe")
    func contentDisposition() async throws {
        try await withServer { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photos/holiday.jpg")
            let plain = try await server.get(ServerHarness.path(photo.absoluteString, ["w:16"]))
            #expect(plain.header("Content-Disposition") == "inline; filename=\"holiday.jpg\"")
            let named = try await server.get(ServerHarness.path(photo.absoluteString, ["w:16", "fn:my%22file", "att:1"], extension: "png"))
            #expect(named.header("Content-Disposition") == "attachment; filename=\"my_file.png\"")
            let encoded = try await server.get(ServerHarness.path(photo.absoluteString, ["w:16", "fn:Li4vZXRjL3Bhc3N3ZA:1"]))  // "../etc/passwd"
            #expect(encoded.header("Content-Disposition") == "inline; filename=\"_etc_passwd.jpg\"")
            // The same picture under another name is the same variant: made once.
            #expect(plain.header("ETag") == encoded.header("ETag"))
        }
    }

    @Test("an expired URL is a 404 without a fetch; an expiry kept with a path is checked on each repeat")
    func expires() async throws {
        try await withServer { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let expired = try await server.get(ServerHarness.path(photo.absoluteString, ["w:16", "exp:1000"]))
            #expect(expired.status == 404 && String(decoding: expired.body, as: UTF8.self) == "expired URL\n")
            #expect(server.origin.log.requests.isEmpty)
            let future = Int(Date().timeIntervalSince1970) + 3600
            #expect(try await server.get(ServerHarness.path(photo.absoluteString, ["w:16", "exp:\(future)"])).status == 200)
        }
        let headers = DeliveryHeaders(
            options: try ProcessingOptions(parsing: ["exp:2000"], now: 1000), source: URL(string: "http://a/b.jpg")!, returnsAttachment: false)
        #expect(!headers.hasExpired(now: 1999) && headers.hasExpired(now: 2001))
    }

    @Test("raw gives the source's bytes as they came; skip_processing does for its formats when the answer's format is theirs")
    func unprocessed() async throws {
        try await withServer { server in
            let data = try Corpus.data("jpeg/video-001.jpeg")
            let photo = server.origin.serve(data, at: "/photo.jpg")
            let raw = try await server.get(ServerHarness.path(photo.absoluteString, ["raw:1", "w:10"]))
            #expect(raw.status == 200 && raw.body == data && raw.header("Content-Type") == "image/jpeg")
            let skipped = try await server.get(ServerHarness.path(photo.absoluteString, ["skp:jpg", "w:10"]))
            #expect(skipped.body == data)
            let converted = try await server.get(ServerHarness.path(photo.absoluteString, ["skp:jpg", "w:10"], extension: "png"))
            #expect(converted.header("Content-Type") == "image/png")
            #expect(try Self.decode(converted.body).width == 10)
            let other = try await server.get(ServerHarness.path(photo.absoluteString, ["skp:png", "w:10"]))
            #expect(try Self.decode(other.body).width == 10)
            let text = server.origin.serve(Data("hello".utf8), at: "/notes.txt")
            #expect(try await server.get(ServerHarness.path(text.absoluteString, ["raw:1"])).body == Data("hello".utf8))
        }
    }

    @Test("the watermark from IMAGO_WATERMARK_DATA is placed by wm; a bad one stops the service from starting")
    func watermarkSetting() async throws {
        var mark = [UInt8](repeating: 0, count: 8 * 8 * 4)
        for index in 0..<64 { (mark[index * 4], mark[index * 4 + 3]) = (255, 255) }
        let png = try PNGEncoder().encode(
            Image(width: 8, height: 8, frames: [.init(pixels: mark)], metadata: .init(format: .png, originalWidth: 8, originalHeight: 8, hasAlpha: true)))
        let settings = try ServerSettings.configuration(["IMAGO_WATERMARK_DATA": png.base64EncodedString()]).configuration
        try await withServer({ $0.output.watermark = settings.output.watermark }) { server in
            let photo = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/p.png")
            let marked = try Self.decode(try await server.get(ServerHarness.path(photo.absoluteString, ["wm:1:nowe"])).body)
            #expect(marked.pixel(x: 2, y: 2) == (255, 0, 0, 255))
            let unmarked = try Self.decode(try await server.get(ServerHarness.path(photo.absoluteString, [])).body)
            #expect(unmarked.pixel(x: 2, y: 2) != (255, 0, 0, 255))
        }
        var configuration = ServerConfiguration()
        configuration.output.watermark = .data(Data("not an image".utf8))
        #expect(throws: (any Error).self) { try ImageService(configuration: configuration) }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMAGO_WATERMARK_DATA": "x", "IMAGO_WATERMARK_PATH": "/y"]) }
    }

    @Test("max_bytes bounds the answer; smart gravity crops to the box")
    func maxBytesAndSmart() async throws {
        try await withServer { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let full = try await server.get(ServerHarness.path(photo.absoluteString, ["q:95"]))
            let bound = full.body.count / 3
            let small = try await server.get(ServerHarness.path(photo.absoluteString, ["q:95", "mb:\(bound)"]))
            #expect(small.status == 200 && small.body.count <= bound && small.body.count > 0)
            let smart = try await server.get(ServerHarness.path(photo.absoluteString, ["rs:fill:50:50", "g:sm"]))
            let image = try Self.decode(smart.body)
            #expect((image.width, image.height) == (50, 50))
        }
    }

    @Test("with a disk cache, a variant is kept as its own bytes: a new server answers it without fetching, decoding or encoding")
    func encodeOnce() async throws {
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let data = try Corpus.data("jpeg/video-001.jpeg")
        var first: ImgproxyDropInTests.Kept?
        try await withServer({ $0.cacheDirectory = cache }) { server in
            let photo = server.origin.serve(data, at: "/photo.jpg")
            let answer = try await server.get(ServerHarness.path(photo.absoluteString, ["rs:fill:40:30"], extension: "webp"))
            first = Kept(body: answer.body, etag: answer.header("ETag"), path: ServerHarness.path(photo.absoluteString, ["rs:fill:40:30"], extension: "webp"))
        }
        let kept = try #require(first)
        try await withServer({ $0.cacheDirectory = cache }) { server in
            // The first origin has shut down: only the kept bytes can answer.
            let again = try await server.get(kept.path)
            #expect(again.status == 200 && again.body == kept.body && again.header("ETag") == kept.etag)
            #expect(server.origin.log.requests.isEmpty)
            let statistics = server.service.pipeline.statistics
            #expect(statistics.decodes == 0)
        }
    }

    @Test("an SVG source: passed through sanitised when no format is named, rasterised at the asked size when one is")
    func svgSources() async throws {
        let svg = Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="20" height="10" onload="alert(1)"><script>alert(2)</script>
            <rect width="20" height="10" fill="#00ff00"/><path d="M0 10 L20 0" stroke="#000" stroke-width="0.3"/></svg>
            """.utf8)
        try await withServer { server in
            let source = server.origin.serve(svg, at: "/logo.svg")
            let passed = try await server.get(ServerHarness.path(source.absoluteString, ["w:200"]))
            #expect(passed.status == 200 && passed.header("Content-Type") == "image/svg+xml")
            let text = String(decoding: passed.body, as: UTF8.self)
            #expect(text.contains("<rect") && !text.contains("script") && !text.contains("alert"))
            #expect(passed.header("Content-Disposition") == "inline; filename=\"logo.svg\"")
            let asked = try await server.get(ServerHarness.path(source.absoluteString, ["w:200"], extension: "png"))
            let image = try Self.decode(asked.body)
            #expect((image.width, image.height) == (200, 100))  // enlarged without el:1, as imgproxy enlarges vectors
            let reference = try await SVGDecoderTests.reference(svg, width: 200, height: 100)
            #expect(SVGDecoderTests.meanDifference(image, reference) <= 1)
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let refused = try await server.get(ServerHarness.path(photo.absoluteString, [], extension: "svg"))
            #expect(refused.status == 422)
        }
        try await withServer({ $0.output.alwaysRasterizesSVG = true }) { server in
            let source = server.origin.serve(svg, at: "/logo.svg")
            let answer = try await server.get(ServerHarness.path(source.absoluteString, ["h:30"]))
            #expect(answer.header("Content-Type") == "image/png")
            #expect(try Self.decode(answer.body).height == 30)
        }
        // IMGPROXY_SANITIZE_SVG=false: passed through as it came, scripts and all.
        try await withServer({ $0.output.sanitizesSVG = false }) { server in
            let source = server.origin.serve(svg, at: "/logo.svg")
            let answer = try await server.get(ServerHarness.path(source.absoluteString, ["w:200"]))
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/svg+xml" && answer.body == svg)
        }
        #expect(try !ServerSettings.configuration(["IMGPROXY_SANITIZE_SVG": "false"]).configuration.output.sanitizesSVG)
    }

    struct Kept: Sendable {
        var body: Data
        var etag: String?
        var path: String
    }

    @Test("IMAGO_MEMORY_BYTES bounds what the service keeps; a processed image is kept once, encoded, never decoded in the pipeline")
    func memoryBytes() async throws {
        #expect(try ServerSettings.configuration(["IMAGO_MEMORY_BYTES": "67108864"]).configuration.memoryBytes == 64 << 20)
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMAGO_MEMORY_BYTES": "1000"]) }
        #expect(try ImageService.makePipeline(ServerConfiguration()).configuration.memoryCache == nil)
        // Even a pipeline given with a memory cache gets no decoded copy of the service's variants.
        let decoded = MemoryCache<ImageRequest.CacheKey, ImageResponse>()
        try await withServer(
            { $0.memoryBytes = 1 << 20 },
            pipeline: { _ in
                var configuration = ImagePipeline.Configuration()
                configuration.addressPolicy = .allowAll
                configuration.memoryCache = decoded
                return ImagePipeline(configuration: configuration)
            }
        ) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            var answered = 0
            for buster in 0..<40 {  // 40 variants of about 40 KB
                let answer = try await server.get(ServerHarness.path(photo.absoluteString, ["w:150", "cb:\(buster)"], extension: "png"))
                #expect(answer.status == 200)
                answered += answer.body.count
            }
            #expect(answered > 1 << 20)
            #expect(server.service.memoryInUse > 0 && server.service.memoryInUse <= 1 << 20)
            #expect(decoded.totalCost == 0)
        }
    }
}
