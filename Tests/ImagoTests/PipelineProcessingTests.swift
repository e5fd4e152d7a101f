import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Processing in the pipeline", .timeLimit(.minutes(6)))
struct PipelineProcessingTests {
    typealias Resize = ImageProcessors.Resize

    static let variants: [[any ImageProcessing]] = try! [
        [],
        [Resize(size: PixelSize(width: 64, height: 64))],
        [Resize(size: PixelSize(width: 64, height: 64), contentMode: .aspectFill, crop: true)],
        [Resize(size: PixelSize(width: 32, height: 32)), ImageProcessors.Grayscale()],
        [ImageProcessors.Circle()],
    ]

    @Test("five variants of one URL: one request at the origin, one decode, each variant processed once and cached under its own key")
    func variantsShareTransferAndDecode() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let url = origin.url("/photo.jpg?gate=go")
            // Two handles per variant: the second shares the first's processed image.
            let handles = Self.variants.flatMap { processors in
                (0..<2).map { _ in pipeline.imageTask(with: ImageRequest(url: url, processors: processors)) }
            }
            await origin.wait { $0.requests.count == 1 }
            origin.release("go")
            var images: [Image] = []
            for handle in handles { images.append(try await handle.response.image) }

            #expect(origin.log.requests.count == 1)
            #expect(pipeline.statistics.transfers == 1)
            #expect(pipeline.statistics.decodes == 1)
            #expect(pipeline.statistics.processed == 4)
            let original = images[0]
            #expect(images[2].width == 64 && images[2].height == Int((Double(64 * original.height) / Double(original.width)).rounded()))
            #expect(images[4].width == 64 && images[4].height == 64)
            #expect(images[6].width == 32)
            let grey = images[6].pixel(x: 10, y: 10)
            #expect(grey.r == grey.g && grey.g == grey.b)
            #expect(images[8].width == min(original.width, original.height) && images[8].pixel(x: 0, y: 0).a == 0)
            for pair in stride(from: 0, to: images.count, by: 2) {
                #expect(images[pair].pixels == images[pair + 1].pixels)
            }

            // Each variant is now in memory under its own key; a new variant needs no transfer
            // only once its source is cached, which the memory cache does not hold by source.
            for (index, processors) in Self.variants.enumerated() {
                let cached = pipeline.cachedResponse(for: ImageRequest(url: url, processors: processors))
                #expect(cached?.image.width == images[index * 2].width)
                #expect(cached?.image.pixels == images[index * 2].pixels)
            }
            #expect(pipeline.cachedResponse(for: ImageRequest(url: url, processors: [try ImageProcessors.GaussianBlur(radius: 2)])) == nil)
        }
    }

    @Test("a variant requested after the transfer is made from a new load, and a cached variant is served from memory")
    func laterVariants() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/p.png")
            let small = ImageRequest(url: url, processors: [try Resize(size: PixelSize(width: 8, height: 8))])
            let first = try await pipeline.response(for: small)
            #expect(first.image.width == 8 && first.source == .network)
            let again = try await pipeline.response(for: small)
            #expect(again.source == .memory && again.image.pixels == first.image.pixels)
            let full = try await pipeline.image(for: url)
            #expect(full.width == 32)
            #expect(origin.log.requests.count == 2)
            #expect(pipeline.statistics.processed == 1)
        }
    }

    @Test("a processor that fails fails only its own handles, with stage processing and the URL; nothing is cached for it")
    func processingFailure() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/f.png")
            let url = origin.url("/f.png?gate=go")
            let failing = ImageRequest(url: url, processors: [try ImageProcessors.Crop(x: 100, y: 100, width: 10, height: 10)])
            let bad = pipeline.imageTask(with: failing)
            let good = pipeline.imageTask(with: ImageRequest(url: url))
            await origin.wait { $0.requests.count == 1 }
            origin.release("go")
            await #expect {
                try await bad.response
            } throws: { error in
                guard let error = error as? ImagoError, error.code.kind == .processingFailed else { return false }
                return error.stage == .processing && error.url == url
            }
            #expect(try await good.response.image.width == 32)
            #expect(pipeline.cachedResponse(for: failing) == nil)
            #expect(pipeline.activity == (0, 0) as (Int, Int))
        }
    }

    @Test("previews of a processed request are processed like its final image")
    func processedPreviews() async throws {
        let data = try Corpus.data("jpeg/video-001.progressive.jpeg")
        try await withOrigin(configure: { $0.previewInterval = .zero }) { origin, pipeline in
            origin.serve(data, at: "/prog.jpg")
            // The first half, then the rest once a preview has been delivered: no timing involved.
            let url = origin.url("/prog.jpg?pause_after=\(data.count / 2)&pause_gate=previewed")
            let request = ImageRequest(url: url, options: .previews, processors: [try Resize(size: PixelSize(width: 40, height: 40))])
            let previews = Recorder<Int>()
            let task = pipeline.imageTask(
                with: request,
                preview: { preview in
                    previews.append(preview.image.width)
                    origin.release("previewed")
                })
            let final = try await task.response.image
            #expect(final.width == 40)
            #expect(!previews.all.isEmpty)
            #expect(previews.all.allSatisfy { $0 == 40 })
        }
    }
}

