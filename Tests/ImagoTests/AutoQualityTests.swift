import Foundation
import Imago
import Testing

/// Auto quality's search on a real photo with the real encoders, checked by scoring the
/// neighbouring qualities itself.
@Suite("Auto quality")
struct AutoQualityTests {
    static func photo() throws -> Image {
        try DecoderRegistry.standard().decode(try Corpus.data("png/benchRGB.png"))
    }

    static func score(_ image: Image, _ format: ImageFormat, _ quality: Int) throws -> Double {
        let data = try format.encoder(quality: quality)!.encode(image)
        return try SSIMULACRA2.score(original: image, distorted: try DecoderRegistry.standard().decode(data))
    }

    @Test(
        "SSIMULACRA2: the chosen quality passes the target and the one below it does not, in a few encodes",
        arguments: [(ImageFormat.jpeg, 50.0), (.jpeg, 40.0), (.webp, 35.0)])
    func smallestPassing(format: ImageFormat, target: Double) throws {
        let image = try Self.photo()
        let search = AutoQuality(.ssimulacra2(target: target), minQuality: 1, maxQuality: 100, allowedError: 0)
        let choice = try search.encode(image, format: format) { format.encoder(quality: $0)! }
        let score = try #require(choice.score)
        #expect(score >= target)
        #expect(try Self.score(image, format, choice.quality) == score)
        #expect(choice.data == (try format.encoder(quality: choice.quality)!.encode(image)))
        if choice.quality > 1 { #expect(try Self.score(image, format, choice.quality - 1) < target, "q\(choice.quality - 1) passes too") }
        #expect(choice.encodes <= AutoQuality.maximumEncodes)
    }

    @Test("a score within the allowed error ends the search; one below the target by no more than it passes")
    func allowedError() throws {
        let image = try Self.photo()
        let search = AutoQuality(.ssimulacra2(target: 45), minQuality: 1, maxQuality: 100, allowedError: 3)
        let choice = try search.encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        #expect(try #require(choice.score) >= 42)
        let exact = try AutoQuality(.ssimulacra2(target: 45), minQuality: 1, maxQuality: 100, allowedError: 0).encode(image, format: .jpeg) {
            JPEGEncoder(quality: $0)
        }
        #expect(choice.encodes <= exact.encodes)
    }

    @Test("a target the range cannot reach gives the maximum quality; one every quality reaches gives the minimum")
    func outOfRange() throws {
        let image = try Self.photo()
        let high = try AutoQuality(.ssimulacra2(target: 99), minQuality: 30, maxQuality: 60).encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        #expect(high.quality == 60)
        #expect(try #require(high.score) < 99)
        let low = try AutoQuality(.ssimulacra2(target: -50), minQuality: 30, maxQuality: 60).encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        #expect(low.quality == 30)
    }

    @Test("size: the largest quality whose bytes fit, else the minimum's")
    func size() throws {
        let image = try Self.photo()
        let q50 = try JPEGEncoder(quality: 50).encode(image).count
        let choice = try AutoQuality(.size(bytes: q50), minQuality: 10, maxQuality: 90).encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        #expect(choice.quality >= 50 && choice.data.count <= q50 && choice.score == nil)
        let above = try JPEGEncoder(quality: choice.quality + 1).encode(image).count
        #expect(choice.quality == 90 || above > q50)
        let tiny = try AutoQuality(.size(bytes: 10), minQuality: 10, maxQuality: 90).encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        #expect(tiny.quality == 10)
    }

    @Test("an image with alpha written as JPEG is scored as JPEG shows it, over white")
    func alphaAsJPEG() throws {
        let image = try DecoderRegistry.standard().decode(try Corpus.data("png/basn6a08.png"))
        #expect(image.metadata.hasAlpha)
        let choice = try AutoQuality(.ssimulacra2(target: 40)).encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        let score = try #require(choice.score)
        #expect(score >= 39.5)
        // Against the transparent original (over dark and bright grey) the same file scores far lower.
        let transparent = try SSIMULACRA2.score(original: image, distorted: try DecoderRegistry.standard().decode(choice.data))
        #expect(transparent < score - 10, "\(transparent) against \(score)")
    }

    @Test("an image the metric cannot score is an error, not a guess")
    func tooSmall() throws {
        let image = Image.test(4, 4, [UInt8](repeating: 128, count: 64))
        #expect(throws: ImagoError.self) {
            try AutoQuality(.ssimulacra2(target: 70)).encode(image, format: .jpeg) { JPEGEncoder(quality: $0) }
        }
    }
}
