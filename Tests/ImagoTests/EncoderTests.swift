import Foundation
import Imago
import Testing

@Suite("Encoders")
struct EncoderTests {
    static func photo() throws -> Image {
        try PNGDecoder().decode(Corpus.data("jpeg/video-001.png"), options: DecodingOptions())
    }

    static func withAlpha() throws -> Image {
        try PNGDecoder().decode(Corpus.data("png/basn6a08.png"), options: DecodingOptions())
    }

    @Test("PNG round-trips exactly, with and without alpha")
    func png() throws {
        for image in [try Self.photo(), try Self.withAlpha()] {
            let data = try PNGEncoder().encode(image)
            let back = try DecoderRegistry.standard().decode(data)
            #expect(back.metadata.format == .png)
            #expect(Corpus.samePixels(back.pixels, image.pixels))
            #expect(back.metadata.hasAlpha == image.metadata.hasAlpha)
        }
    }

    @Test("lossless WebP round-trips exactly; lossy stays close and shrinks with quality")
    func webp() throws {
        let image = try Self.withAlpha()
        let lossless = try DecoderRegistry.standard().decode(WebPEncoder(lossless: true).encode(image))
        #expect(Corpus.samePixels(lossless.pixels, image.pixels))
        let photo = try Self.photo()
        let high = try WebPEncoder(quality: 90).encode(photo)
        let low = try WebPEncoder(quality: 20).encode(photo)
        #expect(low.count < high.count)
        let decoded = try WebPDecoder().decode(high, options: DecodingOptions())
        #expect(Corpus.meanDifference(decoded, photo) <= 4)
    }

    @Test("JPEG: quality sets size, round trip stays close, progressive writes SOF2")
    func jpeg() throws {
        let photo = try Self.photo()
        let q90 = try JPEGEncoder(quality: 90).encode(photo)
        let q30 = try JPEGEncoder(quality: 30).encode(photo)
        #expect(q30.count < q90.count)
        let back = try JPEGDecoder().decode(q90, options: DecodingOptions())
        #expect(Corpus.meanDifference(back, photo) <= 4)
        let progressive = try JPEGEncoder(quality: 90, progressive: true).encode(photo)
        #expect(progressive.range(of: Data([0xFF, 0xC2])) != nil)
        #expect(q90.range(of: Data([0xFF, 0xC2])) == nil)
        #expect(try JPEGDecoder().decode(progressive, options: DecodingOptions()).width == photo.width)
    }

    @Test("JPEG composites transparent pixels over white")
    func jpegAlpha() throws {
        let clear = Image(
            width: 8, height: 8, frames: [.init(pixels: [UInt8](repeating: 0, count: 256))],
            metadata: ImageMetadata(format: .png, originalWidth: 8, originalHeight: 8, hasAlpha: true))
        let back = try JPEGDecoder().decode(JPEGEncoder(quality: 95).encode(clear), options: DecodingOptions())
        #expect(back.pixels.allSatisfy { $0 >= 250 })
    }

    @Test("an animated GIF encoded as WebP keeps every frame, its duration and the loop count", arguments: ["none", "background"])
    func animatedWebP(disposal: String) async throws {
        let gif = try await GIFDecoderTests.animation(disposal: disposal).animation
        let lossless = try DecoderRegistry.standard().decode(WebPEncoder(lossless: true).encode(gif))
        #expect(lossless.metadata.format == .webp)
        #expect(lossless.frames.count == 3)
        #expect(lossless.loopCount == 2)
        #expect(lossless.frames.map(\.duration) == gif.frames.map(\.duration))
        for (frame, original) in zip(lossless.frames, gif.frames) {
            #expect(Corpus.samePixels(frame.pixels, original.pixels))
        }
        let lossy = try DecoderRegistry.standard().decode(WebPEncoder(quality: 80).encode(gif))
        #expect(lossy.frames.count == 3)
        #expect(lossy.frames.map(\.duration) == gif.frames.map(\.duration))
        #expect(lossy.loopCount == 2)
    }

    /// The corpus triangle, then the triangle turned over (gifsicle, looping for ever): each frame
    /// transparent in other places.
    static func turningTriangles() async throws -> Image {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let triangle = Corpus.root.appendingPathComponent("gif/triangle-001.gif").path, output = directory.appendingPathComponent("two.gif")
        try await runTool("/usr/bin/gifsicle", ["-d", "10", "--loopcount=0", triangle, "--rotate-180", triangle, "-o", output.path])
        return try GIFDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
    }

    @Test("a transparent animated GIF written as lossy or lossless WebP stays transparent where it was")
    func animatedWebPTransparency() async throws {
        let gif = try await Self.turningTriangles()
        let alpha = { (pixels: [UInt8]) in stride(from: 3, to: pixels.count, by: 4).map { pixels[$0] } }
        #expect(gif.frames.count == 2)
        #expect(alpha(gif.frames[0].pixels).contains(0) && alpha(gif.frames[0].pixels) != alpha(gif.frames[1].pixels))
        for encoder in [WebPEncoder(quality: 80), WebPEncoder(lossless: true)] {
            let back = try WebPDecoder().decode(try encoder.encode(gif), options: DecodingOptions())
            #expect(back.metadata.hasAlpha)
            #expect(back.frames.count == 2)
            for (frame, original) in zip(back.frames, gif.frames) {
                #expect(alpha(frame.pixels) == alpha(original.pixels), "lossless: \(encoder.lossless)")
            }
        }
    }

    @Test("file extensions name formats")
    func extensions() {
        #expect(ImageFormat(fileExtension: "JPG") == .jpeg)
        #expect(ImageFormat(fileExtension: "webp") == .webp)
        #expect(ImageFormat(fileExtension: "bmp") == .bmp && ImageFormat(fileExtension: "tga") == nil)
    }
}
