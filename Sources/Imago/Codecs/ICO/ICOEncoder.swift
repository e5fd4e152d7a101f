import Foundation

/// Encodes ICO (a favicon) as imgproxy and libvips write it: one entry of at most 256×256 holding
/// the image as PNG, which every browser and Windows since Vista read (a kept colour profile,
/// EXIF and XMP go in the PNG, as ``PNGEncoder`` writes them). A larger image is refused; the
/// server fits its result into 256×256 first. An animation gives its first frame.
public struct ICOEncoder: ImageEncoding {
    public let format = ImageFormat.ico
    /// The largest side an ICO entry has (the format table's ``ImageFormatInfo/maxSide``).
    public static var maxSide: Int { ImageFormat.ico.info?.maxSide ?? 256 }

    /// Makes an ICO encoder.
    public init() {}

    /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: at most 256×256 is written: its bitmap and PNG stream.
    public func workingBytes(for image: Image) -> Int { min(image.width, 256) * min(image.height, 256) * 8 }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard (1...Self.maxSide).contains(image.width), (1...Self.maxSide).contains(image.height) else {
            throw encodingError(format, "\(image.width)×\(image.height) is over ICO's \(Self.maxSide)×\(Self.maxSide)")
        }
        let png = try PNGEncoder().encode(image)
        var out = [UInt8]()
        out.reserveCapacity(22 + png.count)
        // ICONDIR: reserved, type 1 (icon), one image.
        out += [0, 0, 1, 0, 1, 0]
        // ICONDIRENTRY: sides (0 is 256), no palette, reserved, one plane, 32 bits, size, offset.
        out += [UInt8(image.width % 256), UInt8(image.height % 256), 0, 0]
        BMPEncoder.append16(1, to: &out)
        BMPEncoder.append16(32, to: &out)
        BMPEncoder.append32(UInt32(png.count), to: &out)
        BMPEncoder.append32(22, to: &out)
        return Data(out) + png
    }
}
