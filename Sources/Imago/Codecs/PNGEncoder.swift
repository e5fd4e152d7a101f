import CDeflate
import Dispatch
import Foundation

/// Encodes PNG: 8-bit RGBA, or RGB when the image has no alpha. Each row gets the filter whose
/// output has the smallest sum of absolute values (the heuristic of libpng, libspng and Pillow),
/// rows are filtered on every core, and the whole image is compressed in one call to libdeflate,
/// which is faster than zlib at the same level and writes no larger streams.
public struct PNGEncoder: ImageEncoding {
    public let format = ImageFormat.png
    /// libdeflate's level, 0…12: 0 stores without compressing (and without filtering); 12 is the
    /// smallest and slowest. The default, 7, writes photos smaller than zlib's level 6 (Pillow's
    /// default) in less time (BENCHMARKS.md); 8 and above take two to four times as long.
    public var compressionLevel: Int

    /// Makes a PNG encoder; `compressionLevel` is clamped to 0…12.
    public init(compressionLevel: Int = 7) {
        self.compressionLevel = min(max(compressionLevel, 0), 12)
    }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        let channels = image.metadata.hasAlpha ? 4 : 3
        guard image.width > 0, image.height > 0, image.width <= Int(Int32.max) / 4, image.height <= Int(Int32.max),
            image.pixels.count == image.width * image.height * 4
        else { throw encodingError(format, "cannot write \(image.width)×\(image.height)") }
        let filtered = PNGRowFilter(width: image.width, height: image.height, channels: channels, filters: compressionLevel > 0)
            .filter(image.pixels)
        let compressed = try compress(filtered)
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.reserveCapacity(compressed.count + compressed.count / Self.idatLength * 12 + 64)
        var header = Data()
        header.appendBigEndian(UInt32(image.width))
        header.appendBigEndian(UInt32(image.height))
        // Depth 8; colour type 6 (RGBA) or 2 (RGB); deflate; adaptive filtering; no interlace.
        header.append(contentsOf: [8, channels == 4 ? 6 : 2, 0, 0, 0])
        Self.appendChunk("IHDR", header, to: &png)
        var start = 0
        repeat {
            let end = min(start + Self.idatLength, compressed.count)
            Self.appendChunk("IDAT", compressed[start..<end], to: &png)
            start = end
        } while start < compressed.count
        Self.appendChunk("IEND", Data(), to: &png)
        return png
    }

    /// IDAT chunks of 8 KiB, as libpng writes: a reader that streams (PreviewDecoder, a
    /// browser) shows rows as each chunk completes; the cost is 12 bytes a chunk, 0.15%.
    private static let idatLength = 8 << 10

    /// The filtered rows as one zlib stream.
    private func compress(_ filtered: [UInt8]) throws(ImagoError) -> Data {
        guard let compressor = libdeflate_alloc_compressor(Int32(compressionLevel)) else { throw encodingError(format, "cannot make a compressor") }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_zlib_compress_bound(compressor, filtered.count)
        var output = Data(count: bound)
        let written = output.withUnsafeMutableBytes { out in
            filtered.withUnsafeBytes { libdeflate_zlib_compress(compressor, $0.baseAddress, $0.count, out.baseAddress, bound) }
        }
        guard written > 0 else { throw encodingError(format, "compression failed") }
        output.count = written
        return output
    }

    /// Length, type, data, and the CRC-32 of type and data.
    private static func appendChunk(_ type: String, _ data: Data, to png: inout Data) {
        let typeBytes = Array(type.utf8)
        png.appendBigEndian(UInt32(data.count))
        png.append(contentsOf: typeBytes)
        png.append(data)
        let typeCRC = typeBytes.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        png.appendBigEndian(data.withUnsafeBytes { libdeflate_crc32(typeCRC, $0.baseAddress, $0.count) })
    }
}

extension Data {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }
}
