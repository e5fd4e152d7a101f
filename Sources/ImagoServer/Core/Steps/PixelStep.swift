import Imago

/// One step of a plan's pixel work, from the small closed set every dialect's geometry is written
/// in. Until a plan's first ``resize(width:height:)``, sizes and boxes are in the pixels of a full
/// decode (of the picture as the steps before left it); ``PlanProcessor`` maps them onto a reduced
/// decode. From the first resize on, they are the image's own pixels.
enum PixelStep: Sendable {
    /// Back to the file's stored orientation: the inverse of the decode's turn upright.
    case undoOrientation(ImageOrientation)
    /// The first frame alone.
    case firstFrame
    /// The box cut out.
    case crop(PixelBox)
    /// A `width × height` window (a side larger than the picture's is kept whole) around the
    /// faces `faces` finds, when it is given and finds any; else where the picture is most
    /// interesting, or its centre.
    case smartCrop(width: Int, height: Int, faces: FaceDetector?, withoutFaces: WithoutFaces)
    /// Scaled to exactly `width × height` (each side at least 1).
    case resize(width: Int, height: Int)
    /// Turned clockwise by a multiple of 90°.
    case rotate(degrees: Int)
    /// Mirrored.
    case flip(horizontal: Bool, vertical: Bool)
    /// Put at `x, y` on a `width × height` canvas of `background`.
    case extend(width: Int, height: Int, x: Int, y: Int, background: RGBAColor)
    /// Composed over a colour.
    case flatten(RGBAColor)
    /// Pixel work of a dialect's own: a filter, a watermark, an overlay.
    case filter(any PixelFilter)

    /// The picture's size after this step, from its size before; nil when only the pixels can tell.
    func size(after size: PixelSize) -> PixelSize? {
        switch self {
        case .undoOrientation(let orientation): orientation.swapsDimensions ? size.turned : size
        case .firstFrame, .flip, .flatten: size
        case .crop(let box): PixelSize(width: max(1, box.width), height: max(1, box.height))
        case .smartCrop(let width, let height, _, _): PixelSize(width: min(width, size.width), height: min(height, size.height))
        case .resize(let width, let height): PixelSize(width: max(1, width), height: max(1, height))
        case .rotate(let degrees): degrees % 180 == 0 ? size : size.turned
        case .extend(let width, let height, _, _, _): PixelSize(width: width, height: height)
        case .filter(let filter): filter.size(after: size)
        }
    }
}

/// Where a ``PixelStep/smartCrop(width:height:faces:withoutFaces:)`` window goes when no face
/// decides it.
enum WithoutFaces: Sendable {
    /// The most interesting window (``Imago/ImageProcessors/SmartCrop``'s saliency).
    case saliency
    /// The centre.
    case centre
}

/// A box by its edges (right and bottom exclusive), as thumbor's `meta/` reports crops.
struct PixelBox: Sendable, Hashable {
    var left: Int
    var top: Int
    var right: Int
    var bottom: Int

    init(left: Int, top: Int, right: Int, bottom: Int) {
        (self.left, self.top, self.right, self.bottom) = (left, top, right, bottom)
    }

    init(x: Int, y: Int, width: Int, height: Int) {
        self.init(left: x, top: y, right: x + width, bottom: y + height)
    }

    var width: Int { right - left }
    var height: Int { bottom - top }
}

/// Pixel work of a dialect's own, as one plan step.
protocol PixelFilter: Sendable {
    /// `image` with the work done.
    func apply(to image: Image) throws(ImagoError) -> Image
    /// The result's size for a picture of `size`, checked against the canvas budget before any
    /// step runs; nil when only the pixels can tell (the filter then bounds itself). Default: `size`.
    func size(after size: PixelSize) -> PixelSize?
}

extension PixelFilter {
    func size(after size: PixelSize) -> PixelSize? { size }
}

/// One of the library's processors that keep the picture's size (blur, sharpen, pixelate,
/// greyscale) as a plan step.
struct SizeKeepingProcessor: PixelFilter {
    let processor: any ImageProcessing

    init(_ processor: any ImageProcessing) { self.processor = processor }

    func apply(to image: Image) throws(ImagoError) -> Image { try processor.process(image) }
}
