import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// Netpbm files made by ImageMagick from corpus PNGs, in every form it writes (ASCII and binary
/// PBM, PGM, PPM, 8- and 16-bit, PAM with and without alpha), each compared with ImageMagick's own
/// decode of the same file (written back as an RGBA PNG); plus hand-written headers and truncated
/// and mutated copies.
@Suite("PNM decoder")
struct PNMDecoderTests {
    static let convert = "/usr/bin/convert"

    /// (source PNG, ImageMagick output spec, extra options, largest difference allowed).
    static let variants: [(String, String, [String], Int)] = [
        ("basn2c08.png", "ppm", [], 0),
        ("basn2c08.png", "ppm", ["-compress", "none"], 0),
        ("basn2c08.png", "ppm", ["-depth", "16"], 1),
        ("basn2c08.png", "ppm", ["-depth", "16", "-compress", "none"], 1),
        ("basn0g08.png", "pgm", [], 0),
        ("basn0g08.png", "pgm", ["-compress", "none"], 0),
        ("basn0g16.png", "pgm", ["-depth", "16"], 1),
        ("basn2c08.png", "pbm", [], 0),
        ("basn2c08.png", "pbm", ["-compress", "none"], 0),
        ("basn6a08.png", "pam", [], 0),
        ("basn4a08.png", "pam", [], 0),
        ("basn6a16.png", "pam", ["-depth", "16"], 1),
        ("basn2c08.png", "pam", [], 0),
    ]

    static func make(_ source: String, _ spec: String, _ options: [String], in directory: URL) async throws -> (pnm: Data, reference: Image) {
        let input = Corpus.root.appendingPathComponent("png/\(source)").path
        let pnm = directory.appendingPathComponent("out.\(spec)")
        let png = directory.appendingPathComponent("reference.png")
        try await runTool(convert, [input] + options + ["\(spec):\(pnm.path)"])
        try await runTool(convert, [pnm.path, "png32:\(png.path)"])
        return (try Data(contentsOf: pnm), try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions()))
    }

    @Test("ImageMagick's PBM, PGM, PPM and PAM files decode to ImageMagick's own pixels", arguments: variants.indices)
    func conformance(index: Int) async throws {
        let (source, spec, options, tolerance) = Self.variants[index]
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (pnm, reference) = try await Self.make(source, spec, options, in: directory)
        #expect(DecoderRegistry.standard().decoder(for: pnm) is PNMDecoder)
        let image = try DecoderRegistry.standard().decode(pnm)
        #expect(image.metadata.format == .pnm)
        #expect((image.width, image.height) == (reference.width, reference.height))
        #expect(Corpus.maxDifference(image, reference) <= tolerance, "\(source) as \(spec) \(options)")
        #expect(image.metadata.hasAlpha == (spec == "pam" && ["basn6a08.png", "basn4a08.png", "basn6a16.png"].contains(source)))
    }

    @Test("every truncated copy is a clean error; mutated copies never crash")
    func truncatedAndMutated() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (source, spec, options, _) in Self.variants {
            let (pnm, _) = try await Self.make(source, spec, options, in: directory)
            expectCleanFailures(PNMDecoder(), pnm)
        }
    }

    @Test("headers by hand: comments, maxval 1, run-together ASCII bits, 16-bit samples")
    func handWritten() throws {
        let commented = try PNMDecoder().decode(Data("P2 # a comment\n# another\n2 1\n# max\n4\n0 4\n".utf8), options: DecodingOptions())
        #expect(commented.pixels == [0, 0, 0, 255, 255, 255, 255, 255])
        let bits = try PNMDecoder().decode(Data("P1\n3 1\n101\n".utf8), options: DecodingOptions())
        #expect(bits.pixels == [0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 255])
        let wide = try PNMDecoder().decode(Data("P5 1 1 65535\n".utf8) + Data([0x80, 0x00]), options: DecodingOptions())
        #expect(wide.pixels == [128, 128, 128, 255])
        let binaryBits = try PNMDecoder().decode(Data("P4 10 2\n".utf8) + Data([0b1000_0000, 0b0100_0000, 0xFF, 0xC0]), options: DecodingOptions())
        #expect(
            binaryBits.pixels.enumerated().filter { $0.offset % 4 == 0 }.map(\.element) == [0, 255, 255, 255, 255, 255, 255, 255, 255, 0]
                + Array(repeating: 0, count: 10))
    }

    @Test("a header over the limits is refused before any pixel is allocated; bad headers name the problem")
    func limits() throws {
        let huge = Data("P6 60000 60000 255\n".utf8)
        #expect(throws: ImagoError.self) { try PNMDecoder().decode(huge, options: DecodingOptions()) }
        do {
            _ = try PNMDecoder().decode(huge, options: DecodingOptions())
        } catch {
            #expect(error.code.imageSize?.width == 60_000)
        }
        for bad in [
            "P6 1 1 0\n", "P6 1 1 70000\n", "P6 1 x 255\n", "P6 1234567890 1 255\n", "P7\nWIDTH 1\nENDHDR\n",
            "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 5\nMAXVAL 255\nENDHDR\n\0\0\0\0\0",
        ] {
            #expect(throws: ImagoError.self) { try PNMDecoder().decode(Data(bad.utf8), options: DecodingOptions()) }
        }
        #expect(PNMDecoder().estimate(huge, options: DecodingOptions())?.bytes == 0)
        #expect(PNMDecoder().estimate(Data("P6 10 10 255\n".utf8), options: DecodingOptions())?.bytes == 400)
        #expect(!PNMDecoder().canDecode(Data("Plain text".utf8)))
    }
}
