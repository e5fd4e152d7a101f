import Foundation
import Testing

@testable import Imago

/// The encoders' settings imgproxy 4 exposes, each read back by a decoder nobody here wrote
/// (ImageMagick, libwebp's dwebp): JPEG's optimised Huffman tables and progression, PNG's Adam7
/// interlacing and palette, WebP's lossless, near-lossless and sharp-YUV modes.
@Suite("Encoder settings")
struct EncoderSettingsTests {
    static let magick = URL(fileURLWithPath: "/usr/bin/convert")
    static let identify = URL(fileURLWithPath: "/usr/bin/identify")

    /// `data` written to a file named `name` in `directory`, and ImageMagick's RGBA pixels of it.
    static func magickPixels(_ data: Data, _ name: String, in directory: URL) async throws -> [UInt8] {
        let file = directory.appendingPathComponent(name)
        try data.write(to: file)
        let result = try await runProcess(magick, [file.path, "-depth", "8", "rgba:-"])
        #expect(result.status == 0, "ImageMagick reads \(name)")
        return [UInt8](result.output)
    }

    static func identify(_ format: String, _ data: Data, _ name: String, in directory: URL) async throws -> String {
        let file = directory.appendingPathComponent(name)
        try data.write(to: file)
        return String(decoding: try await runProcess(identify, ["-format", format, file.path]).output, as: UTF8.self)
    }

