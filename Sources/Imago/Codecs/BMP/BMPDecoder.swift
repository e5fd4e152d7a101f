import Foundation

/// Decodes BMP in safe Swift: OS/2 core headers and Windows INFO, V4 and V5 headers; 1, 4 and 8
/// bits through a palette, 16 and 32 bits through bit-field masks (5-5-5 and 8-8-8 by default, alpha
/// only when a mask says so), 24 bits; RLE8 and RLE4; bottom-up and top-down rows. Every offset is
/// checked before it is read and the size against the limits before pixels are allocated; pixels an
/// RLE stream leaves unset are transparent black, as browsers show them. A V5 header's embedded
/// ICC profile is honoured.
public struct BMPDecoder: ImageDecoding {
    public let format = ImageFormat.bmp

    /// Makes a BMP decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        data.count >= 18 && data[data.startIndex] == UInt8(ascii: "B") && data[data.startIndex + 1] == UInt8(ascii: "M")
    }

    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        guard let header = try? Header(Array(data.prefix(256))) else { return nil }
        return .buffers(1, width: header.width, height: header.height, options: options)
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let bytes = [UInt8](data)
        let header = try Header(bytes)
        var pixels = try Self.pixels(bytes, header: header, options: options)
        let color = DecodeColor(stated: Self.embeddedProfile(bytes, header: header), pixels: .rgb, options: options)
        color.apply(&pixels, width: header.width, height: header.height)
        var image = Image(still: pixels, width: header.width, height: header.height, format: .bmp, hasAlpha: header.hasAlpha || header.compression.isRLE)
        color.record(in: &image.metadata)
        return image
    }

    /// A V5 header's embedded profile (`bV5CSType` 'MBED'; its offset counts from the header's
    /// start). Linked profiles name a file on the writer's machine: never read.
    static func embeddedProfile(_ bytes: [UInt8], header: Header) -> ColorProfile? {
        guard header.headerSize >= 124, bytes.count >= 14 + 124, Header.field(bytes, 14 + 56) == 0x4D42_4544 else { return nil }
        let offset = 14 + Int(Header.field(bytes, 14 + 112)), size = Int(Header.field(bytes, 14 + 116))
        guard size > 0, offset <= bytes.count, size <= bytes.count - offset else { return nil }
        return ColorProfile(iccData: Data(bytes[offset..<(offset + size)]))
    }

    /// The RGBA pixels of a BMP file whose header has been read; ICO entries come here too.
    static func pixels(_ bytes: [UInt8], header: Header, options: DecodingOptions) throws(ImagoError) -> [UInt8] {
        var pixels = try options.stillImageBuffer(width: header.width, height: header.height, fill: 0)
        let palette = try header.palette(bytes)
        switch header.compression {
        case .rle8, .rle4:
            try decodeRLE(bytes, header: header, palette: palette, into: &pixels)
        case .none, .bitFields:
            try decodeRows(bytes, header: header, palette: palette, into: &pixels)
        }
        return pixels
    }

    /// Bytes in one stored row of `header`'s uncompressed pixels, padded to four bytes.
    static func rowStride(_ header: Header) -> Int {
        // bitsPerPixel ≤ 32 and width ≤ maxSide, so this cannot overflow.
        (header.bitsPerPixel * header.width + 31) / 32 * 4
    }

    /// The row in `pixels` of a stored row: BMPs are stored bottom-up unless the height is negative.
    private static func outputRow(_ stored: Int, header: Header) -> Int {
        header.topDown ? stored : header.height - 1 - stored
    }

    private static func decodeRows(_ bytes: [UInt8], header: Header, palette: [UInt32], into pixels: inout [UInt8]) throws(ImagoError) {
        let stride = rowStride(header)
        let (size, overflow) = stride.multipliedReportingOverflow(by: header.height)
        guard !overflow, header.pixelOffset <= bytes.count, size <= bytes.count - header.pixelOffset else {
            throw ImagoError.invalid(.bmp, "pixel data cut short")
        }
        let masks = header.masks
        for stored in 0..<header.height {
            let rowStart = header.pixelOffset + stored * stride
            let outputStart = Self.outputRow(stored, header: header) * header.width * 4
            for column in 0..<header.width {
                let color: UInt32
                switch header.bitsPerPixel {
                case 1, 2, 4, 8:
                    let bit = column * header.bitsPerPixel
                    let byte = bytes[rowStart + bit / 8]
                    let shift = 8 - header.bitsPerPixel - bit % 8
                    let index = Int(byte >> UInt8(shift)) & ((1 << header.bitsPerPixel) - 1)
                    color = index < palette.count ? palette[index] : 0xFF00_0000
                case 16:
                    let offset = rowStart + column * 2
                    color = masks.apply(UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8)
                case 24:
                    let offset = rowStart + column * 3
                    color = 0xFF00_0000 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset])
                default:
                    let offset = rowStart + column * 4
                    let value = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
                    color = masks.apply(value)
                }
                Self.store(color, at: outputStart + column * 4, in: &pixels)
            }
        }
    }

    /// ARGB into RGBA bytes.
    private static func store(_ color: UInt32, at index: Int, in pixels: inout [UInt8]) {
        pixels[index] = UInt8(truncatingIfNeeded: color >> 16)
        pixels[index + 1] = UInt8(truncatingIfNeeded: color >> 8)
        pixels[index + 2] = UInt8(truncatingIfNeeded: color)
        pixels[index + 3] = UInt8(truncatingIfNeeded: color >> 24)
    }

    /// RLE8 and RLE4: runs and literal stretches of palette indices, with end-of-line,
    /// end-of-bitmap and delta escapes. Writes outside the image are ignored, never made.
    private static func decodeRLE(_ bytes: [UInt8], header: Header, palette: [UInt32], into pixels: inout [UInt8]) throws(ImagoError) {
        var offset = header.pixelOffset
        var x = 0, y = 0
        let isRLE4 = header.compression == .rle4
        func put(_ index: Int) {
            guard x < header.width, y < header.height else { return }
            let color = index < palette.count ? palette[index] : 0xFF00_0000
            Self.store(color, at: (Self.outputRow(y, header: header) * header.width + x) * 4, in: &pixels)
        }
        func next() throws(ImagoError) -> Int {
            guard offset < bytes.count else { throw ImagoError.invalid(.bmp, "RLE data cut short") }
            defer { offset += 1 }
            return Int(bytes[offset])
        }
        while y < header.height {
            let count = try next()
            let value = try next()
            if count > 0 {
                for i in 0..<count {
                    put(isRLE4 ? (i % 2 == 0 ? value >> 4 : value & 0x0F) : value)
                    x += 1
                }
                continue
            }
            switch value {
            case 0:
                x = 0
                y += 1
            case 1:
                return
            case 2:
                x += try next()
                y += try next()
            default:
                // A literal stretch of `value` indices, padded to an even number of bytes.
                let byteCount = isRLE4 ? (value + 1) / 2 : value
                guard offset <= bytes.count, byteCount <= bytes.count - offset else { throw ImagoError.invalid(.bmp, "RLE data cut short") }
                for i in 0..<value {
                    let byte = Int(bytes[offset + (isRLE4 ? i / 2 : i)])
                    put(isRLE4 ? (i % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                    x += 1
                }
                offset += byteCount + byteCount % 2
            }
        }
    }

    /// What the file and DIB headers say.
    struct Header {
        enum Compression: Equatable {
            case none, rle8, rle4, bitFields
            var isRLE: Bool { self == .rle8 || self == .rle4 }
        }

        /// A channel's mask and where it starts, for 16- and 32-bit pixels.
        struct Masks {
            var red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32

            /// ARGB from a stored value: each channel scaled from its mask's width to 8 bits.
            func apply(_ value: UInt32) -> UInt32 {
                let alphaValue = alpha == 0 ? 255 : Self.channel(value, alpha)
                return alphaValue << 24 | Self.channel(value, red) << 16 | Self.channel(value, green) << 8 | Self.channel(value, blue)
            }

            static func channel(_ value: UInt32, _ mask: UInt32) -> UInt32 {
                guard mask != 0 else { return 0 }
                let shift = UInt32(mask.trailingZeroBitCount)
                // For a contiguous mask, the shifted mask is the channel's largest value.
                let maximum = UInt64(mask >> shift)
                let raw = UInt64((value & mask) >> shift)
                // raw ≤ maximum < 2^32: the product fits in 64 bits, and the result in 0…255.
                return UInt32((raw * 255 + maximum / 2) / maximum)
            }
        }

        var width = 0
        var height = 0
        var topDown = false
        var bitsPerPixel = 0
        var compression = Compression.none
        var pixelOffset = 0
        var headerSize = 0
        var colorsUsed = 0
        var masks = Masks(red: 0x00FF_0000, green: 0x0000_FF00, blue: 0x0000_00FF, alpha: 0)

        var hasAlpha: Bool { (bitsPerPixel == 16 || bitsPerPixel == 32) && masks.alpha != 0 }

        init(_ bytes: [UInt8]) throws(ImagoError) {
            guard bytes.count >= 26, bytes[0] == UInt8(ascii: "B"), bytes[1] == UInt8(ascii: "M") else {
                throw ImagoError.invalid(.bmp, "not a BMP header")
            }
            pixelOffset = Int(Self.field(bytes, 10))
            headerSize = Int(Self.field(bytes, 14))
            guard headerSize == 12 || (40...124).contains(headerSize) else { throw ImagoError.invalid(.bmp, "unknown header size \(headerSize)") }
            guard bytes.count >= 14 + min(headerSize, 56) else { throw ImagoError.invalid(.bmp, "header cut short") }
            if headerSize == 12 {
                width = Int(Self.field(bytes, 18, width: 2))
                height = Int(Self.field(bytes, 20, width: 2))
                bitsPerPixel = Int(Self.field(bytes, 24, width: 2))
            } else {
                width = Int(Int32(bitPattern: Self.field(bytes, 18)))
                let storedHeight = Int(Int32(bitPattern: Self.field(bytes, 22)))
                topDown = storedHeight < 0
                // Int32.min has no positive twin: refuse it instead of trapping on negation.
                guard storedHeight != Int(Int32.min) else { throw ImagoError.invalid(.bmp, "height out of range") }
                height = abs(storedHeight)
                bitsPerPixel = Int(Self.field(bytes, 28, width: 2))
                switch Self.field(bytes, 30) {
                case 0: compression = .none
                case 1: compression = .rle8
                case 2: compression = .rle4
                case 3, 6: compression = .bitFields
                case let other: throw ImagoError.invalid(.bmp, "compression \(other) not supported")
                }
                colorsUsed = Int(Self.field(bytes, 46))
            }
            guard width > 0, height > 0 else { throw ImagoError.invalid(.bmp, "empty image \(width)×\(height)") }
            guard [1, 2, 4, 8, 16, 24, 32].contains(bitsPerPixel) else { throw ImagoError.invalid(.bmp, "\(bitsPerPixel) bits per pixel not supported") }
            if compression == .rle8, bitsPerPixel != 8 { throw ImagoError.invalid(.bmp, "RLE8 needs 8 bits per pixel") }
            if compression == .rle4, bitsPerPixel != 4 { throw ImagoError.invalid(.bmp, "RLE4 needs 4 bits per pixel") }
            if compression.isRLE, topDown { throw ImagoError.invalid(.bmp, "RLE images are bottom-up") }
            if bitsPerPixel == 16 { masks = Masks(red: 0x7C00, green: 0x03E0, blue: 0x001F, alpha: 0) }
            if compression == .bitFields {
                guard bitsPerPixel == 16 || bitsPerPixel == 32 else { throw ImagoError.invalid(.bmp, "bit fields need 16 or 32 bits per pixel") }
                // INFO headers keep the masks after the header; V4 and V5 inside it, at the same place.
                let alphaFromHeader = headerSize >= 56 || Self.field(bytes, 30) == 6
                guard bytes.count >= 14 + 40 + (alphaFromHeader ? 16 : 12) else { throw ImagoError.invalid(.bmp, "masks cut short") }
                masks = Masks(
                    red: Self.field(bytes, 54), green: Self.field(bytes, 58), blue: Self.field(bytes, 62),
                    alpha: alphaFromHeader ? Self.field(bytes, 66) : 0)
            } else if headerSize >= 56, bitsPerPixel == 32 {
                // A V4/V5 header with plain RGB still names an alpha mask; honour it.
                masks.alpha = Self.field(bytes, 66)
            }
        }

        /// The palette: 1 << bits entries at most (colorsUsed when given), BGRX (BGR for core headers).
        func palette(_ bytes: [UInt8]) throws(ImagoError) -> [UInt32] {
            guard bitsPerPixel <= 8 else { return [] }
            let maximum = 1 << bitsPerPixel
            let count = colorsUsed > 0 && colorsUsed < maximum ? colorsUsed : maximum
            let entrySize = headerSize == 12 ? 3 : 4
            var start = 14 + headerSize
            if headerSize == 40, compression == .bitFields { start += 12 }
            var palette: [UInt32] = []
            palette.reserveCapacity(count)
            for entry in 0..<count {
                let offset = start + entry * entrySize
                // A palette cut short by the pixel data or the file's end keeps what it has.
                guard offset + 2 < bytes.count, offset + entrySize <= pixelOffset else { break }
                palette.append(0xFF00_0000 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset]))
            }
            return palette
        }

        /// A little-endian header field of `width` bytes; 0 past the end (callers check the
        /// header's length first).
        static func field(_ bytes: [UInt8], _ offset: Int, width: Int = 4, _ order: ByteOrder = .littleEndian) -> UInt32 {
            UInt32(truncatingIfNeeded: bytes.integer(width, at: offset, order) ?? 0)
        }
    }
}
