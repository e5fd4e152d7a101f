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

    /// `image` written by ImageMagick's libpng as Pillow writes PNG (adaptive filters, zlib level
    /// 6, `Z_FILTERED`): its size.
    private static func magickSize(_ image: Image, in directory: URL, name: String) async throws -> Int {
        let stored = directory.appendingPathComponent("\(name)-stored.png"), magick = directory.appendingPathComponent("\(name)-magick.png")
        try PNGEncoder(compressionLevel: 0).encode(image).write(to: stored)
        let saved = try await runProcess(
            URL(fileURLWithPath: "/usr/bin/convert"),
            [
                stored.path, "-define", "png:compression-level=6", "-define", "png:compression-filter=5", "-define", "png:compression-strategy=1",
                // The colour type Imago writes (ImageMagick would reduce a few colours to a palette).
                (image.metadata.hasAlpha ? "png32:" : "png24:") + magick.path,
            ])
        #expect(saved.status == 0)
        return try Data(contentsOf: magick).count
    }

    /// `image`'s filtered rows as the encoder makes them, for its compressors.
    private static func filtered(_ image: Image) -> [UInt8] {
        PNGRowFilter(width: image.width, height: image.height, channels: image.metadata.hasAlpha ? 4 : 3, filters: true).filter(image.pixels)
    }

    /// The run-length and LZ77 (level 7) streams alone, and what the encoder chose, for `image`.
    private static func compressions(_ image: Image) throws -> (runs: Int, lz: Int, chosen: PNGEncoder.Compression, size: Int) {
        let rows = filtered(image)
        let runs = try PNGEncoder.runLengthDeflate(rows).count
        let lz = try #require(try PNGEncoder.deflate(rows, level: 7, capacity: nil)).count
        let stream = try PNGEncoder().stream(rows)
        return (runs, lz, stream.compression, stream.data.count)
    }

    @Test(
        "photos fitted to 512 from windows of 1.2–1.8× (as the server benchmark's): the smaller stream is chosen, and the file is within 2% of ImageMagick's level 6"
    )
    func photosTakeTheSmallerStream() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var runLength = 0
        for name in ["2004default", "rhythm", "the-mouse", "string"] {
            let full = try DecoderRegistry.standard().decode(try Data(contentsOf: URL(fileURLWithPath: "/usr/share/backgrounds/\(name).jpg")))
            for scale in [1.2, 1.8] {
                let width = min(full.width, Int(1800 * scale)), height = min(full.height, Int(1100 * scale))
                let window = try ImageProcessors.Crop(x: (full.width - width) / 2, y: (full.height - height) / 2, width: width, height: height).process(full)
                let photo = try ImageProcessors.Resize(size: PixelSize(width: 512, height: 512)).process(window)
                let made = try Self.compressions(photo)
                // A clear winner is always the one chosen; a near tie may go either way.
                if Double(made.runs) < Double(made.lz) * 0.97 { #expect(made.chosen == .runLength, "\(name) at \(scale): \(made)") }
                if Double(made.lz) < Double(made.runs) * 0.97 { #expect(made.chosen == .lz77, "\(name) at \(scale): \(made)") }
                #expect(Double(made.size) <= Double(min(made.runs, made.lz)) * 1.02, "\(name) at \(scale): \(made)")
                if made.chosen == .runLength { runLength += 1 }
                let ours = try PNGEncoder().encode(photo)
                let reference = try await Self.magickSize(photo, in: directory, name: "\(name)-\(scale)")
                #expect(Double(ours.count) <= Double(reference) * 1.02, "\(name) at \(scale): \(ours.count) B against ImageMagick's \(reference) B")
                #expect(Corpus.samePixels(try PNGDecoder().decode(ours, options: DecodingOptions()).pixels, photo.pixels))
            }
        }
        // Photos are what the run-length stream is for.
        #expect(runLength >= 4)
    }

    @Test("graphics (dithered GIF frames, a lossless drawing, text) keep LZ77, where run-length alone is 1.4–1.8× larger: within 5% of ImageMagick's level 6")
    func graphicsKeepLZ77() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for file in ["gif/video-005.gray.gif", "gif/video-001.5bpp.gif", "webp/tux.lossless.webp", "webp/gopher-doc.8bpp.lossless.webp"] {
            let image = try DecoderRegistry.standard().decode(try Corpus.data(file))
            let made = try Self.compressions(image)
            #expect(made.chosen == .lz77 && Double(made.runs) > Double(made.lz) * 1.3, "\(file): \(made)")
            let ours = try PNGEncoder().encode(image)
            let reference = try await Self.magickSize(image, in: directory, name: file.replacingOccurrences(of: "/", with: "-"))
            #expect(Double(ours.count) <= Double(reference) * 1.05, "\(file): \(ours.count) B against ImageMagick's \(reference) B")
            #expect(Corpus.samePixels(try PNGDecoder().decode(ours, options: DecodingOptions()).pixels, image.pixels))
        }
    }

    @Test("levels 8–12 keep the smaller of both streams in full; level 0 stores")
    func sizeFirstLevels() throws {
        for file in ["gif/video-005.gray.gif", "jpeg/video-001.png", "webp/yellow_rose.lossy.webp"] {
            let image = try DecoderRegistry.standard().decode(try Corpus.data(file))
            let rows = Self.filtered(image)
            let runs = try PNGEncoder.runLengthDeflate(rows).count
            for level in [8, 12] {
                let lz = try #require(try PNGEncoder.deflate(rows, level: level, capacity: nil)).count
                let stream = try PNGEncoder(compressionLevel: level).stream(rows)
                #expect(stream.data.count == min(runs, lz), "\(file) at \(level)")
                #expect(stream.compression == (lz < runs ? .lz77 : .runLength), "\(file) at \(level)")
            }
            #expect(try PNGEncoder(compressionLevel: 0).stream(rows).compression == .stored)
        }
    }
}
