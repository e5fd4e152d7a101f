import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// TGA files made by ImageMagick from corpus PNGs (true colour with and without alpha, grayscale,
/// colour-mapped, raw and RLE, both vertical origins), each compared with ImageMagick's own decode
/// of the same file, turned upright; truncated and mutated copies; the sniffing that has no magic
/// number to go on.
@Suite("TGA decoder")
struct TGADecoderTests {
    static let convert = "/usr/bin/convert"

    /// (source PNG, options before the output).
    static let variants: [(String, [String])] = [
        ("basn2c08.png", []),
        ("basn6a08.png", []),
        ("basn0g08.png", ["-type", "grayscale"]),
        ("basn2c08.png", ["-type", "palette"]),
        ("basn2c08.png", ["-compress", "rle"]),
        ("basn6a08.png", ["-compress", "rle"]),
        ("basn0g08.png", ["-type", "grayscale", "-compress", "rle"]),
        ("basn2c08.png", ["-type", "palette", "-compress", "rle"]),
        ("basn2c08.png", ["-orient", "top-left"]),
    ]

    static func make(_ source: String, _ options: [String], in directory: URL) async throws -> (tga: Data, reference: Image) {
        let input = Corpus.root.appendingPathComponent("png/\(source)").path
        let tga = directory.appendingPathComponent("out.tga")
        let png = directory.appendingPathComponent("reference.png")
        try await runTool(convert, [input] + options + ["tga:\(tga.path)"])
        // ImageMagick reads a bottom-left TGA's rows as they are stored and only records the
        // orientation; -auto-orient applies it, as Pillow, GIMP and browsers do when they decode.
        try await runTool(convert, ["tga:\(tga.path)", "-auto-orient", "png32:\(png.path)"])
        return (try Data(contentsOf: tga), try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions()))
    }

    @Test("ImageMagick's TGA files decode to ImageMagick's own pixels", arguments: variants.indices)
    func conformance(index: Int) async throws {
        let (source, options) = Self.variants[index]
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (tga, reference) = try await Self.make(source, options, in: directory)
        #expect(DecoderRegistry.standard().decoder(for: tga) is TGADecoder)
        let image = try DecoderRegistry.standard().decode(tga)
        #expect(image.metadata.format == .tga)
        #expect((image.width, image.height) == (reference.width, reference.height))
        #expect(Corpus.maxDifference(image, reference) == 0, "\(source) \(options)")
    }

    @Test("every truncated copy is a clean error; mutated copies never crash")
    func truncatedAndMutated() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (source, options) in Self.variants {
            let (tga, _) = try await Self.make(source, options, in: directory)
            expectCleanFailures(TGADecoder(), tga, truncatedBelow: tga.count - 26)
        }
    }

    @Test("without a magic number: other formats and text are not taken for TGA; a big header is refused before allocation")
    func sniffingAndLimits() throws {
        let registry = DecoderRegistry.standard()
        #expect(!(registry.decoder(for: try Corpus.data("png/basn2c08.png")) is TGADecoder))
        #expect(!(registry.decoder(for: try Corpus.data("jpeg/video-001.jpeg")) is TGADecoder))
        #expect(!TGADecoder().canDecode(Data("just some text that is not an image".utf8)))
        var header = [UInt8](repeating: 0, count: 18)
        header[2] = 2
        header[12] = 0x60
        header[13] = 0xEA  // width 60,000
        header[14] = 0x60
        header[15] = 0xEA  // height 60,000
        header[16] = 24
        let footer = Array("TRUEVISION-XFILE.".utf8) + [0]
        let huge = Data(header + [UInt8](repeating: 0, count: 8) + footer)
        #expect(TGADecoder().canDecode(huge))
        do {
            _ = try TGADecoder().decode(huge, options: DecodingOptions())
            Issue.record("a 60,000 × 60,000 header decoded")
        } catch {
            #expect(error.code.imageSize?.width == 60_000)
        }
        #expect(TGADecoder().estimate(huge, options: DecodingOptions())?.bytes == 0)
    }
}
