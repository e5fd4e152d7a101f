import Foundation

/// Decodes Truevision TGA in safe Swift: true-colour (15, 16, 24, 32 bits), grayscale (8 bits, 16
/// with alpha) and colour-mapped (8-bit indices into 15-, 16-, 24- or 32-bit entries) images, raw or
/// run-length encoded (runs may cross rows), in any of the four origins. TGA has no magic number, so
/// the bytes are recognised only when the header is consistent and the file long enough for it (or
/// ends with TGA 2's footer); other decoders are asked first. Sizes are checked before allocation.
public struct TGADecoder: ImageDecoding {
    public let format = ImageFormat.tga

    /// Makes a TGA decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        guard let header = try? Header(Array(data.prefix(18))) else { return false }
        if data.count >= 26, data.suffix(18).elementsEqual(Array("TRUEVISION-XFILE.".utf8) + [0]) { return true }
        // Without the footer, a raw image must hold all its pixels; an RLE one at least a packet per row.
        let body = data.count - header.pixelOffset
        guard body > 0 else { return false }
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        if header.isRLE { return !overflow && body >= header.height }
        return !overflow && pixels <= Int.max / 4 && body >= pixels * header.bytesPerPixel
    }

    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        guard let header = try? Header(Array(data.prefix(18))) else { return nil }
        return .buffers(1, width: header.width, height: header.height, options: options)
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let bytes = [UInt8](data)
        let header = try Header(bytes)
        var pixels = try options.stillImageBuffer(width: header.width, height: header.height, fill: 0)
        let palette = try header.palette(bytes)
        let pixelCount = header.width * header.height
        var offset = header.pixelOffset
        var written = 0
        func read() throws(ImagoError) -> UInt32 {
            let size = header.bytesPerPixel
            guard offset <= bytes.count - size else { throw ImagoError.invalid(.tga, "pixel data cut short") }
            defer { offset += size }
            return header.color(bytes, at: offset, palette: palette)
        }
        func store(_ color: UInt32) {
            // Stored order: rows from the bottom unless the top-origin bit is set, columns from the
            // left unless the right-origin bit is.
            let storedRow = written / header.width, storedColumn = written % header.width
            let row = header.topOrigin ? storedRow : header.height - 1 - storedRow
            let column = header.rightOrigin ? header.width - 1 - storedColumn : storedColumn
            let index = (row * header.width + column) * 4
            pixels[index] = UInt8(truncatingIfNeeded: color >> 16)
            pixels[index + 1] = UInt8(truncatingIfNeeded: color >> 8)
            pixels[index + 2] = UInt8(truncatingIfNeeded: color)
            pixels[index + 3] = UInt8(truncatingIfNeeded: color >> 24)
            written += 1
        }
        if header.isRLE {
            while written < pixelCount {
                guard offset < bytes.count else { throw ImagoError.invalid(.tga, "RLE data cut short") }
                let packet = Int(bytes[offset])
                offset += 1
                let count = min((packet & 0x7F) + 1, pixelCount - written)
                if packet & 0x80 != 0 {
                    let color = try read()
                    for _ in 0..<count { store(color) }
                } else {
                    for _ in 0..<count { store(try read()) }
                }
            }
        } else {
            for _ in 0..<pixelCount { store(try read()) }
        }
        return Image(still: pixels, width: header.width, height: header.height, format: .tga, hasAlpha: header.hasAlpha)
    }

    /// What the 18-byte header says.
    struct Header {
        enum Kind { case colorMapped, trueColor, grayscale }

        var kind = Kind.trueColor
        var isRLE = false
        var width = 0
        var height = 0
        var pixelDepth = 0
        var alphaBits = 0
        var topOrigin = false
        var rightOrigin = false
        var colorMapFirst = 0
        var colorMapLength = 0
        var colorMapEntrySize = 0
        var colorMapOffset = 0
        var pixelOffset = 0

        var bytesPerPixel: Int { (pixelDepth + 7) / 8 }
        var hasAlpha: Bool {
            switch kind {
            case .colorMapped: colorMapEntrySize == 32 || (colorMapEntrySize == 16 && alphaBits > 0)
            case .trueColor: pixelDepth == 32 ? alphaBits > 0 : pixelDepth == 16 && alphaBits > 0
            case .grayscale: pixelDepth == 16
            }
        }

        init(_ bytes: [UInt8]) throws(ImagoError) {
            guard bytes.count >= 18 else { throw ImagoError.invalid(.tga, "header cut short") }
            let idLength = Int(bytes[0])
            let colorMapType = bytes[1]
            switch bytes[2] {
            case 1, 9: kind = .colorMapped
            case 2, 10: kind = .trueColor
            case 3, 11: kind = .grayscale
            default: throw ImagoError.invalid(.tga, "image type \(bytes[2]) not supported")
            }
            isRLE = bytes[2] >= 9
            guard colorMapType <= 1, (kind == .colorMapped) == (colorMapType == 1) else { throw ImagoError.invalid(.tga, "colour map type \(colorMapType)") }
            colorMapFirst = Int(bytes[3]) | Int(bytes[4]) << 8
            colorMapLength = Int(bytes[5]) | Int(bytes[6]) << 8
            colorMapEntrySize = Int(bytes[7])
            width = Int(bytes[12]) | Int(bytes[13]) << 8
            height = Int(bytes[14]) | Int(bytes[15]) << 8
            pixelDepth = Int(bytes[16])
            alphaBits = Int(bytes[17] & 0x0F)
            rightOrigin = bytes[17] & 0x10 != 0
            topOrigin = bytes[17] & 0x20 != 0
            guard width > 0, height > 0 else { throw ImagoError.invalid(.tga, "empty image \(width)×\(height)") }
            switch kind {
            case .colorMapped:
                guard pixelDepth == 8, [15, 16, 24, 32].contains(colorMapEntrySize), colorMapLength > 0 else {
                    throw ImagoError.invalid(.tga, "colour map of \(colorMapEntrySize)-bit entries for \(pixelDepth)-bit indices")
                }
            case .trueColor:
                guard [15, 16, 24, 32].contains(pixelDepth) else { throw ImagoError.invalid(.tga, "\(pixelDepth) bits per pixel") }
            case .grayscale:
                guard pixelDepth == 8 || pixelDepth == 16 else { throw ImagoError.invalid(.tga, "\(pixelDepth)-bit grayscale") }
            }
            colorMapOffset = 18 + idLength
            // A colour map may also be present, and skipped, in a true-colour image.
            let mapBytes = colorMapType == 1 ? colorMapLength * ((colorMapEntrySize + 7) / 8) : 0
            pixelOffset = colorMapOffset + mapBytes
        }

        func palette(_ bytes: [UInt8]) throws(ImagoError) -> [UInt32] {
            guard kind == .colorMapped else { return [] }
            let size = (colorMapEntrySize + 7) / 8
            guard pixelOffset <= bytes.count else { throw ImagoError.invalid(.tga, "colour map cut short") }
            return (0..<colorMapLength).map { Self.trueColor(bytes, at: colorMapOffset + $0 * size, depth: colorMapEntrySize, alphaBits: alphaBits) }
        }

        /// ARGB of the pixel at `offset` (its bytes are known to be there).
        func color(_ bytes: [UInt8], at offset: Int, palette: [UInt32]) -> UInt32 {
            switch kind {
            case .colorMapped:
                let index = Int(bytes[offset]) - colorMapFirst
                return index >= 0 && index < palette.count ? palette[index] : 0xFF00_0000
            case .grayscale:
                let gray = UInt32(bytes[offset])
                let alpha: UInt32 = pixelDepth == 16 ? UInt32(bytes[offset + 1]) : 255
                return alpha << 24 | gray << 16 | gray << 8 | gray
            case .trueColor:
                return Self.trueColor(bytes, at: offset, depth: pixelDepth, alphaBits: alphaBits)
            }
        }

        static func trueColor(_ bytes: [UInt8], at offset: Int, depth: Int, alphaBits: Int) -> UInt32 {
            switch depth {
            case 15, 16:
                let value = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
                let red = (value >> 10) & 0x1F, green = (value >> 5) & 0x1F, blue = value & 0x1F
                let alpha: UInt32 = depth == 16 && alphaBits > 0 ? (value & 0x8000 != 0 ? 255 : 0) : 255
                return alpha << 24 | scale5(red) << 16 | scale5(green) << 8 | scale5(blue)
            case 24:
                return 0xFF00_0000 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset])
            default:
                let alpha = alphaBits > 0 ? UInt32(bytes[offset + 3]) : 255
                return alpha << 24 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset])
            }
        }

        /// A 5-bit channel to 8 bits, rounded.
        static func scale5(_ value: UInt32) -> UInt32 { (value * 255 + 15) / 31 }
    }
}
