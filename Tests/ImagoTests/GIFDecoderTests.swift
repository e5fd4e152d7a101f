import Foundation
import Imago
import Testing

@Suite("GIF decoding (giflib)")
struct GIFDecoderTests {
    static func decode(_ url: URL) throws -> Image {
        try GIFDecoder().decode(Data(contentsOf: url), options: DecodingOptions())
    }

    @Test(
        "single-frame corpus GIFs match their reference (64/255, 128/255 for 5 bpp, per channel)",
        arguments: [
            ("video-001.gif", "video-001.png", 64), ("video-001.interlaced.gif", "video-001.png", 64),
            ("video-001.5bpp.gif", "video-001.png", 128), ("video-005.gray.gif", "video-005.gray.png", 64),
        ])
    func conformance(name: String, reference: String, tolerance: Int) throws {
        let image = try Self.decode(Corpus.root.appendingPathComponent("gif/\(name)"))
        let expected = try PNGDecoder().decode(Corpus.data("jpeg/\(reference)"), options: DecodingOptions())
        #expect((image.width, image.height) == (expected.width, expected.height))
        #expect(Corpus.maxDifference(image, expected) <= tolerance)
        #expect(image.frames.count == 1 && !image.isAnimated)
        #expect(image.metadata.format == .gif)
        #expect(!image.metadata.hasAlpha)
    }

    @Test("interlaced and plain encodings decode to the same pixels")
    func interlaced() throws {
        let plain = try Self.decode(Corpus.root.appendingPathComponent("gif/video-001.gif"))
        let interlaced = try Self.decode(Corpus.root.appendingPathComponent("gif/video-001.interlaced.gif"))
        #expect(Corpus.samePixels(plain.pixels, interlaced.pixels))
    }

    @Test("the transparent index becomes alpha 0")
    func transparency() throws {
        let image = try Self.decode(Corpus.root.appendingPathComponent("gif/triangle-001.gif"))
        #expect((image.width, image.height) == (256, 128))
        #expect(image.metadata.hasAlpha)
        let alphas = Set(image.pixels.enumerated().filter { $0.offset % 4 == 3 }.map(\.element))
        #expect(alphas == [0, 255])
    }

