import Foundation

/// Encodes BMP in safe Swift, as every reader takes it: 24-bit BGR rows under a
/// `BITMAPINFOHEADER` for an opaque image; 32-bit BGRA with bit-field masks under a
/// `BITMAPV5HEADER` when the image has alpha; a kept colour profile embedded after the pixels
/// (V5 `PROFILE_EMBEDDED`, which ``BMPDecoder`` honours), else the V5 header says sRGB. Rows are
/// written bottom-up, padded to 4 bytes. BMP has no place for EXIF or XMP; they are not written.
/// An animation gives its first frame. The output's size is worked out, and refused past BMP's
/// 4 GiB, before it is allocated.
public struct BMPEncoder: ImageEncoding {
    public let format = ImageFormat.bmp

    /// Makes a BMP encoder.
    public init() {}

    /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: the file itself (up to 4 bytes a pixel) and the rows: 5.2 bytes a pixel on a 53 MP photo.
    public func workingBytes(for image: Image) -> Int { image.width * image.height * 6 }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        let pixels = try encodableFrame(image, format, maxWidth: Int(Int32.max) / 4, maxHeight: Int(Int32.max))
        let (width, height) = (image.width, image.height)
        let alpha = image.metadata.hasAlpha
        let profile = image.metadata.colorProfile?.data
        let v5 = alpha || profile != nil
        let infoSize = v5 ? 124 : 40
        let bytesPerPixel = alpha ? 4 : 3
        let rowBytes = (width * bytesPerPixel + 3) & ~3
        let (pixelBytes, overflow) = rowBytes.multipliedReportingOverflow(by: height)
        let pixelOffset = 14 + infoSize
        let total = overflow ? Int.max : pixelOffset + pixelBytes + (profile?.count ?? 0)
        guard total <= Int(UInt32.max) else { throw encodingError(format, "\(width)×\(height) is over BMP's 4 GiB") }

        var out = [UInt8]()
        out.reserveCapacity(total)
        // BITMAPFILEHEADER.
        out += [UInt8(ascii: "B"), UInt8(ascii: "M")]
        Self.append32(UInt32(total), to: &out)
        Self.append32(0, to: &out)
        Self.append32(UInt32(pixelOffset), to: &out)
        // BITMAPINFOHEADER (the first 40 bytes of a V5 header too).
        Self.append32(UInt32(infoSize), to: &out)
        Self.append32(UInt32(width), to: &out)
        Self.append32(UInt32(height), to: &out)  // positive: bottom-up
        Self.append16(1, to: &out)
        Self.append16(UInt16(bytesPerPixel * 8), to: &out)
        Self.append32(alpha ? 3 : 0, to: &out)  // BI_BITFIELDS or BI_RGB
        Self.append32(UInt32(pixelBytes), to: &out)
        Self.append32(2835, to: &out)  // 72 dpi
        Self.append32(2835, to: &out)
        Self.append32(0, to: &out)
        Self.append32(0, to: &out)
        if v5 {
            for mask: UInt32 in alpha ? [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000] : [0, 0, 0, 0] { Self.append32(mask, to: &out) }
            Self.append32(profile == nil ? 0x7352_4742 : 0x4D42_4544, to: &out)  // 'sRGB' or 'MBED'
            out += [UInt8](repeating: 0, count: 36 + 12)  // endpoints, gamma: unused
            Self.append32(4, to: &out)  // LCS_GM_IMAGES: perceptual
            // The profile's offset counts from the start of this header.
            Self.append32(profile == nil ? 0 : UInt32(infoSize + pixelBytes), to: &out)
            Self.append32(UInt32(profile?.count ?? 0), to: &out)
            Self.append32(0, to: &out)
        }
        let padding = [UInt8](repeating: 0, count: rowBytes - width * bytesPerPixel)
        for y in stride(from: height - 1, through: 0, by: -1) {
            var index = y * width * 4
            for _ in 0..<width {
                out.append(pixels[index + 2])
                out.append(pixels[index + 1])
                out.append(pixels[index])
                if alpha { out.append(pixels[index + 3]) }
                index += 4
            }
            out += padding
        }
        if let profile { out += profile }
        return Data(out)
    }

    static func append16(_ value: UInt16, to out: inout [UInt8]) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    static func append32(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }
}
