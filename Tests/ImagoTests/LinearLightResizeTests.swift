import Foundation
import ImagoServer
import ImagoTestSupport
import Testing

@testable import Imago

/// Resizing in linear light (``ImageProcessors/Resize/linearLight``, imgproxy's
/// `IMGPROXY_USE_LINEAR_COLORSPACE`), against ImageMagick's Lanczos resize in its linear `RGB`.
@Suite("linear-light resize")
struct LinearLightResizeTests {
    /// `convert` with `arguments`, its PNG output decoded.
    static func magick(_ arguments: [String], in directory: URL) async throws -> Image {
        let output = directory.appendingPathComponent(UUID().uuidString + ".png")
        try await runTool(ColorReference.convert, arguments + ["-depth", "8", "png32:" + output.path])
        return try PNGDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
    }

    static func meanLevel(_ image: Image) -> Double {
        let pixels = image.pixels
        var sum = 0
        for index in stride(from: 0, to: pixels.count, by: 4) { sum += Int(pixels[index]) }
        return Double(sum) / Double(pixels.count / 4)
    }

    @Test("a one-pixel black-and-white pattern halved: sRGB 188 (the grey it looks) in linear light, 128 without; as ImageMagick's in RGB")
    func pattern() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pattern = try await Self.magick(["-size", "200x200", "pattern:gray50"], in: directory)
        #expect(abs(Self.meanLevel(pattern) - 127.5) < 1)
        var resize = try ImageProcessors.Resize(size: PixelSize(width: 100, height: 100), contentMode: .fill)
        let plain = try resize.process(pattern)
        resize.linearLight = true
        let linear = try resize.process(pattern)
        let reference = try await Self.magick(
            ["-size", "200x200", "pattern:gray50", "-colorspace", "RGB", "-filter", "Lanczos", "-resize", "100x100!", "-colorspace", "sRGB"],
            in: directory)
        #expect(abs(Self.meanLevel(plain) - 128) < 2, "\(Self.meanLevel(plain))")
        #expect(abs(Self.meanLevel(linear) - 188) < 2, "\(Self.meanLevel(linear))")
        #expect(abs(Self.meanLevel(linear) - Self.meanLevel(reference)) < 2, "\(Self.meanLevel(reference))")
    }

    @Test("a photo reduced 4:1 and 1.6:1, with and without alpha: within a level of ImageMagick's linear Lanczos on average")
    func photo() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg").path
        for (size, alpha) in [("38x26", false), ("94x64", false), ("94x64", true)] {
            let extra = alpha ? ["-alpha", "set", "-channel", "A", "-fx", "0.3+0.7*i/w", "+channel"] : []
            let input = try await Self.magick([source] + extra, in: directory)
            let parts = size.split(separator: "x").compactMap { Int($0) }
            var resize = try ImageProcessors.Resize(size: PixelSize(width: parts[0], height: parts[1]), contentMode: .fill)
            resize.linearLight = true
            let ours = try resize.process(input)
            let reference = try await Self.magick(
                [source] + extra + ["-colorspace", "RGB", "-filter", "Lanczos", "-resize", size + "!", "-colorspace", "sRGB"], in: directory)
            #expect(Corpus.meanDifference(ours, reference) <= 1, "\(size) alpha \(alpha)")
        }
    }

    @Test("IMGPROXY_USE_LINEAR_COLORSPACE: the server's resizes in linear light")
    func server() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await runTool(ColorReference.convert, ["-size", "200x200", "pattern:gray50", "png24:" + directory.appendingPathComponent("p.png").path])
        #expect(try ServerSettings.configuration(["IMGPROXY_USE_LINEAR_COLORSPACE": "true"]).configuration.output.resizesInLinearLight)
        for (linear, level) in [(false, 128.0), (true, 188.0)] {
            try await withServer({
                $0.localRoot = directory
                $0.output.resizesInLinearLight = linear
            }) { server in
                let answer = try await server.get(ServerHarness.path("local:///p.png", ["rs:fit:100:100"], extension: "png"))
                #expect(answer.status == 200)
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect(abs(Self.meanLevel(image) - level) < 2, "linear \(linear): \(Self.meanLevel(image))")
            }
        }
    }
}
