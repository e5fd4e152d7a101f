import Foundation

/// Encodes an ``Image`` into one format. `WebPEncoder`, `GIFEncoder` and `AVIFEncoder` keep every
/// frame of an animated image; the JPEG and PNG encoders write its first frame.
public protocol ImageEncoding: Sendable {
    /// The format this encoder writes.
    var format: ImageFormat { get }
    /// Encodes the image.
    func encode(_ image: Image) throws(ImagoError) -> Data
    /// The most memory ``encode(_:)`` allocates beyond `image`, in bytes, known before it starts:
    /// what an encode reserves from a ``DecodeMemoryBudget`` (see
    /// ``ImagePipeline/runOnCPUStage(priority:reserving:holding:for:_:)``). Each of Imago's encoders states
    /// what it measured on a 53 MP photo; the default is four bytes a pixel of each frame.
    func workingBytes(for image: Image) -> Int
}

extension ImageEncoding {
    /// Four bytes a pixel of each frame.
    public func workingBytes(for image: Image) -> Int { image.width * image.height * 4 * max(1, image.frames.count) }
}

extension ImageFormat {
    /// The format Imago writes that a file name's extension names (any of ``table``'s rows that
    /// ``ImageFormatInfo/isWritten``), or nil: ``named(_:)`` for any format Imago reads.
    public init?(fileExtension: String) {
        guard let format = Self.named(fileExtension), format.info?.isWritten == true else { return nil }
        self = format
    }

    /// Imago's encoder for this format with its defaults, lossy ones at `quality` (1…100), or nil
    /// when Imago does not write it (see ``encoder(_:)``).
    public func encoder(quality: Int = 85) -> (any ImageEncoding)? {
        encoder(EncoderSettings(quality: quality))
    }
}

extension Image {
    /// The first frame's pixels composited over white, alpha dropped to 255: what a format without
    /// transparency (JPEG) should show.
    var pixelsOverWhite: [UInt8] {
        guard metadata.hasAlpha else { return pixels }
        var out = pixels
        for offset in stride(from: 0, to: out.count, by: 4) {
            let alpha = Int(out[offset + 3])
            for channel in 0..<3 {
                out[offset + channel] = UInt8((Int(out[offset + channel]) * alpha + 255 * (255 - alpha) + 127) / 255)
            }
            out[offset + 3] = 255
        }
        return out
    }
}

func encodingError(_ format: ImageFormat, _ message: String) -> ImagoError {
    ImagoError(.invalidImage("\(format) encoding: \(message)"), url: nil, stage: .processing)
}

/// `image`'s first frame's pixels when `format`'s encoder can write its size (each side from 1 to
/// `maxWidth` × `maxHeight`, every pixel there); else the error naming the size.
func encodableFrame(_ image: Image, _ format: ImageFormat, maxWidth: Int, maxHeight: Int) throws(ImagoError) -> [UInt8] {
    guard (1...maxWidth).contains(image.width), (1...maxHeight).contains(image.height), let first = image.frames.first,
        first.pixels.count == image.width * image.height * 4
    else { throw encodingError(format, "cannot write \(image.width)×\(image.height)") }
    return first.pixels
}
