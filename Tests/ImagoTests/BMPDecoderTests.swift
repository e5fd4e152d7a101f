import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// BMP files made by ImageMagick from corpus PNGs in the forms it writes (OS/2 and Windows headers,
/// 1, 4, 8, 16, 24 and 32 bits, RLE8, bit fields with and without alpha), each compared with
/// ImageMagick's own decode of the same file (written back as an RGBA PNG); a top-down copy made by
/// hand; truncated and mutated copies.
@Suite("BMP decoder")
struct BMPDecoderTests {
    static let convert = "/usr/bin/convert"

    /// (source PNG, ImageMagick output spec, options before it). The bit-field forms with channels
    /// under 8 bits come last: for them ImageMagick's own decode is not a reference (it reads a
    /// 4-bit 15 as 240, and its ARGB1555 is unusable either way), so they are compared with the
    /// source PNG within one step of their narrowest channel (ImageMagick's encoder truncates).
    static let variants: [(String, String, [String])] = [
        ("basn2c08.png", "bmp", []),
        ("basn6a08.png", "bmp", []),
        ("basn2c08.png", "bmp3", []),
        ("basn2c08.png", "bmp2", []),
        ("basn2c08.png", "bmp3", ["-type", "palette"]),
        ("basn2c08.png", "bmp3", ["-colors", "16", "-type", "palette"]),
        ("basn2c08.png", "bmp3", ["-type", "bilevel"]),
        ("basn2c08.png", "bmp3", ["-type", "palette", "-compress", "rle"]),
        ("basn2c08.png", "bmp", ["-define", "bmp:subtype=RGB565"]),
        ("basn2c08.png", "bmp", ["-define", "bmp:subtype=RGB555"]),
        ("basn6a08.png", "bmp", ["-define", "bmp:subtype=ARGB4444"]),
    ]

    static func make(_ source: String, _ spec: String, _ options: [String], in directory: URL) async throws -> (bmp: Data, reference: Image) {
        let input = Corpus.root.appendingPathComponent("png/\(source)").path
        let bmp = directory.appendingPathComponent("out.bmp")
        let png = directory.appendingPathComponent("reference.png")
        try await runTool(convert, [input] + options + ["\(spec):\(bmp.path)"])
        try await runTool(convert, [bmp.path, "png32:\(png.path)"])
        return (try Data(contentsOf: bmp), try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions()))
    }

    /// Tolerances against the source for the bit-field forms, by subtype: one step of the narrowest
    /// channel (5 or 4 bits), plus one for rounding.
    static let sourceTolerance = ["RGB565": 9, "RGB555": 9, "ARGB4444": 18]

    @Test("ImageMagick's BMP files decode to ImageMagick's own pixels (bit fields: to the source's)", arguments: variants.indices)
    func conformance(index: Int) async throws {
        let (source, spec, options) = Self.variants[index]
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var (bmp, reference) = try await Self.make(source, spec, options, in: directory)
        var tolerance = 0
        if let subtype = options.last?.split(separator: "=").last.map(String.init), let allowed = Self.sourceTolerance[subtype] {
            reference = try Corpus.storedPixels("png/\(source)")
            tolerance = allowed
        }
        #expect(DecoderRegistry.standard().decoder(for: bmp) is BMPDecoder)
        let image = try DecoderRegistry.standard().decode(bmp)
        #expect(image.metadata.format == .bmp)
        #expect((image.width, image.height) == (reference.width, reference.height))
        #expect(Corpus.maxDifference(image, reference) <= tolerance, "\(source) as \(spec) \(options)")
    }

    @Test("a top-down file (negative height) gives the same pixels as its bottom-up twin")
    func topDown() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (bmp, reference) = try await Self.make("basn2c08.png", "bmp3", [], in: directory)
        var bytes = [UInt8](bmp)
        let offset = Int(bytes[10]) | Int(bytes[11]) << 8
        let height = Int(bytes[22]) | Int(bytes[23]) << 8
        let stride = (24 * reference.width + 31) / 32 * 4
        let rows = (0..<height).map { Array(bytes[(offset + $0 * stride)..<(offset + ($0 + 1) * stride)]) }
        bytes.replaceSubrange(offset..<(offset + height * stride), with: rows.reversed().flatMap { $0 })
        let negative = UInt32(bitPattern: Int32(-height))
        for index in 0..<4 { bytes[22 + index] = UInt8(truncatingIfNeeded: negative >> (8 * UInt32(index))) }
        let image = try BMPDecoder().decode(Data(bytes), options: DecodingOptions())
        #expect(Corpus.maxDifference(image, reference) == 0)
    }

    @Test("every truncated copy is a clean error; mutated copies never crash")
    func truncatedAndMutated() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (source, spec, options) in Self.variants {
            let (bmp, _) = try await Self.make(source, spec, options, in: directory)
            expectCleanFailures(BMPDecoder(), bmp)
        }
    }

    @Test("a header over the limits is refused before any pixel is allocated")
    func limits() throws {
        var header = [UInt8](repeating: 0, count: 54)
        header[0] = UInt8(ascii: "B")
        header[1] = UInt8(ascii: "M")
        header[10] = 54
        header[14] = 40
        for (offset, value) in [(18, UInt32(60_000)), (22, UInt32(60_000))] {
            for index in 0..<4 { header[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
        }
        header[28] = 24
        do {
            _ = try BMPDecoder().decode(Data(header), options: DecodingOptions())
            Issue.record("a 60,000 × 60,000 header decoded")
        } catch {
            #expect(error.code.imageSize?.width == 60_000)
        }
        #expect(BMPDecoder().estimate(Data(header), options: DecodingOptions())?.bytes == 0)
        // Int32.min as the height has no positive twin.
        for index in 0..<4 { header[22 + index] = index == 3 ? 0x80 : 0 }
        #expect(throws: ImagoError.self) { try BMPDecoder().decode(Data(header), options: DecodingOptions()) }
    }
}