@Suite("Thumbnails at decode", .timeLimit(.minutes(6)))
struct ThumbnailTests {
    /// A 1600×1200 JPEG with a gradient, made by the project's encoder.
    static func photo() throws -> Data {
        let image = ProcessingTests.image(width: 1600, height: 1200) { x, y in (UInt8(x * 255 / 1600), UInt8(y * 255 / 1200), 128, 255) }
        return try JPEGEncoder(quality: 85).encode(image)
    }

    @Test("a reduced decode covers the thumbnail: fit needs the fitted size, fill both sides")
    func reducedDecode() throws {
        let data = try Self.photo()
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 200, height: 200)
        options.targetMode = .fit
        let fitted = try JPEGDecoder().decode(data, options: options)
        #expect((fitted.width, fitted.height) == (200, 150))
        options.targetMode = .fill
        let filled = try JPEGDecoder().decode(data, options: options)
        #expect((filled.width, filled.height) == (400, 300))
        #expect(filled.metadata.originalWidth == 1600)
    }

    @Test("thumbnail requests: the size asked for (scale included), one transfer shared with the full image, one decode each, cached by thumbnail")
    func thumbnailRequests() async throws {
        let data = try Self.photo()
        try await withOrigin { origin, pipeline in
            origin.serve(data, at: "/photo.jpg")
            let url = origin.url("/photo.jpg?gate=go")
            let fit = ImageRequest(url: url, thumbnail: .init(maxPixelSize: 300))
            let fill = ImageRequest(url: url, thumbnail: .init(size: PixelSize(width: 50, height: 50), contentMode: .aspectFill, scale: 2))
            let filledAndRound = ImageRequest(url: url, processors: [try ImageProcessors.Circle()], thumbnail: fill.thumbnail)
            let handles = [fit, fill, filledAndRound, ImageRequest(url: url)].map { pipeline.imageTask(with: $0) }
            await origin.wait { $0.requests.count == 1 }
            origin.release("go")
            var images: [Image] = []
            for handle in handles { images.append(try await handle.response.image) }
            #expect((images[0].width, images[0].height) == (300, 225))
            #expect((images[1].width, images[1].height) == (100, 100))
            #expect((images[2].width, images[2].height) == (100, 100) && images[2].pixel(x: 0, y: 0).a == 0)
            #expect((images[3].width, images[3].height) == (1600, 1200))
            #expect(origin.log.requests.count == 1)
            // Full size, the fitted thumbnail and the filled one (shared by its two variants).
            #expect(pipeline.statistics.decodes == 3)
            #expect(pipeline.statistics.processed == 1)
            #expect(pipeline.cachedResponse(for: fill)?.image.width == 100)
            #expect(pipeline.cachedResponse(for: fit)?.image.width == 300)
            // The gradient survives: left dark, right bright.
            #expect(images[0].pixel(x: 2, y: 100).r < 20 && images[0].pixel(x: 297, y: 100).r > 235)
        }
    }
}

extension ThumbnailTests {
    @Test("scaleDownLargeImages caps the pixels of a large image and keeps its aspect; a small one is untouched")
    func scaleDownLargeImages() async throws {
        let data = try Self.photo()  // 1600×1200
        try await withOrigin(configure: { $0.largeImagePixelLimit = 100_000 }) { origin, pipeline in
            let url = origin.serve(data, at: "/large.jpg")
            let capped = try await pipeline.image(for: ImageRequest(url: url, options: .scaleDownLargeImages))
            #expect(capped.width * capped.height <= 100_000)
            #expect(capped.width >= 360 && abs(Double(capped.width) / Double(capped.height) - 4.0 / 3.0) < 0.01)
            let full = try await pipeline.image(for: url)
            #expect((full.width, full.height) == (1600, 1200))
            let small = origin.serve(try JPEGEncoder(quality: 80).encode(ProcessingTests.solid(200, 100)), at: "/small.jpg")
            let untouched = try await pipeline.image(for: ImageRequest(url: small, options: .scaleDownLargeImages))
            #expect((untouched.width, untouched.height) == (200, 100))
        }
    }
}

