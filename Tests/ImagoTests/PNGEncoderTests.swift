import Foundation
import Testing

@testable import Imago

/// PNGEncoder's own filtering and libdeflate's compression, read back by libspng (PNGDecoder) and by
/// ImageMagick, at every kind of level and on shapes that reach each edge of the row filters.
@Suite("PNG encoder")
struct PNGEncoderTests {
    /// Opaque and transparent corpus images, a gradient, noise, and the thinnest shapes.
    static func images() throws -> [(String, Image)] {
        func image(_ width: Int, _ height: Int, alpha: Bool, _ pixel: (Int, Int, Int) -> UInt8) -> Image {
            var pixels = [UInt8](repeating: 255, count: width * height * 4)
            for y in 0..<height {
                for x in 0..<width {
                    for channel in 0..<(alpha ? 4 : 3) { pixels[(y * width + x) * 4 + channel] = pixel(x, y, channel) }
                }
            }
            return Image(
                width: width, height: height, frames: [.init(pixels: pixels)],
                metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: alpha))
        }
        let noise = [UInt8](payload(64 * 48 * 4, seed: 3))
        return [
            ("photo", try EncoderTests.photo()), ("alpha", try EncoderTests.withAlpha()),
            ("gradient", image(64, 48, alpha: false) { x, y, channel in UInt8(truncatingIfNeeded: x * 4 + y * channel) }),
            ("noise", image(64, 48, alpha: true) { x, y, channel in noise[(y * 64 + x) * 4 + channel] }),
            ("1×1", image(1, 1, alpha: true) { _, _, channel in UInt8(channel * 60) }),
            ("1×40", image(1, 40, alpha: false) { _, y, channel in UInt8(y * 6 + channel) }),
            ("40×1", image(40, 1, alpha: true) { x, _, channel in UInt8(x * 6 + channel) }),
        ]
    }

    @Test("every level round-trips exactly, read by libspng and by ImageMagick", arguments: [0, 1, 6, 9, 12])
    func roundTrip(level: Int) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, image) in try Self.images() {
            let data = try PNGEncoder(compressionLevel: level).encode(image)
            let back = try PNGDecoder().decode(data, options: DecodingOptions())
            #expect((back.width, back.height, back.metadata.hasAlpha) == (image.width, image.height, image.metadata.hasAlpha), "\(name)")
            #expect(Corpus.samePixels(back.pixels, image.pixels), "\(name) at level \(level)")
            let file = directory.appendingPathComponent("\(level).png")
            try data.write(to: file)
            let magick = try await runProcess(URL(fileURLWithPath: "/usr/bin/convert"), [file.path, "-depth", "8", "rgba:-"])
            #expect(magick.status == 0 && Corpus.samePixels([UInt8](magick.output), image.pixels), "ImageMagick reads \(name) at level \(level)")
        }
    }

    @Test("a higher level writes a smaller file; level 0 stores; levels are clamped to 0…12")
    func levels() throws {
        let photo = try EncoderTests.photo()
        let stored = try PNGEncoder(compressionLevel: 0).encode(photo).count
        let fast = try PNGEncoder(compressionLevel: 1).encode(photo).count
        let best = try PNGEncoder(compressionLevel: 9).encode(photo).count
        #expect(stored > photo.width * photo.height * 3)
        #expect(best < fast && fast < stored)
        #expect(PNGEncoder(compressionLevel: 40).compressionLevel == 12)
        #expect(PNGEncoder(compressionLevel: -1).compressionLevel == 0)
    }

    @Test("the default level writes a photo no more than 5% larger than ImageMagick's PNG (libpng, adaptive filters, zlib level 6), and level 12 smaller")
    func defaultLevelAgainstImageMagick() async throws {
        let photo = try EncoderTests.photo()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stored = directory.appendingPathComponent("stored.png"), magick = directory.appendingPathComponent("magick.png")
        try PNGEncoder(compressionLevel: 0).encode(photo).write(to: stored)
        let saved = try await runProcess(
            URL(fileURLWithPath: "/usr/bin/convert"),
            [stored.path, "-define", "png:compression-level=6", "-define", "png:compression-filter=5", "-define", "png:compression-strategy=1", magick.path])
        #expect(saved.status == 0)
        let reference = try Data(contentsOf: magick).count
        let ours = try PNGEncoder().encode(photo)
        #expect(Double(ours.count) <= Double(reference) * 1.05, "\(ours.count) B against ImageMagick's \(reference) B")
        #expect(try PNGEncoder(compressionLevel: 12).encode(photo).count < ours.count)
        #expect(Corpus.samePixels(try PNGDecoder().decode(ours, options: DecodingOptions()).pixels, photo.pixels))
    }
}
