import CDeflate
import CZlib
import Foundation

/// Encodes PNG: 8-bit RGBA, or RGB when the image has no alpha, or a palette when asked
/// (``paletteColors``); Adam7-interlaced when asked (``interlaced``). Each row gets the filter whose
/// output has the smallest sum of absolute values (the heuristic of libpng, libspng and Pillow),
/// rows are filtered on every core, and the filtered rows are compressed by zlib's run-length
/// strategy or libdeflate's LZ77, whichever suits them (a kept colour profile goes in `iCCP`, EXIF
/// in `eXIf`, XMP in `iTXt`).
public struct PNGEncoder: ImageEncoding {
    public let format = ImageFormat.png
    /// The compression level, 0…12 (libdeflate's, on zlib's scale up to 9): 0 stores without
    /// compressing (and without filtering); 12 is the smallest and slowest. Up to 7 (the
    /// default), a photo is written run-length and a graphic by LZ77 at the level, as a fast
    /// LZ77 pass judges them: a 512 px photo 1% smaller than Pillow's default (zlib level 6) in
    /// 70% of the encode time (BENCHMARKS.md); a large smooth photo can come out up to 4% larger
    /// than LZ77 would write it. From 8, both streams are made in full and the smaller kept.
    public var compressionLevel: Int

    /// Write Adam7-interlaced (imgproxy's `IMGPROXY_PNG_INTERLACED`): a reader shows the whole
    /// picture coarse first; the file is larger.
    public var interlaced: Bool
    /// Reduce to a palette of at most this many colours (2…256; imgproxy's `IMGPROXY_PNG_QUANTIZE`
    /// with `IMGPROXY_PNG_QUANTIZATION_COLORS`), median cut as GIF's, written at the fewest bits
    /// per index that hold it; nil keeps every colour. An image with partial transparency keeps
    /// RGBA, since one palette entry per alpha level would change its edges.
    public var paletteColors: Int?

    /// Makes a PNG encoder; `compressionLevel` is clamped to 0…12.
    public init(compressionLevel: Int = 7, interlaced: Bool = false, paletteColors: Int? = nil) {
        self.compressionLevel = min(max(compressionLevel, 0), 12)
        self.interlaced = interlaced
        self.paletteColors = paletteColors.map { min(max($0, 2), 256) }
    }

    /// The most memory ``encode(_:)`` touches beyond `image`, known before it starts: the
    /// filtered rows, then the run-length stream with the LZ77 stream or the pass judging it
    /// (together stopped at 1.5 times the rows' size). Pages of an output buffer past what is
    /// written are never touched. The compressors' own state is fixed (under 1 MB, as other
    /// encoders' is) and per pixel, as the server scales this, it rounds away.
    public func workingBytes(for image: Image) -> Int {
        let rows = image.height * (1 + image.width * (image.metadata.hasAlpha ? 4 : 3))
        return rows + Self.streamsRoom(rows: rows)
    }

