/// What ``ThumbHash`` and ``BlurHash`` share: the small copy they are computed from, and the
/// images they render.
public enum Placeholders {
    /// The longest side a placeholder is rendered at: a placeholder is blurred by nature, and
    /// a display scales it up for free.
    public static let maxRenderSide = 1024

    /// The side a placeholder's source is fitted to before it is hashed, as the references do.
    public static let sourceSide = 100

    /// The first frame, scaled to fit `side × side` when larger (Lanczos, alpha kept).
    static func fitted(_ image: Image, side: Int) throws(ImagoError) -> Image {
        var still = image
        if still.frames.count > 1 { still.frames = [still.frames[0]] }
        guard still.width > side || still.height > side else { return still }
        return try ImageProcessors.Resize(checkedSize: PixelSize(width: side, height: side), contentMode: .aspectFit).process(still)
    }

    static func checkRenderSize(_ width: Int, _ height: Int) throws(ImagoError) {
        guard (1...maxRenderSide).contains(width), (1...maxRenderSide).contains(height) else {
            throw .processing("a placeholder is rendered at 1…\(maxRenderSide) pixels a side, not \(width)×\(height)")
        }
    }

    /// An image of rendered placeholder pixels.
    static func image(width: Int, height: Int, pixels: [UInt8], alpha: Bool) -> Image {
        Image(
            width: width, height: height, frames: [.init(pixels: pixels)],
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: alpha, bitsPerSample: 8))
    }
}
