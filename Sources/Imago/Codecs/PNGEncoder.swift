import CSPNG
import Foundation

/// Encodes PNG with libspng: 8-bit RGBA, or RGB when the image has no alpha.
public struct PNGEncoder: ImageEncoding {
    public let format = ImageFormat.png

    /// Makes a PNG encoder.
    public init() {}

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard let context = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else { throw encodingError(format, "cannot create an encoder") }
        defer { spng_ctx_free(context) }
        try check(spng_set_option(context, SPNG_ENCODE_TO_BUFFER, 1))
        let hasAlpha = image.metadata.hasAlpha
        var header = spng_ihdr()
        header.width = UInt32(image.width)
        header.height = UInt32(image.height)
        header.bit_depth = 8
        header.color_type = UInt8(hasAlpha ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA.rawValue : SPNG_COLOR_TYPE_TRUECOLOR.rawValue)
        try check(spng_set_ihdr(context, &header))
        var pixels = image.pixels
        if !hasAlpha {
            pixels = [UInt8](unsafeUninitializedCapacity: image.width * image.height * 3) { rgb, count in
                var target = 0
                for offset in stride(from: 0, to: pixels.count, by: 4) {
                    rgb[target] = pixels[offset]
                    rgb[target + 1] = pixels[offset + 1]
                    rgb[target + 2] = pixels[offset + 2]
                    target += 3
                }
                count = target
            }
        }
        let status = pixels.withUnsafeBytes { bytes in
            spng_encode_image(context, bytes.baseAddress, bytes.count, Int32(SPNG_FMT_PNG.rawValue), Int32(SPNG_ENCODE_FINALIZE.rawValue))
        }
        try check(status)
        var length = 0
        var error: Int32 = 0
        guard let buffer = spng_get_png_buffer(context, &length, &error) else { throw encodingError(format, String(cString: spng_strerror(error))) }
        defer { free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    private func check(_ status: Int32) throws(ImagoError) {
        guard status != 0 else { return }
        throw encodingError(format, String(cString: spng_strerror(status)))
    }
}
