import Foundation

/// Decodes Windows icons and cursors (ICO, CUR) in safe Swift. A file holds several images; the
/// decoder takes the smallest that covers ``DecodingOptions/targetSize`` (the largest without one,
/// the deepest colour among equals). An entry is a PNG, decoded by ``PNGDecoder``, or a BMP without
/// its file header, decoded by ``BMPDecoder``, whose 1-bit AND mask makes pixels transparent.
public struct ICODecoder: ImageDecoding {
    public let format = ImageFormat.ico

    /// Makes an ICO/CUR decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        guard data.count >= 6 else { return false }
        let bytes = [UInt8](data.prefix(6))
        let type = bytes[2], count = Int(bytes[4]) | Int(bytes[5]) << 8
        return bytes[0] == 0 && bytes[1] == 0 && (type == 1 || type == 2) && bytes[3] == 0 && count > 0
    }

    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        let bytes = [UInt8](data)
        guard let entry = try? Self.chosenEntry(bytes, options: options) else { return nil }
        if entry.isPNG { return PNGDecoder().estimate(Data(bytes[entry.range]), options: options) }
        return .buffers(1, width: entry.width, height: entry.height, options: options)
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let bytes = [UInt8](data)
        let entry = try Self.chosenEntry(bytes, options: options)
        var image: Image
        if entry.isPNG {
            image = try PNGDecoder().decode(Data(bytes[entry.range]), options: options)
        } else {
            image = try Self.decodeBitmap(Array(bytes[entry.range]), options: options)
        }
        image.metadata.format = .ico
        return image
    }

    /// One image of the directory, with the size its own header gives (the directory's byte for
    /// 256 is 0, and some writers put wrong sizes there).
    struct Entry {
        var range: Range<Int>
        var isPNG: Bool
        var width: Int
        var height: Int
        var bitsPerPixel: Int

        /// Width × height, for ordering only: a PNG's sides may each be up to 2^32 - 1.
        var area: Int {
            let (area, overflow) = width.multipliedReportingOverflow(by: height)
            return overflow ? Int.max : area
        }
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Every entry of the directory, each inside the file with a header that can be read.
    static func entries(_ bytes: [UInt8]) throws(ImagoError) -> [Entry] {
        guard bytes.count >= 6, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 || bytes[2] == 2, bytes[3] == 0 else {
            throw ImagoError.invalid(.ico, "not an icon directory")
        }
        let count = Int(bytes[4]) | Int(bytes[5]) << 8
        guard count > 0 else { throw ImagoError.invalid(.ico, "no images") }
        guard bytes.count >= 6 + count * 16 else { throw ImagoError.invalid(.ico, "directory cut short") }
        var entries: [Entry] = []
        for index in 0..<count {
            let base = 6 + index * 16
            let size = Int(BMPDecoder.Header.field(bytes, base + 8))
            let offset = Int(BMPDecoder.Header.field(bytes, base + 12))
            // Both are below 2^32, so the sum cannot overflow. A directory that points outside the
            // file means the file is damaged: refuse it rather than guess.
            guard offset >= 6 + count * 16, size >= 16, offset + size <= bytes.count else {
                throw ImagoError.invalid(.ico, "image \(index) lies outside the file")
            }
            let data = bytes[offset..<offset + size]
            if data.starts(with: pngSignature) {
                guard size >= 24 else { throw ImagoError.invalid(.ico, "image \(index) is a PNG cut short") }
                let width = Int(BMPDecoder.Header.field(bytes, offset + 16, .bigEndian))
                let height = Int(BMPDecoder.Header.field(bytes, offset + 20, .bigEndian))
                entries.append(Entry(range: offset..<offset + size, isPNG: true, width: width, height: height, bitsPerPixel: 32))
            } else {
                // A BITMAPINFOHEADER whose height counts the colour rows and the mask's rows.
                guard BMPDecoder.Header.field(bytes, offset) >= 40 else { throw ImagoError.invalid(.ico, "image \(index) has no bitmap header") }
                let width = Int(Int32(bitPattern: BMPDecoder.Header.field(bytes, offset + 4)))
                let height = Int(Int32(bitPattern: BMPDecoder.Header.field(bytes, offset + 8))) / 2
                let bits = Int(BMPDecoder.Header.field(bytes, offset + 14, width: 2))
                entries.append(Entry(range: offset..<offset + size, isPNG: false, width: width, height: height, bitsPerPixel: bits))
            }
        }
        return entries
    }

    /// The smallest entry that covers the target size, else the largest; the deepest among equals.
    static func chosenEntry(_ bytes: [UInt8], options: DecodingOptions) throws(ImagoError) -> Entry {
        let entries = try entries(bytes)
        let largestFirst = entries.sorted { ($0.area, $0.bitsPerPixel) > ($1.area, $1.bitsPerPixel) }
        guard let target = options.targetSize else { return largestFirst[0] }
        let covering = largestFirst.filter { entry in
            switch options.targetMode {
            case .fill: entry.width >= target.width && entry.height >= target.height
            case .fit: entry.width >= target.width || entry.height >= target.height
            }
        }
        guard let smallest = covering.last else { return largestFirst[0] }
        // The deepest colour among the entries of the smallest covering size.
        return covering.first { $0.width == smallest.width && $0.height == smallest.height } ?? smallest
    }

    /// A BMP entry: the DIB given a file header so that ``BMPDecoder`` reads it, the height halved,
    /// then the AND mask applied.
    static func decodeBitmap(_ dib: [UInt8], options: DecodingOptions) throws(ImagoError) -> Image {
        guard dib.count >= 40 else { throw ImagoError.invalid(.ico, "bitmap header cut short") }
        let headerSize = Int(BMPDecoder.Header.field(dib, 0))
        let bits = Int(BMPDecoder.Header.field(dib, 14, width: 2))
        let compression = BMPDecoder.Header.field(dib, 16)
        let colorsUsed = Int(BMPDecoder.Header.field(dib, 32))
        guard headerSize >= 40, headerSize <= dib.count else { throw ImagoError.invalid(.ico, "bitmap header of \(headerSize) bytes") }
        let paletteEntries = bits <= 8 ? (colorsUsed > 0 && colorsUsed < 1 << bits ? colorsUsed : 1 << bits) : 0
        let masks = headerSize == 40 && compression == 3 ? 12 : 0
        let pixelOffset = 14 + headerSize + masks + paletteEntries * 4
        var file: [UInt8] = [UInt8(ascii: "B"), UInt8(ascii: "M")] + [UInt8](repeating: 0, count: 8)
        file += littleEndian(UInt32(truncatingIfNeeded: pixelOffset))
        file += dib
        let storedHeight = Int32(bitPattern: BMPDecoder.Header.field(dib, 8))
        guard storedHeight > 0, storedHeight % 2 == 0 else { throw ImagoError.invalid(.ico, "bitmap height \(storedHeight) is not two images' worth") }
        file.replaceSubrange(22..<26, with: littleEndian(UInt32(storedHeight / 2)))

        var header = try BMPDecoder.Header(file)
        guard !header.compression.isRLE else { throw ImagoError.invalid(.ico, "compressed icon bitmaps are not supported") }
        // An icon's 32-bit pixels are BGRA though the header says BI_RGB.
        if header.bitsPerPixel == 32, header.compression == .none { header.masks.alpha = 0xFF00_0000 }
        var pixels = try BMPDecoder.pixels(file, header: header, options: options)

        let maskOffset = header.pixelOffset + BMPDecoder.rowStride(header) * header.height
        let maskStride = (header.width + 31) / 32 * 4
        var usesMask = !header.hasAlpha
        if header.hasAlpha, !stride(from: 3, to: pixels.count, by: 4).contains(where: { pixels[$0] != 0 }) {
            // Older 32-bit icons leave every alpha byte 0 and rely on the mask.
            for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 }
            usesMask = true
        }
        if usesMask {
            // The pixel rows passed their bounds check, so maskOffset ≤ file.count.
            guard maskStride * header.height <= file.count - maskOffset else { throw ImagoError.invalid(.ico, "mask cut short") }
            for stored in 0..<header.height {
                let row = header.height - 1 - stored
                for column in 0..<header.width {
                    let byte = file[maskOffset + stored * maskStride + column / 8]
                    if byte & (0x80 >> UInt8(column % 8)) != 0 { pixels[(row * header.width + column) * 4 + 3] = 0 }
                }
            }
        }
        return Image(still: pixels, width: header.width, height: header.height, format: .ico, hasAlpha: true)
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
    }
}