    @Test("JPEG: optimised Huffman tables by default give the same pixels in fewer bytes; progressive is marked so")
    func jpegOptimizedCoding() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try EncoderTests.photo()
        let optimized = try JPEGEncoder(quality: 80).encode(photo)
        let standard = try JPEGEncoder(quality: 80, optimizesCoding: false).encode(photo)
        #expect(optimized.count < standard.count)
        let optimizedPixels = try await Self.magickPixels(optimized, "optimized.jpg", in: directory)
        #expect(optimizedPixels.count == photo.width * photo.height * 4)
        #expect(optimizedPixels == (try await Self.magickPixels(standard, "standard.jpg", in: directory)))
        let progressive = try JPEGEncoder(quality: 80, progressive: true).encode(photo)
        #expect(try await Self.identify("%[interlace]", progressive, "progressive.jpg", in: directory) == "JPEG")
        #expect(try await Self.identify("%[interlace]", optimized, "baseline.jpg", in: directory) == "None")
        #expect(try await Self.magickPixels(progressive, "progressive.jpg", in: directory) == optimizedPixels)
        // 4:4:4 on request: ImageMagick reports the sampling factors.
        let full = try JPEGEncoder(quality: 80, keepsFullChroma: true).encode(photo)
        #expect(try await Self.identify("%[jpeg:sampling-factor]", full, "full.jpg", in: directory) == "1x1,1x1,1x1")
        #expect(try await Self.identify("%[jpeg:sampling-factor]", optimized, "half.jpg", in: directory) == "2x2,1x1,1x1")
    }

    @Test("JPEG: a side past 65,500 is refused with the encoder's error, not a trap")
    func jpegTooLarge() throws {
        let image = Self.image(65_501, 1, [UInt8](repeating: 255, count: 65_501 * 4), alpha: false)
        #expect(throws: ImagoError.self) { try JPEGEncoder().encode(image) }
    }

    @Test("PNG: Adam7 interlacing at every small size and with alpha; ImageMagick reads every pixel back")
    func pngInterlaced() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var images = try PNGEncoderTests.images()
        for (width, height) in [(1, 1), (2, 3), (7, 9), (9, 1), (1, 17)] {
            var pixels: [UInt8] = []
            for index in 0..<(width * height) { pixels += [UInt8(index * 37 & 255), UInt8(index * 11 & 255), UInt8(index & 255), UInt8(255 - index & 255)] }
            images.append(("\(width)x\(height)", Self.image(width, height, pixels, alpha: true)))
        }
        for (name, image) in images {
            let data = try PNGEncoder(interlaced: true).encode(image)
            #expect(data[28] == 1, "\(name): IHDR says Adam7")
            #expect(try await Self.identify("%[interlace]", data, "\(name).png", in: directory) == "PNG", "\(name)")
            #expect(try await Self.magickPixels(data, "\(name).png", in: directory) == Self.rgba(image), "\(name)")
            #expect(try PNGDecoder().decode(data, options: DecodingOptions()).pixels == Self.rgba(image), "\(name)")
        }
    }

    @Test("PNG: a palette at the fewest bits per index; few colours kept exactly, binary alpha in tRNS, partial alpha stays RGBA")
    func pngPalette() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Four colours in 5×3: two bits per index, every pixel exact.
        let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [10, 20, 30, 255]]
        let pixels = (0..<15).flatMap { colors[$0 * 7 % 4] }
        let four = Self.image(5, 3, pixels, alpha: false)
        for interlaced in [false, true] {
            let data = try PNGEncoder(interlaced: interlaced, paletteColors: 256).encode(four)
            #expect((data[24], data[25]) == (2, 3), "depth 2, colour type 3")
            #expect(try await Self.magickPixels(data, "four-\(interlaced).png", in: directory) == pixels)
        }
        // Transparent and opaque pixels: the transparent index in tRNS.
        var cutoutPixels = pixels
        cutoutPixels[3] = 0
        let cutout = Self.image(5, 3, cutoutPixels, alpha: true)
        let cutoutData = try PNGEncoder(paletteColors: 256).encode(cutout)
        #expect(cutoutData[25] == 3)
        let back = try await Self.magickPixels(cutoutData, "cutout.png", in: directory)
        #expect(back[3] == 0 && Array(back[4...]) == Array(cutout.pixels[4...]))
        // A photo cut to 16 colours: 4 bits per index, smaller than RGB, close to it.
        let photo = try EncoderTests.photo()
        let sixteen = try PNGEncoder(paletteColors: 16).encode(photo)
        #expect((sixteen[24], sixteen[25]) == (4, 3))
        #expect(sixteen.count < (try PNGEncoder().encode(photo)).count)
        let decoded = try PNGDecoder().decode(sixteen, options: DecodingOptions()).pixels
        let unique = Set(stride(from: 0, to: decoded.count, by: 4).map { decoded[$0..<$0 + 3].map(Int.init) })
        #expect(unique.count <= 16)
        // Partial alpha keeps RGBA rather than losing its edges.
        var softPixels = pixels
        softPixels[3] = 128
        #expect(try PNGEncoder(paletteColors: 256).encode(Self.image(5, 3, softPixels, alpha: true))[25] == 6)
    }

    @Test("WebP: lossless is exact through dwebp; near-lossless and sharp YUV are their own encodings, read back close")
    func webpModes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try EncoderTests.photo()
        let lossless = try WebPEncoder(quality: 80, lossless: true).encode(photo)
        #expect(try await Self.magickPixels(lossless, "lossless.webp", in: directory) == photo.pixels)
        let lossy = try WebPEncoder(quality: 80).encode(photo)
        let near = try WebPEncoder(quality: 60, nearLossless: true).encode(photo)
        // near_lossless is VP8L (lossless coding) with nudged colours: not exact, never far.
        #expect(near[12..<16] == Data("VP8L".utf8))
        let nearPixels = try await Self.magickPixels(near, "near.webp", in: directory)
        #expect(nearPixels != photo.pixels)
        #expect(zip(nearPixels, photo.pixels).allSatisfy { abs(Int($0) - Int($1)) <= 16 })
        let sharp = try WebPEncoder(quality: 80, smartSubsample: true).encode(photo)
        #expect(sharp != lossy && lossy[12..<16] == Data("VP8 ".utf8))
        let slow = try WebPEncoder(quality: 80, effort: 6).encode(photo)
        let fast = try WebPEncoder(quality: 80, effort: 0).encode(photo)
        #expect(slow != fast)
        for (name, data) in [("sharp", sharp), ("slow", slow), ("fast", fast), ("text", try WebPEncoder(quality: 80, preset: .text).encode(photo))] {
            #expect(try await Self.magickPixels(data, "\(name).webp", in: directory).count == photo.pixels.count, "\(name)")
        }
    }

    static func image(_ width: Int, _ height: Int, _ pixels: [UInt8], alpha: Bool) -> Image {
        Image(
            width: width, height: height, frames: [.init(pixels: pixels)],
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: alpha))
    }

    /// `image`'s pixels as RGBA: opaque images have alpha 255.
    static func rgba(_ image: Image) -> [UInt8] {
        guard !image.metadata.hasAlpha else { return image.pixels }
        var pixels = image.pixels
        for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
        return pixels
    }
}
