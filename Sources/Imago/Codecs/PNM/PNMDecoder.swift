import Foundation

/// Decodes Netpbm images in safe Swift: PBM, PGM and PPM in their ASCII (`P1`–`P3`) and binary
/// (`P4`–`P6`) forms, and PAM (`P7`: grayscale, grayscale + alpha, RGB, RGB + alpha, black and
/// white), with any maximum value up to 65,535 (two bytes per sample, big-endian, past 255).
/// Samples are scaled to 8 bits, rounded. The header is read and the size checked against the
/// limits before any pixel is allocated; a body shorter than the header says is an error.
public struct PNMDecoder: ImageDecoding {
    public let format = ImageFormat.pnm

    /// Makes a Netpbm decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        guard data.count >= 3, data[data.startIndex] == UInt8(ascii: "P") else { return false }
        let kind = data[data.startIndex + 1]
        let next = data[data.startIndex + 2]
        return (UInt8(ascii: "1")...UInt8(ascii: "7")).contains(kind) && Header.isWhitespace(next)
    }

    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        guard let header = try? Header(Array(data.prefix(4096))) else { return nil }
        return .buffers(1, width: header.width, height: header.height, options: options)
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let bytes = [UInt8](data)
        let header = try Header(bytes)
        var pixels = try options.stillImageBuffer(width: header.width, height: header.height, fill: 255)
        var reader = SampleReader(bytes: bytes, offset: header.bodyOffset, header: header)
        let pixelCount = header.width * header.height
        switch header.layout {
        case .bitmap:
            for row in 0..<header.height {
                for column in 0..<header.width {
                    // PBM: 1 is black.
                    let value: UInt8 = try reader.bit() ? 0 : 255
                    let index = (row * header.width + column) * 4
                    pixels[index] = value
                    pixels[index + 1] = value
                    pixels[index + 2] = value
                }
                reader.endRow()
            }
        case .samples(let channels):
            for pixel in 0..<pixelCount {
                let index = pixel * 4
                switch channels {
                case .gray, .grayAlpha:
                    let gray = try reader.sample()
                    pixels[index] = gray
                    pixels[index + 1] = gray
                    pixels[index + 2] = gray
                    if channels == .grayAlpha { pixels[index + 3] = try reader.sample() }
                case .rgb, .rgbAlpha:
                    pixels[index] = try reader.sample()
                    pixels[index + 1] = try reader.sample()
                    pixels[index + 2] = try reader.sample()
                    if channels == .rgbAlpha { pixels[index + 3] = try reader.sample() }
                }
            }
        }
        return Image(still: pixels, width: header.width, height: header.height, format: .pnm, hasAlpha: header.hasAlpha)
    }

    /// What a Netpbm header says.
    struct Header {
        enum Channels: Equatable { case gray, grayAlpha, rgb, rgbAlpha }
        enum Layout: Equatable {
            /// One bit per pixel (P1, P4, PAM's BLACKANDWHITE is samples of maxval 1 instead).
            case bitmap
            case samples(Channels)
        }

        var width = 0
        var height = 0
        var maxValue = 1
        var layout = Layout.bitmap
        var isASCII = false
        /// Where the pixel data starts.
        var bodyOffset = 0

        var hasAlpha: Bool { layout == .samples(.grayAlpha) || layout == .samples(.rgbAlpha) }

        static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
        }

        init(_ bytes: [UInt8]) throws(ImagoError) {
            guard bytes.count >= 3, bytes[0] == UInt8(ascii: "P") else { throw ImagoError.invalid(.pnm, "not a Netpbm header") }
            let kind = Int(bytes[1]) - Int(UInt8(ascii: "0"))
            var offset = 2
            if kind == 7 {
                try readPAM(bytes, offset: &offset)
                return
            }
            guard (1...6).contains(kind) else { throw ImagoError.invalid(.pnm, "unknown kind P\(kind)") }
            isASCII = kind <= 3
            width = try Self.number(bytes, offset: &offset)
            height = try Self.number(bytes, offset: &offset)
            switch kind {
            case 1, 4: layout = .bitmap
            case 2, 5: layout = .samples(.gray)
            default: layout = .samples(.rgb)
            }
            if layout != .bitmap {
                maxValue = try Self.number(bytes, offset: &offset)
                guard (1...65_535).contains(maxValue) else { throw ImagoError.invalid(.pnm, "maximum value \(maxValue) out of 1…65535") }
            }
            // Exactly one whitespace byte ends the header of a binary body.
            guard offset < bytes.count, Self.isWhitespace(bytes[offset]) else {
                if isASCII, offset == bytes.count { throw ImagoError.invalid(.pnm, "no pixel data") }
                throw ImagoError.invalid(.pnm, "header not ended by whitespace")
            }
            bodyOffset = offset + 1
        }

        /// A decimal number after whitespace and comments, at most 9 digits (so it fits any Int).
        static func number(_ bytes: [UInt8], offset: inout Int) throws(ImagoError) -> Int {
            skipWhitespaceAndComments(bytes, offset: &offset)
            var value = 0, digits = 0
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
                guard digits < 9 else { throw ImagoError.invalid(.pnm, "number too long") }
                value = value * 10 + Int(bytes[offset] - UInt8(ascii: "0"))
                digits += 1
                offset += 1
            }
            guard digits > 0 else { throw ImagoError.invalid(.pnm, "expected a number") }
            return value
        }

        static func skipWhitespaceAndComments(_ bytes: [UInt8], offset: inout Int) {
            while offset < bytes.count {
                if isWhitespace(bytes[offset]) {
                    offset += 1
                } else if bytes[offset] == UInt8(ascii: "#") {
                    while offset < bytes.count, bytes[offset] != 0x0A, bytes[offset] != 0x0D { offset += 1 }
                } else {
                    return
                }
            }
        }

        /// PAM's header: `KEY value` lines up to `ENDHDR`.
        private mutating func readPAM(_ bytes: [UInt8], offset: inout Int) throws(ImagoError) {
            var depth = 0
            var tupleType = ""
            var seen = Set<String>()
            while true {
                Self.skipWhitespaceAndComments(bytes, offset: &offset)
                var key = ""
                while offset < bytes.count, !Self.isWhitespace(bytes[offset]), key.utf8.count < 16 {
                    key.append(Character(Unicode.Scalar(bytes[offset])))
                    offset += 1
                }
                switch key {
                case "ENDHDR":
                    // The header ends with the newline after ENDHDR.
                    guard offset < bytes.count, bytes[offset] == 0x0A else { throw ImagoError.invalid(.pnm, "ENDHDR not followed by a newline") }
                    bodyOffset = offset + 1
                    guard seen.isSuperset(of: ["WIDTH", "HEIGHT", "DEPTH", "MAXVAL"]) else { throw ImagoError.invalid(.pnm, "PAM header incomplete") }
                    guard (1...65_535).contains(maxValue) else { throw ImagoError.invalid(.pnm, "maximum value \(maxValue) out of 1…65535") }
                    switch (depth, tupleType) {
                    case (1, _): layout = .samples(.gray)
                    case (2, _): layout = .samples(.grayAlpha)
                    case (3, _): layout = .samples(.rgb)
                    case (4, _): layout = .samples(.rgbAlpha)
                    default: throw ImagoError.invalid(.pnm, "depth \(depth) not supported")
                    }
                    return
                case "WIDTH": width = try Self.number(bytes, offset: &offset)
                case "HEIGHT": height = try Self.number(bytes, offset: &offset)
                case "DEPTH": depth = try Self.number(bytes, offset: &offset)
                case "MAXVAL": maxValue = try Self.number(bytes, offset: &offset)
                case "TUPLTYPE":
                    // The rest of the line names the tuple type; depth decides the layout.
                    while offset < bytes.count, bytes[offset] != 0x0A, tupleType.utf8.count < 64 {
                        tupleType.append(Character(Unicode.Scalar(bytes[offset])))
                        offset += 1
                    }
                case "": throw ImagoError.invalid(.pnm, "PAM header ended early")
                default: throw ImagoError.invalid(.pnm, "unknown PAM header field")
                }
                seen.insert(key)
            }
        }
    }

    /// Reads samples from the body, ASCII or binary, scaled to 8 bits.
    struct SampleReader {
        let bytes: [UInt8]
        var offset: Int
        let header: Header
        /// Bits left of the current byte of a binary bitmap row.
        private var bitByte: UInt8 = 0
        private var bitsLeft = 0

        init(bytes: [UInt8], offset: Int, header: Header) {
            self.bytes = bytes
            self.offset = offset
            self.header = header
        }

        mutating func sample() throws(ImagoError) -> UInt8 {
            let raw: Int
            if header.isASCII {
                raw = try Header.number(bytes, offset: &offset)
                guard raw <= header.maxValue else { throw ImagoError.invalid(.pnm, "sample \(raw) above the maximum value") }
            } else if header.maxValue > 255 {
                guard offset + 1 < bytes.count else { throw ImagoError.invalid(.pnm, "pixel data cut short") }
                raw = min(Int(bytes[offset]) << 8 | Int(bytes[offset + 1]), header.maxValue)
                offset += 2
            } else {
                guard offset < bytes.count else { throw ImagoError.invalid(.pnm, "pixel data cut short") }
                raw = min(Int(bytes[offset]), header.maxValue)
                offset += 1
            }
            // raw ≤ maxValue ≤ 65,535: raw × 255 fits easily.
            return UInt8((raw * 255 + header.maxValue / 2) / header.maxValue)
        }

        /// One pixel of a bitmap: true for black. ASCII bitmaps may run digits together.
        mutating func bit() throws(ImagoError) -> Bool {
            if header.isASCII {
                Header.skipWhitespaceAndComments(bytes, offset: &offset)
                guard offset < bytes.count else { throw ImagoError.invalid(.pnm, "pixel data cut short") }
                let byte = bytes[offset]
                offset += 1
                guard byte == UInt8(ascii: "0") || byte == UInt8(ascii: "1") else { throw ImagoError.invalid(.pnm, "bitmap digit expected") }
                return byte == UInt8(ascii: "1")
            }
            if bitsLeft == 0 {
                guard offset < bytes.count else { throw ImagoError.invalid(.pnm, "pixel data cut short") }
                bitByte = bytes[offset]
                offset += 1
                bitsLeft = 8
            }
            bitsLeft -= 1
            return (bitByte >> UInt8(bitsLeft)) & 1 == 1
        }

        /// Binary bitmap rows start on a byte boundary.
        mutating func endRow() {
            bitsLeft = 0
        }
    }
}
