import CWebP
import Foundation

/// Encodes WebP with libwebp, lossy at a quality or lossless, alpha kept. Lossless is exact: the
/// colour under fully transparent pixels is kept too (`WebPConfig.exact`).
public struct WebPEncoder: ImageEncoding {
    public let format = ImageFormat.webp
    /// Quality 0…100 for lossy encoding.
    public var quality: Float
    /// Encode losslessly (quality is then ignored).
    public var lossless: Bool

    /// Makes a WebP encoder.
    public init(quality: Float = 80, lossless: Bool = false) {
        self.quality = min(max(quality, 0), 100)
        self.lossless = lossless
    }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw encodingError(format, "libwebp version mismatch") }
        config.lossless = lossless ? 1 : 0
        config.exact = lossless ? 1 : 0
        if !lossless { config.quality = quality }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw encodingError(format, "libwebp version mismatch") }
        defer { WebPPictureFree(&picture) }
        picture.use_argb = 1
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        let imported = image.pixels.withUnsafeBufferPointer { WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(image.width * 4)) }
        guard imported != 0 else { throw encodingError(format, "cannot import \(image.width)×\(image.height) pixels") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0, let memory = writer.mem else { throw encodingError(format, "libwebp error \(picture.error_code.rawValue)") }
        return Data(bytes: memory, count: writer.size)
    }
}
