import Foundation
import Imago
import Testing

@Suite("imago placeholder and info's placeholders", .timeLimit(.minutes(6)))
struct CLIPlaceholderTests {
    struct Hashes: Decodable {
        var input: String
        var status: String
        var error: String?
        var width: Int?
        var height: Int?
        var thumbhash: String?
        var blurhash: String?
    }

    /// The 64×48 gradient of `PlaceholderTests`, written as PNG: small enough that the 100-pixel
    /// decode is the image itself, so the reference hashes apply.
    static func gradientFile(in directory: URL) throws -> URL {
        let file = directory.appendingPathComponent("gradient.png")
        try PNGEncoder().encode(Image.test(64, 48, PlaceholderTests.gradient(64, 48))).write(to: file)
        return file
    }

    @Test("prints the reference's ThumbHash and BlurHash per input as JSON; a missing input is an error line and exit status 1")
    func hashes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.gradientFile(in: directory)
        let missing = directory.appendingPathComponent("missing.png")
        let run = try await imago(["placeholder", "--json", "--components", "3x7", file.path, missing.path])
        #expect(run.status == 1)
        let results = try JSONDecoder().decode([Hashes].self, from: run.output)
        try #require(results.count == 2)
        #expect(results[0].status == "ok" && results[0].width == 64 && results[0].height == 48)
        #expect(results[0].thumbhash == "HwgKPZqAh4dweHh4iHiHeICACPh4")
        #expect(results[0].blurhash == "u$HVC]2Z$5l}axjtgcfjfQnTa_jtfjfQfQoMa^jtf7fOfQ")
        #expect(results[1].status == "error" && results[1].thumbhash == nil && results[1].error?.isEmpty == false)
        let text = try await imago(["placeholder", "--kind", "blurhash", file.path])
        #expect(text.status == 0)
        #expect(String(decoding: text.output, as: UTF8.self) == "\(file.path)  blurhash:L$HVC]2Z$5Shl}axjtf5gcfjfQfj\n")
    }

    @Test("a large image is hashed from a decode that fits 100 pixels, or at full size when asked; bad term counts are refused")
    func largeAndRefused() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pixels = PlaceholderTests.gradient(400, 300)
        let file = directory.appendingPathComponent("large.png")
        try PNGEncoder().encode(Image.test(400, 300, pixels)).write(to: file)
        let run = try await imago(["placeholder", "--json", file.path])
        let reduced = try #require(try JSONDecoder().decode([Hashes].self, from: run.output).first)
        let fitted = try ImageProcessors.Resize(size: PixelSize(width: 100, height: 100)).process(Image.test(400, 300, pixels))
        #expect(reduced.thumbhash == ThumbHash(pixels: fitted.pixels, width: 100, height: 75).base64)
        #expect(reduced.blurhash == (try BlurHash(pixels: fitted.pixels, width: 100, height: 75)).string)
        let full = try await imago(["placeholder", "--json", "--full-size", "--kind", "blurhash", file.path])
        let exact = try #require(try JSONDecoder().decode([Hashes].self, from: full.output).first)
        #expect(exact.blurhash == (try BlurHash(pixels: pixels, width: 400, height: 300)).string)
        #expect(exact.thumbhash == nil)
        for bad in ["0x3", "4x10", "four"] {
            #expect(try await imago(["placeholder", "--components", bad, file.path]).status != 0, "\(bad)")
        }
    }

    @Test("imago info prints both placeholders")
    func info() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.gradientFile(in: directory)
        let run = try await imago(["info", file.path])
        #expect(run.status == 0)
        #expect(
            String(decoding: run.output, as: UTF8.self).contains("placeholders: thumbhash HwgKPZqAh4dweHh4iHiHeICACPh4, blurhash L$HVC]2Z$5Shl}axjtf5gcfjfQfj"))
    }
}
