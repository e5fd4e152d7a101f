import Foundation
import Imago
import ImagoTestSupport
import Testing

/// A leading shrinking `Resize` is folded into the decode plan: the decoder reduces as for a
/// thumbnail, and the result has the size the unfolded path gives, within the corpus's lossy
/// tolerance (8/255 mean per channel). The corpus photo is small (150×103), so a reduced decode
/// (libjpeg-turbo's M/8 scaling) differs most here; on a 3840×2400 photo the mean difference
/// measured 0–3.
@Suite("Resize folded into the decode", .timeLimit(.minutes(3)))
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
}
