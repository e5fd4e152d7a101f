import Foundation
import Imago
import Testing

/// GIFs written by Imago, read back by ImageMagick and gifsicle (readers nobody here wrote) and by
/// Imago's decoder.
@Suite("GIF encoding (giflib)")
struct GIFEncoderTests {
    /// The frames ImageMagick reads from `gif`, coalesced (each frame as shown), as RGBA.
    static func magickFrames(_ gif: Data, width: Int, height: Int) async throws -> [[UInt8]] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("in.gif")
        try gif.write(to: file)
        let (status, output) = try await runProcess(URL(fileURLWithPath: "/usr/bin/convert"), [file.path, "-coalesce", "-depth", "8", "rgba:-"])
        try #require(status == 0)
        let frameBytes = width * height * 4
        try #require(output.count % frameBytes == 0 && !output.isEmpty)
        return stride(from: 0, to: output.count, by: frameBytes).map { Array(output[$0..<($0 + frameBytes)]) }
    }

    /// gifsicle's description of a GIF (`--info`).
    static func info(_ gif: Data) async throws -> String {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("in.gif")
        try gif.write(to: file)
        let (status, output) = try await runProcess(URL(fileURLWithPath: "/usr/bin/gifsicle"), ["--info", file.path])
        try #require(status == 0)
        return String(decoding: output, as: UTF8.self)
    }

    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        Double(zip(a, b).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(max(a.count, 1))
    }

    @Test("an image of 256 colours or fewer is written exactly; ImageMagick reads the same pixels; no loop extension for a still")
    func exactColours() async throws {
        let image = try GIFDecoderTests.decode(Corpus.root.appendingPathComponent("gif/video-001.gif"))
        let gif = try GIFEncoder().encode(image)
        let back = try GIFDecoder().decode(gif, options: DecodingOptions())
        #expect(back.metadata.format == .gif && !back.isAnimated && !back.metadata.hasAlpha)
        #expect(Corpus.samePixels(back.pixels, image.pixels))
        #expect(try await Self.magickFrames(gif, width: image.width, height: image.height) == [image.pixels])
        let info = try await Self.info(gif)
        #expect(info.contains("1 image") && !info.contains("loop"))
    }

    @Test("a photo of many colours is cut to 256 that stay close, as ImageMagick reads them")
    func manyColours() async throws {
        let photo = try EncoderTests.photo()
        let gif = try GIFEncoder().encode(photo)
        let magick = try await Self.magickFrames(gif, width: photo.width, height: photo.height)
        let back = try GIFDecoder().decode(gif, options: DecodingOptions())
        #expect(magick == [back.pixels])
        let distinct = Set(stride(from: 0, to: back.pixels.count, by: 4).map { Array(back.pixels[$0..<($0 + 3)]) })
        #expect(distinct.count > 200 && distinct.count <= 256)
        let difference = Self.meanDifference(back.pixels, photo.pixels)
        #expect(difference > 0 && difference < 3, "mean difference \(difference)")
    }

    @Test("pixels under half opacity become the transparent index, the rest opaque")
    func transparency() async throws {
        var pixels = [UInt8](repeating: 0, count: 16 * 4)
        for index in 0..<16 {
            (pixels[index * 4], pixels[index * 4 + 1], pixels[index * 4 + 2], pixels[index * 4 + 3]) = (UInt8(index * 16), 40, 200, UInt8(index * 17))
        }
        let image = Image.test(4, 4, pixels, alpha: true)
        let back = try GIFDecoder().decode(try GIFEncoder().encode(image), options: DecodingOptions())
        #expect(back.metadata.hasAlpha)
        for index in 0..<16 {
            let alpha = back.pixels[index * 4 + 3]
            #expect(alpha == (index * 17 >= 128 ? 255 : 0))
            if alpha == 255 { #expect(Array(back.pixels[(index * 4)..<(index * 4 + 3)]) == [UInt8(index * 16), 40, 200]) }
        }
    }

    @Test("an animation keeps its frames, durations and loop count; opaque frames are written as the rectangle that changed")
    func animation() async throws {
        let gif = try await GIFDecoderTests.animation(disposal: "none").animation
        let data = try GIFEncoder().encode(gif)
        let back = try GIFDecoder().decode(data, options: DecodingOptions())
        #expect(back.frames.count == 3)
        #expect(back.loopCount == 2)
        #expect(back.frames.map(\.duration) == gif.frames.map(\.duration))
        let magick = try await Self.magickFrames(data, width: gif.width, height: gif.height)
        #expect(magick == back.frames.map(\.pixels))
        for (frame, original) in zip(back.frames, gif.frames) {
            #expect(Self.meanDifference(frame.pixels, original.pixels) < 1.5)
        }
        // The second frame changed a 30×20 block at (10, 10), the third at most its 2×2 dot.
        let info = try await Self.info(data)
        #expect(info.contains("3 images") && info.contains("loop count 2"))
        #expect(info.contains("30x20 at 10,10"), "\(info)")
        #expect(try #require(info.components(separatedBy: "+ image #2 ").last).hasPrefix("1x1") || info.contains("+ image #2 2x2"), "\(info)")
    }

    @Test("a transparent animation replaces the canvas each frame: no frame shows through the next")
    func transparentAnimation() async throws {
        let gif = try await EncoderTests.turningTriangles()
        let data = try GIFEncoder().encode(gif)
        let back = try GIFDecoder().decode(data, options: DecodingOptions())
        #expect(back.loopCount == 0)
        #expect(back.frames.map(\.pixels) == gif.frames.map(\.pixels))
        #expect(try await Self.magickFrames(data, width: gif.width, height: gif.height) == gif.frames.map(\.pixels))
    }

    @Test("an image wider than GIF allows is refused with the reason")
    func tooLarge() throws {
        let wide = Image.test(70_000, 1, [UInt8](repeating: 255, count: 70_000 * 4))
        #expect {
            try GIFEncoder().encode(wide)
        } throws: { error in
            guard let error = error as? ImagoError, error.code.kind == .invalidImage, let message = error.code.message else { return false }
            return message.contains("GIF holds at most 65535×65535")
        }
    }

    @Test("the .gif extension names GIF, and GIF has an encoder")
    func named() {
        #expect(ImageFormat(fileExtension: "GIF") == .gif)
        #expect(ImageFormat.gif.encoder()?.format == .gif)
    }
}