    /// video-001 full, then a 30×20 gray crop at (10, 10) with `disposal`, then a 2×2 frame at (0, 0);
    /// delays 50 ms, 10 ms (shown as 100 ms) and 200 ms; loop count 2; made by gifsicle.
    static func animation(disposal: String) async throws -> (animation: Image, base: Image, crop: Image) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try await animationFile(disposal: disposal, in: directory)
        let crop = directory.appendingPathComponent("crop.gif")
        return (try decode(output), try decode(Corpus.root.appendingPathComponent("gif/video-001.gif")), try decode(crop))
    }

    /// The animation above written to `directory/anim.gif` (its crop frame as `crop.gif` beside it).
    static func animationFile(disposal: String, in directory: URL) async throws -> URL {
        let gif = Corpus.root.appendingPathComponent("gif")
        let crop = directory.appendingPathComponent("crop.gif"), dot = directory.appendingPathComponent("dot.gif")
        let output = directory.appendingPathComponent("anim.gif")
        try await runTool("/usr/bin/gifsicle", ["--crop", "10,10+30x20", gif.appendingPathComponent("video-005.gray.gif").path, "-o", crop.path])
        try await runTool("/usr/bin/gifsicle", ["--crop", "0,0+2x2", gif.appendingPathComponent("triangle-001.gif").path, "-o", dot.path])
        try await runTool(
            "/usr/bin/gifsicle",
            [
                "-m", "--loopcount=2", "-d", "5", gif.appendingPathComponent("video-001.gif").path,
                "--disposal=\(disposal)", "-d", "1", "-p", "10,10", crop.path,
                "--disposal=none", "-d", "20", "-p", "0,0", dot.path, "-o", output.path,
            ])
        return output
    }

    static func pixel(_ pixels: [UInt8], width: Int, x: Int, y: Int) -> [UInt8] {
        Array(pixels[((y * width + x) * 4)..<((y * width + x) * 4 + 4)])
    }

    @Test("animated GIF frames are composited with disposal none, background and previous", arguments: ["none", "background", "previous"])
    func disposal(disposal: String) async throws {
        let (animation, base, crop) = try await Self.animation(disposal: disposal)
        #expect(animation.frames.count == 3)
        #expect(animation.loopCount == 2)
        #expect(animation.frames.map(\.duration) == [.milliseconds(50), .milliseconds(100), .milliseconds(200)])
        #expect(Corpus.samePixels(animation.frames[0].pixels, base.pixels))
        let width = animation.width
        // Frame 1: the crop inside its rectangle, frame 0 outside it.
        for (x, y) in [(10, 10), (39, 29), (25, 20)] {
            #expect(Self.pixel(animation.frames[1].pixels, width: width, x: x, y: y) == Self.pixel(crop.pixels, width: crop.width, x: x - 10, y: y - 10))
        }
        #expect(Self.pixel(animation.frames[1].pixels, width: width, x: 60, y: 60) == Self.pixel(base.pixels, width: width, x: 60, y: 60))
        // Frame 2: frame 1's rectangle after its disposal.
        let inside = Self.pixel(animation.frames[2].pixels, width: width, x: 25, y: 20)
        switch disposal {
        case "none": #expect(inside == Self.pixel(crop.pixels, width: crop.width, x: 15, y: 10))
        case "background": #expect(inside == [0, 0, 0, 0])
        default: #expect(inside == Self.pixel(base.pixels, width: width, x: 25, y: 20))
        }
        #expect(animation.metadata.hasAlpha == (disposal == "background"))
    }

    @Test("blocks of part of the canvas with no delay are one picture painted in parts; whole frames of no delay stay frames")
    func highColour() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 1,024 colours: four 16×16 blocks of 256 each, with local colour tables, no delay, kept
        // (ImageMagick writes the crop's tiles at their offsets), as the "high colour" GIFs are.
        let picture = directory.appendingPathComponent("picture.png"), gif = directory.appendingPathComponent("parts.gif")
        try await runTool(
            "/usr/bin/convert",
            [
                "-size", "32x32", "xc:", "-fx", "(i*8+j%8)/255", "-channel", "G", "-fx", "(j*8+i%8)/255", "-channel", "B", "-fx", "((i+j)*4)/255", "+channel",
                "png24:\(picture.path)",
            ])
        try await runTool("/usr/bin/convert", [picture.path, "-crop", "16x16", "-set", "delay", "0", "-set", "dispose", "none", gif.path])
        let image = try Self.decode(gif)
        let expected = try PNGDecoder().decode(try Data(contentsOf: picture), options: DecodingOptions())
        #expect(image.frames.count == 1, "one picture, not four frames")
        #expect((image.width, image.height) == (32, 32) && image.pixels == expected.pixels, "the whole picture, as ImageMagick's coalesced last frame")
        #expect(!image.metadata.hasAlpha)
        // Whole-canvas frames without a delay are an animation browsers play at 100 ms a frame.
        let animation = directory.appendingPathComponent("animation.gif")
        try await runTool("/usr/bin/convert", ["-delay", "0", picture.path, "(", picture.path, "-negate", ")", animation.path])
        let animated = try Self.decode(animation)
        #expect(animated.frames.count == 2 && animated.frames.map(\.duration) == [.milliseconds(100), .milliseconds(100)])
    }

    @Test("frame limits are enforced while reading")
    func frameLimit() async throws {
        let data = try GIFDecoder().decode(Corpus.data("gif/video-001.gif"), options: DecodingOptions())
        #expect(data.frames.count == 1)
        var options = DecodingOptions()
        options.maxFrames = 2
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("three.gif")
        let frame = Corpus.root.appendingPathComponent("gif/video-001.gif").path
        try await runTool("/usr/bin/gifsicle", ["-m", frame, frame, frame, "-o", output.path])
        do {
            _ = try GIFDecoder().decode(Data(contentsOf: output), options: options)
            Issue.record("decoded past the frame limit")
        } catch let error as ImagoError {
            #expect(error.code == .imageTooLarge(width: 150, height: 103, limit: .frames(2)))
        }
    }

    @Test("a GIF cut inside its first frame is an error; cut after a frame, it yields that frame")
    func truncated() async throws {
        let data = try Corpus.data("gif/video-001.gif")
        do {
            _ = try GIFDecoder().decode(data.prefix(data.count / 2), options: DecodingOptions())
            Issue.record("decoded half a frame")
        } catch {
            guard error.code.kind == .invalidImage, let message = error.code.message else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.hasPrefix("GIF:"))
        }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("two.gif")
        let frame = Corpus.root.appendingPathComponent("gif/video-001.gif").path
        try await runTool("/usr/bin/gifsicle", ["-m", frame, frame, "-o", output.path])
        let two = try Data(contentsOf: output)
        let image = try GIFDecoder().decode(two.prefix(two.count - 200), options: DecodingOptions())
        #expect(image.frames.count == 1)
    }
}
