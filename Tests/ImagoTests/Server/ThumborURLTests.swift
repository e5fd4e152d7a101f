import Foundation
import Imago
import Testing

@testable import ImagoServer

/// thumbor's URL grammar, filter arguments and signatures, without a thumbor to compare with
/// (``ThumborParityTests`` compares whole answers with thumbor itself).
@Suite("thumbor URLs")
struct ThumborURLTests {
    @Test("every part of the grammar, in order, and what is left is the image")
    func grammar() throws {
        let url = try ThumborURL(
            parsing:
                "/unsafe/meta/trim:bottom-right:15/10x20:300x400/adaptive-full-fit-in/-300x-orig/left/bottom/smart/filters:quality(50):blur(2)/example.com/a/b.jpg"
        )
        #expect(url.unsafe && url.meta && !url.debug)
        #expect(url.trim?.bottomRight == true && url.trim?.tolerance == 15)
        #expect(url.crop?.left == 10 && url.crop?.top == 20 && url.crop?.right == 300 && url.crop?.bottom == 400)
        #expect(url.fitIn == .full && url.adaptive)
        #expect(url.width == .pixels(300) && url.height == .original && url.flipHorizontal && url.flipVertical)
        #expect(url.horizontalAlignment == .left && url.verticalAlignment == .bottom && url.smart)
        #expect(url.filters == "quality(50):blur(2)")
        #expect(url.image == "example.com/a/b.jpg")
        #expect(ThumborFilter.parse(url.filters) == [.quality(50), .blur(radius: 2, sigma: 0)])
        // Parts out of order are the image's; a crop of zeros is none; an empty rest takes the part back.
        let plain = try ThumborURL(parsing: "/SIGNATURE/300x200/fit-in/a.jpg")
        #expect(plain.signature == "SIGNATURE" && plain.signedPart == "300x200/fit-in/a.jpg" && plain.fitIn == .none && plain.image == "fit-in/a.jpg")
        #expect(try ThumborURL(parsing: "/unsafe/0x0:0x0/a.jpg").crop == nil)
        #expect(try ThumborURL(parsing: "/unsafe/300x200/").image == "300x200/")
        #expect(throws: ServerError.self) { try ThumborURL(parsing: "/unsafe/") }
        // A filter's text runs to the first `)/`, so URLs inside arguments keep their slashes.
        let watermark = try ThumborURL(parsing: "/unsafe/filters:watermark(http://h/w.png,10,10,50)/a.jpg")
        #expect(watermark.image == "a.jpg")
        #expect(ThumborFilter.parse(watermark.filters) == [.watermark(ThumborWatermark(url: "http://h/w.png", x: "10", y: "10", alpha: 50))])
    }