extension ThumbnailTests {
    @Test(
        "thumbnails of EXIF-turned photos have the upright photo's proportions, for every content mode",
        arguments: [1, 6, 8], ImageProcessors.Resize.ContentMode.allCases)
    func orientedThumbnails(orientation: Int, mode: ImageProcessors.Resize.ContentMode) async throws {
        let data = try await OrientationTests.tagged(orientation)
        let upright = try DecoderRegistry.standard().decode(data)
        try await withOrigin { origin, pipeline in
            let url = origin.serve(data, at: "/turned.jpg")
            let box = PixelSize(width: 60, height: 60)
            let thumbnail = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(size: box, contentMode: mode)))
            let expected = try ImageProcessors.Resize(size: box, contentMode: mode, crop: mode == .aspectFill).scaledSize(
                width: upright.width, height: upright.height)
            let cropped = mode == .aspectFill ? PixelSize(width: min(60, expected.width), height: min(60, expected.height)) : expected
            #expect(PixelSize(width: thumbnail.width, height: thumbnail.height) == cropped)
            if mode == .aspectFit {
                #expect(max(thumbnail.width, thumbnail.height) == 60 && (thumbnail.width > thumbnail.height) == (upright.width > upright.height))
            }
        }
    }
}

@Suite("Sources and scale", .timeLimit(.minutes(6)))
struct SourceSelectionTests {
    static func jpeg(_ side: Int) throws -> Data {
        try JPEGEncoder(quality: 80).encode(ProcessingTests.solid(side, side))
    }

    @Test("the smallest source that covers the thumbnail is loaded, a cached one preferred, the largest without a thumbnail")
    func sourceSelection() async throws {
        try await withOrigin { origin, pipeline in
            let sources = try [100, 400, 1600].map { side in
                ImageRequest.Source(url: origin.serve(try Self.jpeg(side), at: "/s\(side).jpg"), pixelSize: PixelSize(width: side, height: side))
            }
            func load(_ thumbnail: ImageRequest.Thumbnail?) async throws -> ImageResponse {
                try await pipeline.response(for: ImageRequest(sources: sources, thumbnail: thumbnail))
            }
            #expect(try await load(.init(maxPixelSize: 200)).url.path == "/s400.jpg")
            #expect(try await load(.init(maxPixelSize: 100)).url.path == "/s100.jpg")
            #expect(try await load(.init(size: PixelSize(width: 50, height: 50), scale: 3)).url.path == "/s400.jpg")
            #expect(try await load(.init(maxPixelSize: 3000)).url.path == "/s1600.jpg")
            #expect(try await load(nil).url.path == "/s1600.jpg")
            // The 1600 source's 300 thumbnail is cached (loaded on its own): it wins over the
            // smaller 400 source, which is never fetched for that thumbnail.
            let big = sources[2]
            _ = try await pipeline.response(for: ImageRequest(url: big.url, thumbnail: .init(maxPixelSize: 300)))
            let before = origin.log.requests.count
            let cached = try await load(.init(maxPixelSize: 300))
            #expect(cached.source == .memory && cached.url.path == "/s1600.jpg")
            #expect(origin.log.requests.count == before)
        }
    }

    @Test("@2x and @3x file names and thumbnail scales set the image's scale")
    func scales() async throws {
        try await withOrigin { origin, pipeline in
            let data = try Self.jpeg(64)
            let plain = origin.serve(data, at: "/icon.jpg")
            let double = origin.serve(data, at: "/icon@2x.jpg")
            let triple = origin.serve(data, at: "/icon@3x.jpg")
            #expect(try await pipeline.image(for: plain).scale == 1)
            #expect(try await pipeline.image(for: double).scale == 2)
            #expect(try await pipeline.image(for: triple).scale == 3)
            let thumbnail = try await pipeline.image(for: ImageRequest(url: plain, thumbnail: .init(size: PixelSize(width: 16, height: 16), scale: 2)))
            #expect(thumbnail.scale == 2 && thumbnail.width == 32)
        }
    }
}
