import Foundation

/// Encodes Netpbm in safe Swift: binary PPM (`P6`, 8-bit RGB) for an opaque image, PAM (`P7`,
/// `RGB_ALPHA`) when it has alpha, as ``PNMDecoder`` and netpbm's tools read them. Netpbm has no
/// place for a colour profile or metadata, so the pixels are written as they are (sRGB after a
/// decode); an animation gives its first frame. The output's size is worked out before it is
/// allocated.
public struct PNMEncoder: ImageEncoding {
    public let format = ImageFormat.pnm

    /// Makes a Netpbm encoder.
    public init() {}

    /// The file itself: at most four bytes a pixel and a header.
    public func workingBytes(for image: Image) -> Int { image.width * image.height * 4 + 128 }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        let pixels = try encodableFrame(image, format, maxWidth: Int(Int32.max), maxHeight: Int(Int32.max))
        let (width, height) = (image.width, image.height)
        let alpha = image.metadata.hasAlpha
        let header =
            alpha
            ? "P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"
            : "P6\n\(width) \(height)\n255\n"
        let (samples, overflow) = (width * height).multipliedReportingOverflow(by: alpha ? 4 : 3)
        guard !overflow else { throw encodingError(format, "\(width)×\(height) is too large") }
        var out = [UInt8]()
        out.reserveCapacity(header.utf8.count + samples)
        out += header.utf8
        if alpha {
            out += pixels
        } else {
            var index = 0
            while index < pixels.count {
                out.append(pixels[index])
                out.append(pixels[index + 1])
                out.append(pixels[index + 2])
                index += 4
            }
        }
        return Data(out)
    }
}
