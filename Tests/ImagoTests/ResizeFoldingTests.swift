import Foundation
import Imago
import ImagoTestSupport
import Testing

/// A leading shrinking `Resize` is folded into the decode plan: the decoder reduces as for a
/// thumbnail, and the result has the size the unfolded path gives, within the corpus's lossy
/// tolerance (8/255 mean per channel). The corpus photo is small (150×103), so a reduced decode
/// (libjpeg-turbo's M/8 scaling) differs most here; on a 3840×2400 photo the mean difference
/// measured 0–3.
@Suite("Resize folded into the decode", .timeLimit(.minutes(6)))
struct ResizeFoldingTests {
    static let photo = try! Corpus.data("jpeg/video-001.jpeg")

    /// The unfolded path: a full decode, then the processors one by one.
    static func reference(_ processors: [any ImageProcessing]) throws -> Image {
        var image = try JPEGDecoder().decode(photo, options: DecodingOptions())
        for processor in processors { image = try processor.process(image) }
        return image
    }

    @Test(
        "processors: [Resize] gives the unfolded size in every content mode, within tolerance of a full decode",
        arguments: ImageProcessors.Resize.ContentMode.allCases)
    func everyContentMode(mode: ImageProcessors.Resize.ContentMode) async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(Self.photo, at: "/photo.jpg")
            let resize = try ImageProcessors.Resize(size: PixelSize(width: 30, height: 24), contentMode: mode, crop: mode == .aspectFill)
            let folded = try await pipeline.image(for: ImageRequest(url: url, processors: [resize]))
            let reference = try Self.reference([resize])
            #expect((folded.width, folded.height) == (reference.width, reference.height))
            #expect(Corpus.meanDifference(folded, reference) <= 8)
        }
    }

    @Test("a folded resize is the thumbnail path: the same pixels as ImageRequest(thumbnail:), and later processors still run")
    func sameAsThumbnail() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(Self.photo, at: "/photo.jpg")
            let resize = try ImageProcessors.Resize(size: PixelSize(width: 36, height: 36))
            let folded = try await pipeline.image(for: ImageRequest(url: url, processors: [resize]))
            let thumbnail = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(maxPixelSize: 36)))
            #expect((folded.width, folded.height) == (thumbnail.width, thumbnail.height))
            #expect(Corpus.samePixels(folded.pixels, thumbnail.pixels))

            let gray = try await pipeline.image(for: ImageRequest(url: url, processors: [resize, ImageProcessors.Grayscale()]))
            let expected = try ImageProcessors.Grayscale().process(folded)
            #expect(Corpus.samePixels(gray.pixels, expected.pixels))
            // A resize after another processor is not folded, and still works.
            let late = try await pipeline.image(for: ImageRequest(url: url, processors: [ImageProcessors.Grayscale(), resize]))
            #expect((late.width, late.height) == (folded.width, folded.height))
        }
    }

    @Test(
        "a 3/8 DCT-scaled decode whose last row covers half a pixel is resized by the picture, not its rounded size: no drift down the thumbnail against ImageMagick's Lanczos of the full decode"
    )
    func partialLastRow() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 1800×1100 at 3/8 is 675×412.5: decoded as 675×413 rows, the last one half a pixel.
        let source = directory.appendingPathComponent("source.jpg"), reference = directory.appendingPathComponent("reference.png")
        try await runTool("/usr/bin/convert", ["/usr/share/backgrounds/2004default.jpg", "-resize", "1800x1100!", "-quality", "92", source.path])
        try await runTool("/usr/bin/convert", [source.path, "-filter", "Lanczos", "-resize", "512x313!", "png24:" + reference.path])
        let expected = try PNGDecoder().decode(try Data(contentsOf: reference), options: DecodingOptions())
        var options = DecodingOptions()
        (options.targetSize, options.targetMode) = (PixelSize(width: 512, height: 313), .fit)
        let reduced = try JPEGDecoder().decode(try Data(contentsOf: source), options: options)
        #expect((reduced.width, reduced.height, reduced.metadata.decodeScale) == (675, 413, 3.0 / 8))
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Data(contentsOf: source), at: "/source.jpg")
            let thumbnail = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(maxPixelSize: 512)))
            #expect((thumbnail.width, thumbnail.height) == (512, 313))
            // Mean difference per channel of 40 rows: a resize that maps 413 rows onto 313 drifts
            // by up to 0.4 of an output row at the bottom (measured 1.31 there against 0.34 at the top).
            func rows(_ range: Range<Int>) -> Double {
                var total = 0
                for y in range {
                    for x in 0..<512 {
                        for channel in 0..<3 {
                            let index = (y * 512 + x) * 4 + channel
                            total += abs(Int(thumbnail.pixels[index]) - Int(expected.pixels[index]))
                        }
                    }
                }
                return Double(total) / Double(range.count * 512 * 3)
            }
            let top = rows(0..<40), bottom = rows(273..<313)
            #expect(bottom < 2 * top, "top \(top), bottom \(bottom)")
        }
    }
}