    /// The most the compressed streams alive at once may write for `rows` bytes of filtered rows.
    private static func streamsRoom(rows: Int) -> Int { rows * 3 / 2 }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard image.width > 0, image.height > 0, image.width <= Int(Int32.max) / 4, image.height <= Int(Int32.max),
            image.pixels.count == image.width * image.height * 4
        else { throw encodingError(format, "cannot write \(image.width)×\(image.height)") }
        let palette = paletteColors.flatMap { Self.hasPartialAlpha(image) ? nil : GIFPalette(frames: [image.pixels], maxColors: $0) }
        let channels = image.metadata.hasAlpha ? 4 : 3
        let depth = palette.map { Self.bitDepth(colors: $0.count) } ?? 8
        let scanlines: [UInt8]
        if let palette {
            let indices = palette.indices(image.pixels)
            scanlines = passes(image).flatMap { pass in Self.packedRows(pass.take(indices, width: image.width, channels: 1), pass, depth: depth) }
        } else if interlaced {
            scanlines = passes(image).flatMap { pass in
                PNGRowFilter(width: pass.width, height: pass.height, channels: channels, filters: compressionLevel > 0)
                    .filter(pass.take(image.pixels, width: image.width, channels: 4))
            }
        } else {
            scanlines = PNGRowFilter(width: image.width, height: image.height, channels: channels, filters: compressionLevel > 0).filter(image.pixels)
        }
        let compressed = try stream(scanlines).data
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.reserveCapacity(compressed.count + compressed.count / Self.idatLength * 12 + 64)
        var header = Data()
        header.appendBigEndian(UInt32(image.width))
        header.appendBigEndian(UInt32(image.height))
        // Depth; colour type 3 (palette), 6 (RGBA) or 2 (RGB); deflate; adaptive filtering; interlace.
        header.append(contentsOf: [UInt8(depth), palette != nil ? 3 : channels == 4 ? 6 : 2, 0, 0, interlaced ? 1 : 0])
        Self.appendChunk("IHDR", header, to: &png)
        if let profile = image.metadata.colorProfile { Self.appendChunk("iCCP", try Self.iccpChunk(profile), to: &png) }
        if let palette {
            Self.appendChunk("PLTE", Data(palette.colors), to: &png)
            // tRNS: every entry opaque but the transparent one, which is the last.
            if let transparent = palette.transparentIndex { Self.appendChunk("tRNS", Data(repeating: 255, count: transparent) + [0], to: &png) }
        }
        if let exif = image.metadata.exif { Self.appendChunk("eXIf", exif, to: &png) }
        if let xmp = image.metadata.xmp {
            // iTXt: keyword, no compression, no language or translated keyword, the packet.
            Self.appendChunk("iTXt", Data("XML:com.adobe.xmp".utf8) + Data([0, 0, 0, 0, 0]) + xmp, to: &png)
        }
        var start = 0
        repeat {
            let end = min(start + Self.idatLength, compressed.count)
            Self.appendChunk("IDAT", compressed[start..<end], to: &png)
            start = end
        } while start < compressed.count
        Self.appendChunk("IEND", Data(), to: &png)
        return png
    }

    /// One reduced image of a PNG's interlacing: every `step`th column and row from `origin`.
    struct Pass {
        let x, y, xStep, yStep, width, height: Int

        /// The pass's pixels from `pixels`, an image `width` wide of `channels` bytes a pixel.
        func take(_ pixels: [UInt8], width fullWidth: Int, channels: Int) -> [UInt8] {
            if (x, y, xStep, yStep) == (0, 0, 1, 1) { return pixels }
            var out = [UInt8](repeating: 0, count: width * height * channels)
            for row in 0..<height {
                for column in 0..<width {
                    let from = ((y + row * yStep) * fullWidth + x + column * xStep) * channels
                    let to = (row * width + column) * channels
                    for channel in 0..<channels { out[to + channel] = pixels[from + channel] }
                }
            }
            return out
        }
    }

    /// The whole image, or Adam7's seven passes (those with no pixels left out), in file order.
    func passes(_ image: Image) -> [Pass] {
        guard interlaced else { return [Pass(x: 0, y: 0, xStep: 1, yStep: 1, width: image.width, height: image.height)] }
        let adam7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        return adam7.compactMap { x, y, xStep, yStep in
            let width = (image.width - x + xStep - 1) / xStep, height = (image.height - y + yStep - 1) / yStep
            return width > 0 && height > 0 ? Pass(x: x, y: y, xStep: xStep, yStep: yStep, width: width, height: height) : nil
        }
    }

    /// Palette indices as scanlines: filter byte 0 (none, as PNG advises for palettes), then the
    /// indices packed `depth` bits each, high bits first.
    private static func packedRows(_ indices: [UInt8], _ pass: Pass, depth: Int) -> [UInt8] {
        let rowBytes = (pass.width * depth + 7) / 8
        var out = [UInt8](repeating: 0, count: (rowBytes + 1) * pass.height)
        let perByte = 8 / depth
        for row in 0..<pass.height {
            let base = row * (rowBytes + 1) + 1
            for column in 0..<pass.width {
                let shift = (perByte - 1 - column % perByte) * depth
                out[base + column / perByte] |= indices[row * pass.width + column] << shift
            }
        }
        return out
    }

    /// The fewest bits per index (1, 2, 4 or 8) that hold `colors` entries.
    static func bitDepth(colors: Int) -> Int { colors <= 2 ? 1 : colors <= 4 ? 2 : colors <= 16 ? 4 : 8 }

    /// Whether any pixel is neither opaque nor fully transparent.
    private static func hasPartialAlpha(_ image: Image) -> Bool {
        guard image.metadata.hasAlpha else { return false }
        return image.pixels.withUnsafeBufferPointer { pixels in
            stride(from: 3, to: pixels.count, by: 4).contains { pixels[$0] != 0 && pixels[$0] != 255 }
        }
    }

    /// An `iCCP` chunk's data: a name, a zero, compression method 0 and the zlib-compressed profile.
    private static func iccpChunk(_ profile: ColorProfile) throws(ImagoError) -> Data {
        let bytes = [UInt8](profile.data)
        var length = compressBound(uLong(bytes.count))
        var compressed = [UInt8](repeating: 0, count: Int(length))
        guard compress2(&compressed, &length, bytes, uLong(bytes.count), 9) == Z_OK else {
            throw encodingError(.png, "cannot compress the colour profile")
        }
        var chunk = Data("ICC profile".utf8)
        chunk.append(contentsOf: [0, 0])
        chunk.append(contentsOf: compressed.prefix(Int(length)))
        return chunk
    }

    /// IDAT chunks of 8 KiB, as libpng writes: a reader that streams (PreviewDecoder, a
    /// browser) shows rows as each chunk completes; the cost is 12 bytes a chunk, 0.15%.
    private static let idatLength = 8 << 10

    /// How much smaller than a fast LZ77 pass (libdeflate level 1) the run-length stream must be
    /// for the rows to be taken as a photo's. Over the corpus' graphics and 100 photos, every
    /// image whose run-length stream came out under 0.93× of level 1's was also under level 7's
    /// (photos 0.86–0.92× of level 1, 0.92–0.98× of level 7), and every graphic that LZ77 writes
    /// smaller was above it.
    private static let photoRatio = 0.93

    /// How ``stream(_:)`` wrote a stream.
    enum Compression: Equatable { case stored, runLength, lz77 }

    /// The filtered rows as one zlib stream, and the compressor that wrote it: of two, the one
    /// that suits them. A photo's filtered rows are noise around zero with few repeats: zlib's run-length strategy
    /// (`Z_RLE`, matches at distance 1 only) writes them 2–8% smaller than libdeflate's LZ77 at
    /// level 7, in a quarter of the time. A graphic's rows repeat at longer distances (text,
    /// patterns, dithering), which only LZ77 finds: up to 1.8× smaller. So the run-length stream
    /// is made first and judged against a fast LZ77 pass; when that pass comes near it, LZ77 at
    /// ``compressionLevel`` writes the stream. Levels 8–12 compare both in full, for size.
    func stream(_ filtered: [UInt8]) throws(ImagoError) -> (data: Data, compression: Compression) {
        if compressionLevel == 0 { return (try Self.deflate(filtered, level: 0, capacity: nil) ?? Data(), .stored) }
        let runs = try Self.runLengthDeflate(filtered)
        // An LZ77 stream is kept only when smaller than the run-length one; the two together
        // write at most ``streamsRoom(rows:)``, which only rows near noise (a run-length stream
        // past three quarters of them) come near.
        let room = Self.streamsRoom(rows: filtered.count) - runs.count
        let lzRoom = min(runs.count - 1, room)
        if compressionLevel >= 8 {
            return try Self.deflate(filtered, level: compressionLevel, capacity: lzRoom).map { ($0, .lz77) } ?? (runs, .runLength)
        }
        // The fast pass only has to show whether it stays above runs / photoRatio: a buffer that
        // size answers without keeping more.
        let photoBound = min(Int(Double(runs.count) / Self.photoRatio), room)
        guard try Self.deflate(filtered, level: 1, capacity: photoBound) != nil else { return (runs, .runLength) }
        guard let lz = try Self.deflate(filtered, level: compressionLevel, capacity: lzRoom) else { return (runs, .runLength) }
        return (lz, .lz77)
    }

    /// `input` as a zlib stream by libdeflate at `level`; nil when it does not fit in `capacity`
    /// bytes (nil capacity: the bound, which always fits). Pages past what is written are never
    /// touched, so the bound costs address space only.
    static func deflate(_ input: [UInt8], level: Int, capacity: Int?) throws(ImagoError) -> Data? {
        guard let compressor = libdeflate_alloc_compressor(Int32(level)) else { throw encodingError(.png, "out of memory") }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_zlib_compress_bound(compressor, input.count)
        let room = min(capacity ?? bound, bound)
        guard room > 0 else { return nil }
        var compressed = Data(count: room)
        let written = input.withUnsafeBytes { input in
            compressed.withUnsafeMutableBytes { output in
                libdeflate_zlib_compress(compressor, input.baseAddress, input.count, output.baseAddress, room)
            }
        }
        guard written > 0 else {
            // The bound always suffices: 0 with it would mean libdeflate failed.
            if room == bound { throw encodingError(.png, "compression failed") }
            return nil
        }
        compressed.count = written
        return compressed
    }

    /// `input` as a zlib stream by zlib's run-length strategy (`Z_RLE`).
    static func runLengthDeflate(_ input: [UInt8]) throws(ImagoError) -> Data {
        var stream = z_stream()
        guard imago_deflate_init_rle(&stream) == Z_OK else { throw encodingError(.png, "out of memory") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var compressed = Data(count: bound)
        let status = input.withUnsafeBufferPointer { input in
            compressed.withUnsafeMutableBytes { output in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(output.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        // deflateBound always suffices for one Z_FINISH call.
        guard status == Z_STREAM_END else { throw encodingError(.png, "compression failed") }
        compressed.count = Int(stream.total_out)
        return compressed
    }

    /// Length, type, data, and the CRC-32 of type and data.
    private static func appendChunk(_ type: String, _ data: Data, to png: inout Data) {
        let typeBytes = Array(type.utf8)
        png.appendBigEndian(UInt32(data.count))
        png.append(contentsOf: typeBytes)
        png.append(data)
        let typeCRC = typeBytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
        // zlib's crc32 answers its initial value for a null buffer, so an empty chunk keeps the type's.
        let crc = data.isEmpty ? typeCRC : data.withUnsafeBytes { crc32(typeCRC, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32($0.count)) }
        png.appendBigEndian(UInt32(truncatingIfNeeded: crc))
    }
}

extension Data {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }
}
