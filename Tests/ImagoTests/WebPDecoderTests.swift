import Foundation
import Imago
import Testing

@Suite("WebP decoding (libwebp)")
struct WebPDecoderTests {
    static let files = (try? Corpus.files("webp", extension: "webp")) ?? []

    /// The PNG of the picture a WebP file encodes: `tux.lossless.webp` → `tux.png`.
    static func png(for file: URL) -> URL {
        let stem = file.lastPathComponent.components(separatedBy: ".").prefix {
            !["lossless", "lossy", "no-filter", "normal-filter", "simple-filter", "lossy-with-alpha", "webp"].contains($0)
        }
        return file.deletingLastPathComponent().appendingPathComponent(stem.joined(separator: ".") + ".png")
    }

    /// Decodes with Debian's `dwebp` (the named peer) into PAM and reads it back.
    static func dwebp(_ file: URL) async throws -> (width: Int, height: Int, pixels: [UInt8]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.pam")
        try await runTool("/usr/bin/dwebp", [file.path, "-pam", "-o", output.path])
        let pam = try Data(contentsOf: output)
        let headerEnd = try #require(pam.range(of: Data("ENDHDR\n".utf8)))
        let header = String(decoding: pam[..<headerEnd.lowerBound], as: UTF8.self)
        func field(_ name: String) -> Int { header.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0 }
        #expect(field("DEPTH") == 4)
        return (field("WIDTH"), field("HEIGHT"), [UInt8](pam[headerEnd.upperBound...]))
    }

    @Test("lossless WebP equals its PNG exactly", arguments: files.filter { $0.lastPathComponent.contains(".lossless.") })
    func lossless(file: URL) throws {
        let image = try WebPDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        let reference = try PNGDecoder().decode(Data(contentsOf: Self.png(for: file)), options: DecodingOptions())
        #expect((image.width, image.height) == (reference.width, reference.height))
        #expect(Corpus.samePixels(image.pixels, reference.pixels))
        #expect(image.metadata.format == .webp)
    }

    @Test("lossy WebP equals dwebp's decode of the same file", arguments: files.filter { !$0.lastPathComponent.contains(".lossless.") })
    func lossy(file: URL) async throws {
        let image = try WebPDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        let peer = try await Self.dwebp(file)
        #expect((image.width, image.height) == (peer.width, peer.height))
        #expect(Corpus.samePixels(image.pixels, peer.pixels))
        #expect(image.metadata.hasAlpha == file.lastPathComponent.contains("alpha"))
    }

    @Test("scaled decode covers the target with the image's aspect ratio")
    func scaled() throws {
        let data = try Corpus.data("webp/blue-purple-pink-large.lossless.webp")
        let full = try WebPDecoder().decode(data, options: DecodingOptions())
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: full.width / 4, height: full.height / 4)
        let small = try WebPDecoder().decode(data, options: options)
        #expect(small.width >= full.width / 4 && small.height >= full.height / 4)
        #expect(small.width <= full.width / 4 + 1 && small.height <= full.height / 4 + 1)
        #expect(small.metadata.originalWidth == full.width)
    }

    @Test("an animated WebP made by img2webp: frames, durations, loop count")
    func animated() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("anim.webp")
        let frames = ["gopher-doc.1bpp.png", "gopher-doc.8bpp.png", "gopher-doc.2bpp.png"].map { Corpus.root.appendingPathComponent("webp/\($0)").path }
        try await runTool(
            "/usr/bin/img2webp", ["-loop", "3", "-lossless", "-d", "80", frames[0], "-d", "120", frames[1], "-d", "200", frames[2], "-o", output.path])
        let image = try WebPDecoder().decode(Data(contentsOf: output), options: DecodingOptions())
        #expect(image.frames.count == 3)
        #expect(image.isAnimated)
        #expect(image.loopCount == 3)
        #expect(image.frames.map(\.duration) == [.milliseconds(80), .milliseconds(120), .milliseconds(200)])
        let first = try PNGDecoder().decode(Data(contentsOf: URL(fileURLWithPath: frames[0])), options: DecodingOptions())
        #expect(Corpus.samePixels(image.frames[0].pixels, first.pixels))
        #expect(image.cost == 3 * image.width * image.height * 4)

        var options = DecodingOptions()
        options.maxFrames = 2
        #expect(throws: ImagoError.self) { try WebPDecoder().decode(Data(contentsOf: output), options: options) }
    }

    @Test("a WebP over the limits or corrupt is refused with a typed error")
    func refused() throws {
        var options = DecodingOptions()
        options.maxPixels = 100
        let tux = try Corpus.data("webp/tux.lossless.webp")
        do {
            _ = try WebPDecoder().decode(tux, options: options)
            Issue.record("decoded over the limit")
        } catch {
            guard error.code.kind == .imageTooLarge else {
                Issue.record("got \(error)")
                return
            }
        }
        var corrupt = try Corpus.data("webp/video-001.lossy.webp")
        corrupt.replaceSubrange(40..<corrupt.count, with: Data(repeating: 0x55, count: corrupt.count - 40))
        do {
            _ = try WebPDecoder().decode(corrupt, options: DecodingOptions())
            Issue.record("decoded corrupt data")
        } catch {
            guard error.code.kind == .invalidImage, let message = error.code.message else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.hasPrefix("WebP:"))
        }
    }
}
