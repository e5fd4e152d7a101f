import Imago

/// One of thumbor's post-transform filters as a plan step, with the request's box as the
/// transformation left it (`fill` and `upscale` read it) and the overlay images it places.
struct ThumborFilterStep: PixelFilter {
    let filter: ThumborFilter
    let transformation: ThumborTransformation

    func apply(to image: Image) throws(ImagoError) -> Image { try transformation.apply(filter, to: image) }

    /// The canvas `fill`, `upscale`, `proportion` and `frame` make; the others keep the size.
    func size(after size: PixelSize) -> PixelSize? {
        let t = transformation
        switch filter {
        case .proportion(let factor):
            guard factor > 0, factor <= 1 else { return size }
            let (width, height) = (Double(size.width) * factor, Double(size.height) * factor)
            return width >= 1 && height >= 1 ? PixelSize(width: Int(width), height: Int(height)) : size
        case .upscale:
            return t.upscaledSize(size) ?? size
        case .fill:
            let width = t.pixels(t.requestWidth, size.width), height = t.pixels(t.requestHeight, size.height)
            return PixelSize(width: width == 0 ? size.width : width, height: height == 0 ? size.height : height)
        case .frame(let url):
            guard let padding = t.framePadding(url) else { return size }
            return PixelSize(
                width: size.width + max(0, padding.left) + max(0, padding.right), height: size.height + max(0, padding.top) + max(0, padding.bottom))
        default: return size
        }
    }
}

/// `debug/`'s outlines of the focal points, as a plan step.
struct ThumborRectangles: PixelFilter {
    let points: [FocalPoint]

    func apply(to image: Image) throws(ImagoError) -> Image { ThumborTransformation.drawRectangles(image, points) }
}
