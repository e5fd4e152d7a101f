import CSPNG
import Foundation

/// Decodes PNG with libspng: every color type and bit depth, palettes, tRNS transparency, 16-bit
/// to 8-bit, Adam7 interlacing; colour from `iCCP`, `sRGB` or `gAMA`/`cHRM` (16-bit images converted
/// before they become 8-bit). The declared size is checked against the limits before any pixel
/// buffer exists; CRC and zlib errors are errors, and so are a stream that ends before IEND and
/// palette indices past the palette (libspng accepts both; browsers' decoders do not).
public struct PNGDecoder: ImageDecoding {
    public let format = ImageFormat.png
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Makes a PNG decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        data.starts(with: Self.signature)
    }

    /// The RGBA output and, for palette images, their indices: IHDR's size, read directly.
    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        guard data.count >= 24 else { return DecodeEstimate(width: 0, height: 0, bytes: 0) }
        let header = Array(data.prefix(24))
        let width = header.integer(4, at: 16, .bigEndian) ?? 0, height = header.integer(4, at: 20, .bigEndian) ?? 0
        var estimate = DecodeEstimate.buffers(1, width: width, height: height, options: options)
        estimate.bytes += estimate.bytes / 4
        return estimate
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        guard let context = spng_ctx_new(0) else { throw ImagoError.invalid(.png, "cannot create a decoder") }
        defer { spng_ctx_free(context) }
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(ImagoError) in try decode(bytes, context: context, options: options) }
        }
        return try result.get()
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, context: OpaquePointer, options: DecodingOptions) throws(ImagoError) -> Image {
        let side = UInt32(clamping: options.maxSide)
        try Self.check(spng_set_image_limits(context, side, side))
        // Ancillary chunks are small; a 64 MB cap keeps a hostile file from making them large.
        try Self.check(spng_set_chunk_limits(context, 64 << 20, 64 << 20))
        try Self.check(spng_set_png_buffer(context, bytes.baseAddress, bytes.count))
        var header = spng_ihdr()
        let headerStatus = spng_get_ihdr(context, &header)
        if headerStatus == Int32(SPNG_EWIDTH.rawValue) || headerStatus == Int32(SPNG_EHEIGHT.rawValue)
            || headerStatus == Int32(SPNG_EUSER_WIDTH.rawValue) || headerStatus == Int32(SPNG_EUSER_HEIGHT.rawValue)
        {
            // libspng refuses a side of 0 as well as one over the limit: say which it was.
            let width = Int(header.width), height = Int(header.height)
            try options.check(width: width, height: height)
            throw ImagoError(.imageTooLarge(width: width, height: height, limit: .side(min(options.maxSide, Int(UInt32.max)))), url: nil, stage: .decoding)
        }
        try Self.check(headerStatus)
        let width = Int(header.width), height = Int(header.height)
        try options.check(width: width, height: height)
        try options.checkMemory(1, width: width, height: height)
        let colorType = Int(header.color_type)
        let color = DecodeColor(stated: Self.colorProfile(context), pixels: Self.pixelKind(header), bitsPerSample: Int(header.bit_depth), options: options)
        var pixels: [UInt8]
        if colorType == Int(SPNG_COLOR_TYPE_INDEXED.rawValue) {
            pixels = try Self.decodeIndexed(context, width: width, height: height, bitDepth: Int(header.bit_depth))
            color.apply(&pixels, width: width, height: height)
        } else if color.wantsSixteenBits {
            // The conversion is made from 16 bits, before they are rounded to 8.
            try options.checkMemory(3, width: width, height: height)
            let wide = try Self.decode(context, format: Int32(SPNG_FMT_RGBA16.rawValue), expectedSize: width * height * 8)
            let converted = wide.withUnsafeBytes { bytes in
                Result { () throws(ImagoError) in try color.apply(rgba16: bytes.bindMemory(to: UInt16.self), width: width, height: height) }
            }
            pixels = try converted.get()
        } else {
            pixels = try Self.decode(context, format: Int32(SPNG_FMT_RGBA8.rawValue), expectedSize: width * height * 4)
            color.apply(&pixels, width: width, height: height)
        }
        // Read the chunks after the image data, so a stream cut before IEND is an error; libspng
        // accepts an IEND whose CRC is cut off, so check that the whole chunk is there.
        try Self.check(spng_decode_chunks(context))
        guard Self.hasCompleteEnd(bytes) else { throw ImagoError.invalid(.png, "data ends inside the IEND chunk") }
        var transparency = spng_trns()
        let hasAlpha =
            colorType == Int(SPNG_COLOR_TYPE_GRAYSCALE_ALPHA.rawValue) || colorType == Int(SPNG_COLOR_TYPE_TRUECOLOR_ALPHA.rawValue)
            || spng_get_trns(context, &transparency) == 0
        var metadata = ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: hasAlpha)
        color.record(in: &metadata)
        metadata.bitsPerSample = Int(header.bit_depth)
        if options.metadataHandling != .strip {
            (metadata.exif, metadata.xmp) = options.keptMetadata(exif: Self.exif(context), xmp: Self.xmp(context), turned: false)
        }
        return Image(width: width, height: height, frames: [Image.Frame(pixels: pixels)], metadata: metadata)
    }

    /// The `eXIf` chunk.
    private static func exif(_ context: OpaquePointer) -> Data? {
        var exif = spng_exif()
        guard spng_get_exif(context, &exif) == 0, let bytes = exif.data, exif.length > 0 else { return nil }
        return Data(bytes: bytes, count: exif.length)
    }

    /// The `iTXt` chunk `XML:com.adobe.xmp`.
    private static func xmp(_ context: OpaquePointer) -> Data? {
        var count: UInt32 = 0
        guard spng_get_text(context, nil, &count) == 0, count > 0, count <= 1024 else { return nil }
        var texts = [spng_text](repeating: spng_text(), count: Int(count))
        guard spng_get_text(context, &texts, &count) == 0 else { return nil }
        for text in texts {
            let keyword = withUnsafeBytes(of: text.keyword) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if keyword == "XML:com.adobe.xmp", let bytes = text.text, text.length > 0 { return Data(bytes: bytes, count: text.length) }
        }
        return nil
    }

    /// The colour the PNG states: `iCCP`; else none for `sRGB`; else a profile built from
    /// `gAMA` and `cHRM` (libvips #1238 ignored them), as the PNG specification orders them.
    /// Gray for the gray colour types (with or without alpha), RGB for the others.
    private static func pixelKind(_ header: spng_ihdr) -> ColorProfile.Kind {
        let type = Int(header.color_type)
        let isGray = type == Int(SPNG_COLOR_TYPE_GRAYSCALE.rawValue) || type == Int(SPNG_COLOR_TYPE_GRAYSCALE_ALPHA.rawValue)
        return isGray ? .gray : .rgb
    }

    private static func colorProfile(_ context: OpaquePointer) -> ColorProfile? {
        var icc = spng_iccp()
        if spng_get_iccp(context, &icc) == 0, let bytes = icc.profile, icc.profile_len > 0 {
            return ColorProfile(iccData: Data(bytes: bytes, count: icc.profile_len))
        }
        var intent: UInt8 = 0
        if spng_get_srgb(context, &intent) == 0 { return nil }
        var gamma: UInt32 = 0
        let hasGamma = spng_get_gama_int(context, &gamma) == 0
        var chrm = spng_chrm_int()
        let hasChromaticities = spng_get_chrm_int(context, &chrm) == 0
        func point(_ x: UInt32, _ y: UInt32) -> ColorProfile.Chromaticity { .init(x: Double(x) / 100_000, y: Double(y) / 100_000) }
        let chromaticities =
            hasChromaticities
            ? (
                white: point(chrm.white_point_x, chrm.white_point_y), red: point(chrm.red_x, chrm.red_y), green: point(chrm.green_x, chrm.green_y),
                blue: point(chrm.blue_x, chrm.blue_y)
            ) : nil
        return ColorProfile.png(gamma: hasGamma ? gamma : nil, chromaticities: chromaticities)
    }

    /// The rows of a non-interlaced PNG decodable from the bytes so far (the rest transparent), in
    /// the colour the decode gives, for previews; nil when the header is incomplete, the image is interlaced or over the limits.
    /// A non-interlaced PNG's rows decodable from the bytes so far (the rest transparent); `reached` counts rows.
    public func preview(of data: Data, after shown: Int, options: DecodingOptions) -> PartialImage? {
        partialImage(data, options: options).flatMap { $0.reached > shown ? $0 : nil }
    }

    func partialImage(_ data: Data, options: DecodingOptions) -> PartialImage? {
        guard let context = spng_ctx_new(0) else { return nil }
        defer { spng_ctx_free(context) }
        return data.withUnsafeBytes { bytes -> PartialImage? in
            let side = UInt32(clamping: options.maxSide)
            guard spng_set_image_limits(context, side, side) == 0, spng_set_png_buffer(context, bytes.baseAddress, bytes.count) == 0 else { return nil }
            var header = spng_ihdr()
            guard spng_get_ihdr(context, &header) == 0, header.interlace_method == 0 else { return nil }
            let width = Int(header.width), height = Int(header.height)
            guard (try? options.check(width: width, height: height)) != nil else { return nil }
            // Read before the decode starts, as the whole decode reads it: the chunks before the image
            // data, iCCP among them, have arrived.
            let stated = Self.colorProfile(context)
            let format = Int32(SPNG_FMT_RGBA8.rawValue)
            let flags = Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)
            guard spng_decode_image(context, nil, 0, format, flags) == 0 else { return nil }
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            var rows = 0
            pixels.withUnsafeMutableBytes { out in
                while rows < height, spng_decode_row(context, out.baseAddress! + rows * width * 4, width * 4) == 0 { rows += 1 }
            }
            guard rows > 0 else { return nil }
            // The rows so far in the colour the whole image will have (8-bit: a preview need not be exact).
            let color = DecodeColor(stated: stated, pixels: Self.pixelKind(header), options: options)
            color.apply(&pixels, width: width, height: height)
            var metadata = ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: true)
            color.record(in: &metadata)
            return PartialImage(image: Image(width: width, height: height, frames: [Image.Frame(pixels: pixels)], metadata: metadata), reached: rows)
        }
    }

    /// Decodes the whole image in `format` into a buffer of `expectedSize` bytes.
    private static func decode(_ context: OpaquePointer, format: Int32, expectedSize: Int) throws(ImagoError) -> [UInt8] {
        var size = 0
        try check(spng_decoded_image_size(context, format, &size))
        guard size == expectedSize else { throw ImagoError.invalid(.png, "unexpected decoded size \(size)") }
        let fill = { (out: UnsafeMutableBufferPointer<UInt8>) -> Result<Void, ImagoError> in
            let status = spng_decode_image(context, out.baseAddress, out.count, format, Int32(SPNG_DECODE_TRNS.rawValue))
            return status == 0 ? .success(()) : .failure(ImagoError.invalid(.png, String(cString: spng_strerror(status))))
        }
        guard format == Int32(SPNG_FMT_PNG.rawValue) else { return try makePixelBuffer(count: size, fill) }
        // Packed sub-byte rows are assembled by OR-ing bits into the output: it must start zeroed.
        var packed = [UInt8](repeating: 0, count: size)
        try packed.withUnsafeMutableBufferPointer { fill($0) }.get()
        return packed
    }

    /// Decodes palette indices and expands them through PLTE and tRNS, refusing indices past the
    /// palette's end.
    private static func decodeIndexed(_ context: OpaquePointer, width: Int, height: Int, bitDepth: Int) throws(ImagoError) -> [UInt8] {
        let rowBytes = (width * bitDepth + 7) / 8
        let indices = try decode(context, format: Int32(SPNG_FMT_PNG.rawValue), expectedSize: rowBytes * height)
        var palette = spng_plte()
        try check(spng_get_plte(context, &palette))
        var transparency = spng_trns()
        let hasTransparency = spng_get_trns(context, &transparency) == 0
        // RGBA for each index; indices without a palette entry are marked invalid.
        var table = [UInt32?](repeating: nil, count: 256)
        withUnsafeBytes(of: palette.entries) { entries in
            withUnsafeBytes(of: transparency.type3_alpha) { alphas in
                for index in 0..<Int(min(palette.n_entries, 256)) {
                    let alpha = hasTransparency && index < Int(transparency.n_type3_entries) ? alphas[index] : 255
                    let entry = entries.baseAddress!.advanced(by: index * 4)
                    table[index] =
                        UInt32(entry.load(fromByteOffset: 0, as: UInt8.self))
                        | UInt32(entry.load(fromByteOffset: 1, as: UInt8.self)) << 8
                        | UInt32(entry.load(fromByteOffset: 2, as: UInt8.self)) << 16
                        | UInt32(alpha) << 24
                }
            }
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let perByte = 8 / bitDepth
        let mask = (1 << bitDepth) - 1
        var outOfRange = false
        pixels.withUnsafeMutableBytes { out in
            let out = out.bindMemory(to: UInt32.self)
            for y in 0..<height {
                for x in 0..<width {
                    let byte = Int(indices[y * rowBytes + x / perByte])
                    let shift = 8 - bitDepth * (x % perByte + 1)
                    guard let rgba = table[(byte >> shift) & mask] else {
                        outOfRange = true
                        return
                    }
                    out[y * width + x] = UInt32(littleEndian: rgba)
                }
            }
        }
        if outOfRange { throw ImagoError.invalid(.png, "palette index out of range") }
        return pixels
    }

    /// Whether the bytes hold a whole IEND chunk: length 0, type, and its 4 CRC bytes.
    private static func hasCompleteEnd(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let end: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44]
        var start = bytes.count - end.count
        while start >= 8 {
            if bytes[start] == 0, bytes[start + 4] == 0x49, bytes[start..<(start + end.count)].elementsEqual(end) {
                return start + end.count + 4 <= bytes.count
            }
            start -= 1
        }
        return false
    }

    private static func check(_ status: Int32) throws(ImagoError) {
        guard status != 0 else { return }
        throw ImagoError.invalid(.png, String(cString: spng_strerror(status)))
    }

}
