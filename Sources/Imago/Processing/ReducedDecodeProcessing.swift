/// A processor that can start from an image decoded at a reduced scale (JPEG's DCT scaling,
/// WebP's scaled decode) and still make the picture a full decode would give: when it is a
/// request's first processor, the pipeline asks it what size the decode must cover.
///
/// Its ``ImageProcessing/process(_:)`` then receives an image that may be smaller than the
/// file's, and reads the full size from ``ImageMetadata/uprightOriginalSize`` to place its work.
public protocol ReducedDecodeProcessing: ImageProcessing {
    /// The size whose both sides a decode of an upright `width × height` original must reach for
    /// this processor's result to be the same as from the full decode; nil for the full decode.
    func requiredDecodeSize(width: Int, height: Int) -> PixelSize?

    /// The size a vector source (SVG) of nominal size `width × height` is best rendered at for
    /// this processor: larger than nominal too, as vectors scale without loss. Default:
    /// ``requiredDecodeSize(width:height:)``, or the nominal size.
    func vectorRenderSize(width: Int, height: Int) -> PixelSize?

    /// Bytes its work holds at most beside the decode it starts from (what each step makes, and
    /// the step's input when that is not the decode), for a decode of size `decoded` of a
    /// `format` source of `original`, both the way up the file declares them (the turn is not
    /// known before the decode); the pipeline reserves them with the decode, and a request with
    /// ``ImageRequest/Options/holdsMemory`` keeps them held past delivery (so they may count the
    /// work that follows, such as the result's encode). nil when only the pixels can tell: the
    /// pipeline then counts the decode's size again, as for any processor.
    func workingBytes(decoded: PixelSize, original: PixelSize, format: ImageFormat?) -> Int?
}

extension ReducedDecodeProcessing {
    public func vectorRenderSize(width: Int, height: Int) -> PixelSize? { requiredDecodeSize(width: width, height: height) }
    public func workingBytes(decoded: PixelSize, original: PixelSize, format: ImageFormat?) -> Int? { nil }
}

extension ImageMetadata {
    /// The file's pixel size turned upright by the orientation the decode applied: the size of a
    /// full decode, whatever scale this one used.
    public var uprightOriginalSize: PixelSize {
        orientationApplied.swapsDimensions
            ? PixelSize(width: originalHeight, height: originalWidth) : PixelSize(width: originalWidth, height: originalHeight)
    }
}

extension Image {
    /// How much of the full picture this image's pixels cover, in its own pixels: the upright
    /// original's size times ``ImageMetadata/decodeScale`` after a reduced decode, else its size.
    public var coveredSize: (width: Double, height: Double) {
        guard let scale = metadata.decodeScale else { return (Double(width), Double(height)) }
        let full = metadata.uprightOriginalSize
        return (min(Double(full.width) * scale, Double(width)), min(Double(full.height) * scale, Double(height)))
    }
}

/// A first processor's ``ReducedDecodeProcessing/requiredDecodeSize(width:height:)``, carried in
/// decoding options and decode plans, which compare it by the processor's identifier.
struct DecodeSizeRequirement: Sendable, Hashable {
    let identifier: String
    let size: @Sendable (Int, Int) -> PixelSize?
    let vectorSize: @Sendable (Int, Int) -> PixelSize?

    init(_ processor: any ReducedDecodeProcessing) {
        identifier = processor.identifier
        // Asked for the same size by the memory estimate, the header check and the decode: the
        // last answer is kept (a server's plan is made anew for each answer).
        let last = Locked<(width: Int, height: Int, size: PixelSize?)?>(nil)
        size = { width, height in
            if let known = last.withLock({ $0 }), known.width == width, known.height == height { return known.size }
            let size = processor.requiredDecodeSize(width: width, height: height)
            last.withLock { $0 = (width, height, size) }
            return size
        }
        vectorSize = { processor.vectorRenderSize(width: $0, height: $1) }
    }

    static func == (a: Self, b: Self) -> Bool { a.identifier == b.identifier }
    func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}
