import Foundation
import Imago
import Testing

@Suite("PNG decoding (libspng)")
struct PNGDecoderTests {
    static let suite = ((try? Corpus.files("png", extension: "png")) ?? []).filter {
        $0.lastPathComponent.hasPrefix("basn") || $0.lastPathComponent.hasPrefix("ftb")
    }

    @Test("every PngSuite basic and transparency file decodes to RGBA8 at its size (32, or the -NN suffix), alpha said when present", arguments: suite)
    func pngSuite(file: URL) throws {
        let name = file.lastPathComponent
        let image = try PNGDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        let side = name.split(separator: "-").dropFirst().first.flatMap { Int($0.prefix(2)) } ?? 32
        #expect((image.width, image.height) == (side, side))
        #expect(image.pixels.count == side * side * 4)
        #expect(image.metadata.format == .png)
        let declaresAlpha = name.contains("4a") || name.contains("6a") || name.contains("trns") || name.hasPrefix("ftb")
        #expect(image.metadata.hasAlpha == declaresAlpha)
        if !image.metadata.hasAlpha { #expect(image.pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 }) }
    }

    @Test("1-bit gray is pure black and white; 16-bit becomes its high byte")
    func bitDepths() throws {
        let bilevel = try PNGDecoder().decode(Corpus.data("png/basn0g01.png"), options: DecodingOptions())
        #expect(bilevel.pixels.allSatisfy { $0 == 0 || $0 == 255 })
        #expect(Set(bilevel.pixels.enumerated().filter { $0.offset % 4 == 0 }.map(\.element)) == [0, 255])
        let gray16 = try PNGDecoder().decode(Corpus.data("png/basn0g16.png"), options: DecodingOptions())
        #expect(gray16.pixels.enumerated().allSatisfy { $0.offset % 4 == 3 ? $0.element == 255 : true })
        #expect(Set(gray16.pixels.enumerated().filter { $0.offset % 4 == 0 }.map(\.element)).count > 16)
    }

    @Test("Adam7 interlaced and plain encodings of one picture decode to the same pixels")
    func interlaced() throws {
        let plain = try PNGDecoder().decode(Corpus.data("png/benchRGB.png"), options: DecodingOptions())
        let interlaced = try PNGDecoder().decode(Corpus.data("png/benchRGB-interlace.png"), options: DecodingOptions())
        #expect(plain.width == interlaced.width && plain.height == interlaced.height)
        #expect(Corpus.samePixels(plain.pixels, interlaced.pixels))
    }

    @Test("tRNS makes transparent pixels", arguments: ["basn3p08-trns.png", "ftbbn0g04.png"])
    func transparency(name: String) throws {
        let image = try PNGDecoder().decode(Corpus.data("png/\(name)"), options: DecodingOptions())
        let alphas = Set(image.pixels.enumerated().filter { $0.offset % 4 == 3 }.map(\.element))
        #expect(alphas.contains(0) || alphas.contains { $0 < 255 })
    }

    @Test(
        "invalid PNGs are rejected with invalidImage (no IEND may decode)",
        arguments: ["invalid-crc32.png", "invalid-palette.png", "invalid-trunc.png", "invalid-zlib.png", "invalid-noend.png"])
    func invalid(name: String) throws {
        let data = try Corpus.data("invalid/\(name)")
        do {
            let image = try PNGDecoder().decode(data, options: DecodingOptions())
            #expect(name == "invalid-noend.png", "\(name) decoded to \(image.width)×\(image.height)")
        } catch {
            guard error.code.kind == .invalidImage, let message = error.code.message else {
                Issue.record("\(name): \(error)")
                return
            }
            #expect(message.hasPrefix("PNG:"))
        }
    }

    @Test("image data that stops before the last row is refused, even with a complete IEND after it")
    func shortImageData() throws {
        let width = 64, height = 64
        // Rows of 8-bit RGB, filter byte 0.
        var rows = Data()
        for y in 0..<height {
            rows.append(0)
            for x in 0..<width { rows.append(contentsOf: [UInt8(x * 4), UInt8(y * 4), 128]) }
        }
        let whole = PNGBytes.png(width: width, height: height, colorType: 2, zlib: PNGBytes.storedZlib(rows))
        #expect(try PNGDecoder().decode(whole, options: DecodingOptions()).pixel(x: 63, y: 63).g == 252)
        let endsEarly = PNGBytes.png(width: width, height: height, colorType: 2, zlib: PNGBytes.storedZlib(rows.prefix(rows.count / 2)))
        let cut = PNGBytes.png(width: width, height: height, colorType: 2, zlib: PNGBytes.storedZlib(rows).prefix(rows.count / 2))
        for data in [endsEarly, cut] {
            #expect {
                try PNGDecoder().decode(data, options: DecodingOptions())
            } throws: { error in
                guard let error = error as? ImagoError, error.code.kind == .invalidImage, let message = error.code.message else { return false }
                return message.hasPrefix("PNG:")
            }
        }
    }

    @Test("a decompression bomb (a tiny PNG declaring 50,000 × 50,000) is refused before allocating")
    func bomb() throws {
        let data = PNGBytes.png(width: 50_000, height: 50_000, colorType: 6)
        #expect(data.count < 100)
        do {
            _ = try PNGDecoder().decode(data, options: DecodingOptions())
            Issue.record("decoded a bomb")
        } catch {
            #expect(error.code == .imageTooLarge(width: 50_000, height: 50_000, limit: .pixels(100_000_000)))
        }
    }
}

/// Builds PNG byte streams for tests.
enum PNGBytes {
    /// A signature, an IHDR declaring `width × height` at 8 bits of `colorType` (6 RGBA, 2 RGB),
    /// one IDAT holding `zlib`, and IEND.
    static func png(width: Int, height: Int, colorType: UInt8, zlib: Data = Data()) -> Data {
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var ihdr = Data()
        for value in [UInt32(width), UInt32(height)] { ihdr.append(contentsOf: withUnsafeBytes(of: value.bigEndian) { Array($0) }) }
        ihdr.append(contentsOf: [8, colorType, 0, 0, 0])
        data.append(chunk("IHDR", ihdr))
        data.append(chunk("IDAT", zlib))
        data.append(chunk("IEND", Data()))
        return data
    }

    /// A complete zlib stream of `bytes` in stored (uncompressed) deflate blocks.
    static func storedZlib(_ bytes: Data) -> Data {
        var out = Data([0x78, 0x01])
        var offset = bytes.startIndex
        repeat {
            let count = min(65_535, bytes.endIndex - offset)
            let final: UInt8 = offset + count == bytes.endIndex ? 1 : 0
            out.append(final)
            out.append(contentsOf: [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            out.append(bytes[offset..<offset + count])
            offset += count
        } while offset < bytes.endIndex
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        out.append(contentsOf: withUnsafeBytes(of: (b << 16 | a).bigEndian) { Array($0) })
        return out
    }

    static func chunk(_ type: String, _ body: Data) -> Data {
        var out = Data(withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) })
        let typed = Data(type.utf8) + body
        out.append(typed)
        out.append(contentsOf: withUnsafeBytes(of: crc32(typed).bigEndian) { Array($0) })
        return out
    }

    /// CRC-32 as PNG (and zlib) compute it.
    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
