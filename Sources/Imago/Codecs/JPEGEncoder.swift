import CTurboJPEG
import Foundation

/// Encodes JPEG with TurboJPEG, 4:2:0 chroma, baseline or progressive. Transparent pixels are
/// composited over white, since JPEG has no alpha.
public struct JPEGEncoder: ImageEncoding {
    public let format = ImageFormat.jpeg
    /// Quality 1…100.
    public var quality: Int
    /// Write a progressive JPEG.
    public var progressive: Bool

    /// Makes a JPEG encoder.
    public init(quality: Int = 85, progressive: Bool = false) {
        self.quality = min(max(quality, 1), 100)
        self.progressive = progressive
    }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard let handle = tjInitCompress() else { throw encodingError(format, "cannot create a compressor") }
        defer { tjDestroy(handle) }
        let pixels = image.pixelsOverWhite
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.withUnsafeBufferPointer { source in
            tjCompress2(
                handle, source.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(TJPF_RGBA.rawValue),
                &output, &size, Int32(TJSAMP_420.rawValue), Int32(quality), progressive ? TJFLAG_PROGRESSIVE : 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else { throw encodingError(format, String(cString: tjGetErrorStr2(handle))) }
        return Data(bytes: output, count: Int(size))
    }
}
