import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// Icons made by ImageMagick from corpus PNGs (32-bit with alpha, 8-bit palette with an AND mask,
/// a PNG entry, several sizes in one file) compared with ImageMagick's own decode (a PNG entry with
/// the PNG's); 1-, 4-, 8- and
/// 24-bit entries made here from ImageMagick's BMPs with a mask pattern, compared with the BMP's
/// decode masked by hand; the choice of entry, cursors, truncated and mutated copies, limits.
@Suite("ICO decoder")
struct ICODecoderTests {
    static let convert = "/usr/bin/convert"

    /// (source PNG, options before the output).
    static let variants: [(String, [String])] = [
        ("basn6a08.png", []),
        ("basn2c08.png", []),
        ("basn2c08.png", ["-type", "palette"]),
        ("basn6a08.png", ["-type", "palette"]),
        ("basn2c08.png", ["-resize", "256x256"]),
        ("basn6a08.png", ["-define", "icon:auto-resize=64,32,16"]),
    ]

    static func make(_ source: String, _ options: [String], in directory: URL) async throws -> (ico: Data, reference: Image) {
        let input = Corpus.root.appendingPathComponent("png/\(source)").path
        let ico = directory.appendingPathComponent("out.ico")
        let png = directory.appendingPathComponent("reference.png")
        try await runTool(convert, [input] + options + ["ico:\(ico.path)"])
        let data = try Data(contentsOf: ico)
        // The first entry is the largest in every variant above, the one Imago takes by default.
        // ImageMagick applies a PNG entry's gAMA chunk when it reads it (Pillow and browsers do
        // not), so a PNG entry's reference is the PNG itself.
        let first = [UInt8](data.prefix(22))
        let size = Int(first[14]) | Int(first[15]) << 8 | Int(first[16]) << 16
        let offset = Int(first[18]) | Int(first[19]) << 8 | Int(first[20]) << 16
        let entry = data.subdata(in: offset..<offset + size)
        if entry.starts(with: ICODecoder.pngSignature) {
            return (data, try PNGDecoder().decode(entry, options: DecodingOptions()))
        }
        try await runTool(convert, ["ico:\(ico.path)[0]", "png32:\(png.path)"])
        return (data, try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions()))
    }

    /// Pixels that differ, counting every transparent pixel as equal to every other (a masked
    /// pixel's colour is whatever the writer left there).
    static func maxVisibleDifference(_ a: Image, _ b: Image) -> Int {
        var largest = 0
        for index in stride(from: 0, to: a.pixels.count, by: 4) where a.pixels[index + 3] != 0 || b.pixels[index + 3] != 0 {
            for channel in 0..<4 { largest = max(largest, abs(Int(a.pixels[index + channel]) - Int(b.pixels[index + channel]))) }
        }
        return largest
    }

    @Test("ImageMagick's icons decode to ImageMagick's own pixels", arguments: variants.indices)
    func conformance(index: Int) async throws {
        let (source, options) = Self.variants[index]
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (ico, reference) = try await Self.make(source, options, in: directory)
        #expect(DecoderRegistry.standard().decoder(for: ico) is ICODecoder)
        let image = try DecoderRegistry.standard().decode(ico)
        #expect(image.metadata.format == .ico)
        #expect((image.width, image.height) == (reference.width, reference.height))
        #expect(Self.maxVisibleDifference(image, reference) == 0, "\(source) \(options)")
    }

    /// An icon of one BMP entry: `bmp`'s header, palette and rows, its height doubled, then an AND
    /// mask that hides every pixel where `(x + y) % 7 == 0` (x, y from the top left).
    static func icon(fromBMP bmp: Data) throws -> (ico: Data, hidden: (Int, Int) -> Bool) {
        let bytes = [UInt8](bmp)
        try #require(bytes.count >= 54)
        func u32(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24 }
        let pixelOffset = u32(10), width = u32(18), height = u32(22), bits = Int(bytes[28])
        let stride = (bits * width + 31) / 32 * 4
        try #require(u32(30) == 0 && width < 256 && height < 128 && bytes.count >= pixelOffset + stride * height)
        var dib = Array(bytes[14..<pixelOffset + stride * height])
        dib[8] = UInt8(height * 2)
        let hidden: (Int, Int) -> Bool = { x, y in (x + y) % 7 == 0 }
        let maskStride = (width + 31) / 32 * 4
        for stored in 0..<height {
            var row = [UInt8](repeating: 0, count: maskStride)
            for x in 0..<width where hidden(x, height - 1 - stored) { row[x / 8] |= 0x80 >> UInt8(x % 8) }
            dib += row
        }
        let size = dib.count
        let directory: [UInt8] =
            [0, 0, 1, 0, 1, 0, UInt8(width), UInt8(height), 0, 0, 1, 0, UInt8(bits), 0]
            + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16), 0, 22, 0, 0, 0]
        return (Data(directory + dib), hidden)
    }

    @Test(
        "1-, 4-, 8- and 24-bit entries: the BMP's pixels, hidden where the AND mask says",
        arguments: [["-type", "bilevel"], ["-colors", "16", "-type", "palette"], ["-type", "palette"], []])
    func maskedBitmaps(options: [String]) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Corpus.root.appendingPathComponent("png/basn2c08.png").path
        let bmp = directory.appendingPathComponent("s.bmp"), png = directory.appendingPathComponent("s.png")
        try await runTool(Self.convert, [input] + options + ["-compress", "none", "bmp3:\(bmp.path)"])
        try await runTool(Self.convert, ["bmp:\(bmp.path)", "png32:\(png.path)"])
        let (ico, hidden) = try Self.icon(fromBMP: try Data(contentsOf: bmp))
        let bitmap = try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
        var expected = bitmap.pixels
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width where hidden(x, y) { expected[(y * bitmap.width + x) * 4 + 3] = 0 }
        }
        let image = try DecoderRegistry.standard().decode(ico)
        #expect((image.width, image.height) == (32, 32))
        #expect(image.metadata.hasAlpha)
        #expect(image.pixels == expected, "\(options)")
        expectCleanFailures(ICODecoder(), ico)
    }

    @Test("the smallest entry that covers the target, else the largest; a cursor decodes like an icon")
    func entryChoice() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (ico, _) = try await Self.make("basn6a08.png", ["-define", "icon:auto-resize=64,32,16"], in: directory)
        func width(target: Int?, mode: DecodingOptions.TargetMode = .fill, _ data: Data = ico) throws -> Int {
            var options = DecodingOptions()
            options.targetSize = target.map { PixelSize(width: $0, height: $0) }
            options.targetMode = mode
            #expect(ICODecoder().estimate(data, options: options)?.width == (try ICODecoder().decode(data, options: options).width))
            return try ICODecoder().decode(data, options: options).width
        }
        #expect(try width(target: nil) == 64)
        #expect(try width(target: 20) == 32)
        #expect(try width(target: 32) == 32)
        #expect(try width(target: 10) == 16)
        #expect(try width(target: 100) == 64)
        var cursor = [UInt8](ico)
        cursor[2] = 2
        #expect(ICODecoder().canDecode(Data(cursor)))
        #expect(try width(target: 20, Data(cursor)) == 32)
    }

    @Test("every truncated copy is a clean error; mutated copies never crash")
    func truncatedAndMutated() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (source, options) in Self.variants {
            let (ico, _) = try await Self.make(source, options, in: directory)
            expectCleanFailures(ICODecoder(), ico)
        }
    }

    @Test("an entry over the limits is refused before allocation; a directory pointing outside the file is an error")
    func limitsAndDirectory() throws {
        // One BMP entry declaring 60,000 × 60,000 (height doubled for the mask) with no pixels.
        var dib = [UInt8](repeating: 0, count: 40)
        dib[0] = 40
        dib[4] = 0x60
        dib[5] = 0xEA  // width 60,000
        dib[8] = 0xC0
        dib[9] = 0xD4
        dib[10] = 0x01  // height 120,000
        dib[12] = 1
        dib[14] = 32
        let directory: [UInt8] = [0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 32, 0, 40, 0, 0, 0, 22, 0, 0, 0]
        let huge = Data(directory + dib)
        #expect(ICODecoder().canDecode(huge))
        do {
            _ = try ICODecoder().decode(huge, options: DecodingOptions())
            Issue.record("a 60,000 × 60,000 entry decoded")
        } catch {
            #expect(error.code.imageSize?.width == 60_000)
        }
        #expect(ICODecoder().estimate(huge, options: DecodingOptions())?.bytes == 0)

        var outside = directory + dib
        outside[18] = 0xFF  // the entry starts past the end
        #expect(throws: ImagoError.self) { try ICODecoder().decode(Data(outside), options: DecodingOptions()) }
        #expect(!ICODecoder().canDecode(Data([0, 0, 1, 0, 0, 0])))
        #expect(!ICODecoder().canDecode(Data([0, 0, 3, 0, 1, 0])))
    }
}