    @Test("filter arguments as thumbor's patterns take them: unknown names and bad arguments are dropped, optional ones defaulted")
    func filters() {
        #expect(
            ThumborFilter.parse("nosuch(1):brightness(10):contrast(x):fill(red):round_corner(20|10,1,2,3)") == [
                .brightness(10), .fill(color: "red", fillTransparent: false), .roundCorner(a: 20, b: 10, red: 1, green: 2, blue: 3, transparent: false),
            ])
        #expect(ThumborFilter.parse("format(WEBP):format(bmp)") == [.format("webp"), .format(nil)])
        #expect(ThumborFilter.parse("focal(1x2:3x4):noise(5)") == [.focal(left: 1, top: 2, right: 3, bottom: 4), .noise(amount: 5, seed: 0)])
        #expect(ThumborFilter.parse("convolution(1;2;1,3,false)") == [.convolution(matrix: [1, 2, 1], columns: 3, normalize: false)])
        #expect(ThumborFilter.parse("blur(0)").isEmpty)  // a radius of 0 does not match PositiveNonZeroNumber
    }

    @Test("signatures are libthumbor's: HMAC-SHA1 of the path after them, URL-safe base64")
    func signatures() {
        // `CryptoURL(key='my-key').generate(width=300, height=200, smart=True, image_url='example.com/a.jpg', filters=['quality(80)'])`.
        let part = "300x200/smart/filters:quality(80)/example.com/a.jpg"
        #expect(ThumborSigner.signature(for: part, key: "my-key") == "VcgYoJrPz-cY-O5Srw_YCZ4YZ84=")
        let signer = ThumborSigner(key: "my-key")
        #expect(signer.verify("VcgYoJrPz-cY-O5Srw_YCZ4YZ84=", for: part))
        #expect(!signer.verify("VcgYoJrPz-cY-O5Srw_YCZ4YZ85=", for: part))
        #expect(!signer.verify("VcgYoJrPz-cY-O5Srw_YCZ4YZ84=", for: part + "x"))
        #expect(!signer.allowsUnsafe && ThumborSigner(key: nil).allowsUnsafe && ThumborSigner(key: "k", allowsUnsafe: true).allowsUnsafe)
    }

    @Test("noise draws glibc's random() sequence for its seed (srandom(7): 1045618677, 1863967299, 1272579899)")
    func glibcRandom() {
        var random = GlibcRandom(seed: 7)
        #expect([random.next(), random.next(), random.next()] == [1_045_618_677, 1_863_967_299, 1_272_579_899])
    }

    @Test("thumbor's box arithmetic: auto crop around the centre of mass, fit-in rounding, meta's operations")
    func geometry() throws {
        let metadata = ImageMetadata(format: .png, originalWidth: 400, originalHeight: 300, orientationApplied: .up, hasAlpha: false)
        let image = Image(width: 400, height: 300, frames: [.init(pixels: [UInt8](repeating: 128, count: 400 * 300 * 4))], metadata: metadata)
        let crop = try ThumborTransformation(url: ThumborURL(parsing: "/unsafe/200x100/a.png"), filters: []).run(image)
        #expect(ThumborMeta.operations(of: crop.plan) == [.crop(left: 0, top: 50, right: 400, bottom: 250), .resize(width: 200, height: 100)])
        #expect(crop.image.width == 200 && crop.image.height == 100)
        let fit = try ThumborTransformation(url: ThumborURL(parsing: "/unsafe/fit-in/-200x100/a.png"), filters: []).run(image)
        #expect(ThumborMeta.operations(of: fit.plan) == [.resize(width: 133, height: 100), .flipHorizontally])
        let meta = String(decoding: ThumborMeta.json(image: "a.png", made: fit.image, plan: fit.plan, frames: 1), as: UTF8.self)
        #expect(meta.contains(#""target": {"width": 133, "height": 100}"#) && meta.contains(#""origin": "alignment""#))
    }

    @Test("the dialect and thumbor's settings from IMAGO_* variables; a value Imago cannot use names its flag")
    func settings() throws {
        let thumbor = try ServerSettings.configuration([
            "IMAGO_DIALECT": "Thumbor", "IMAGO_THUMBOR_KEY": "k", "IMAGO_AUTO_WEBP": "true", "IMAGO_RESPECT_ORIENTATION": "1",
        ]).configuration
        #expect(thumbor.dialect == .thumbor && thumbor.thumborSigner.key == Array("k".utf8) && !thumbor.thumborSigner.allowsUnsafe)
        #expect(thumbor.output.thumborAutoWebP && thumbor.output.thumborRespectsOrientation)
        let open = try ServerSettings.configuration(["IMAGO_THUMBOR_KEY": "k", "IMAGO_ALLOW_UNSAFE_URL": "true"]).configuration
        #expect(open.dialect == .imgproxy && open.thumborSigner.allowsUnsafe)
        #expect(throws: ServerError(status: 500, "--dialect (IMAGO_DIALECT) has a value Imago cannot use")) {
            try ServerSettings.configuration(["IMAGO_DIALECT": "imaginary"])
        }
    }

    @Test("through a live server: a watermark placed on many variants is fetched once; a missing source is thumbor's 404")
    func watermarkFetchedOnce() async throws {
        try await withServer({ $0.dialect = .thumbor }) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let mark = server.origin.serve(try Corpus.data("png/basn6a08.png"), at: "/mark.png")
            let host = photo.host! + ":" + String(photo.port!)
            for width in [40, 50, 60] {
                let answer = try await server.get("/unsafe/\(width)x0/filters:watermark(\(host)/mark.png,0,0,20)/\(host)/photo.jpg")
                #expect(answer.status == 200 && answer.header("Content-Type") == "image/jpeg")
                #expect(try ThumborPeer.decode(answer.body).width == width)
            }
            #expect(server.origin.log.requests.filter { $0.path == mark.path }.count == 1)
            #expect(try await server.get("/unsafe/40x0/\(host)/missing.jpg").status == 404)
        }
    }

    @Test("with a disk cache, thumbor answers (an image with max_age, a meta/ JSON) are kept: a new server answers them without fetching or decoding")
    func keptAcrossRestart() async throws {
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let data = try Corpus.data("jpeg/video-001.jpeg")
        var kept: [(path: String, body: Data, etag: String?, type: String?)] = []
        try await withServer({
            $0.dialect = .thumbor
            $0.cacheDirectory = cache
        }) { server in
            let photo = server.origin.serve(data, at: "/photo.jpg")
            let host = photo.host! + ":" + String(photo.port!)
            for path in ["/unsafe/60x40/filters:max_age(120):sharpen(2,1,true)/\(host)/photo.jpg", "/unsafe/meta/60x40/\(host)/photo.jpg"] {
                let answer = try await server.get(path)
                #expect(answer.status == 200)
                kept.append((path, answer.body, answer.header("ETag"), answer.header("Content-Type")))
            }
            #expect(server.service.pipeline.statistics.decodes >= 1)
        }
        try await withServer({
            $0.dialect = .thumbor
            $0.cacheDirectory = cache
        }) { server in
            // The first origin has shut down: only the kept bytes can answer.
            for (path, body, etag, type) in kept {
                let again = try await server.get(path)
                #expect(again.status == 200 && again.body == body && again.header("ETag") == etag && again.header("Content-Type") == type, "\(path)")
            }
            let image = try await server.get(kept[0].path)
            #expect(image.header("Cache-Control") == "max-age=120,public")
            #expect(server.origin.log.requests.isEmpty)
            #expect(server.service.pipeline.statistics.decodes == 0)
        }
    }
}
