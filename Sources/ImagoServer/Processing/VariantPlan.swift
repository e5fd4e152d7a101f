import Imago

/// The processors that make what `options` ask for. A leading `ImageProcessors.Resize` is always
/// the one that scales, so the pipeline folds it into the decode (JPEG DCT scaling, WebP scaled
/// decode); crops at a gravity and `auto`'s choice follow it.
enum VariantPlan {
    /// `maxPixels` bounds the box asked for (an enlarged output allocates 4 bytes a pixel).
    static func processors(for options: ProcessingOptions, maxPixels: Int) throws(ServerError) -> [any ImageProcessing] {
        var processors: [any ImageProcessing] = []
        let maxSide = Double(ImageProcessors.Resize.maxSide)
        let width = Int(min((Double(options.width) * options.dpr).rounded(), maxSide))
        let height = Int(min((Double(options.height) * options.dpr).rounded(), maxSide))
        guard width * height <= maxPixels else { throw .badRequest("the size asked for is over \(maxPixels) pixels") }
        do {
            if width > 0, height > 0 {
                let box = PixelSize(width: width, height: height)
                let crop = GravityCrop(
                    width: width, height: height, gravity: options.gravity, offsetX: Int(options.gravityOffset.x),
                    offsetY: Int(options.gravityOffset.y), keepsShape: options.resizingType == .fillDown)
                switch options.resizingType {
                case .fit:
                    processors.append(try ImageProcessors.Resize(size: box, contentMode: .aspectFit, upscale: options.enlarge))
                case .force:
                    processors.append(try ImageProcessors.Resize(size: box, contentMode: .fill, upscale: options.enlarge))
                case .fill, .fillDown:
                    let enlarge = options.enlarge && options.resizingType == .fill
                    processors.append(try ImageProcessors.Resize(size: box, contentMode: .aspectFill, upscale: enlarge))
                    processors.append(crop)
                case .auto:
                    processors.append(try ImageProcessors.Resize(size: box, contentMode: .aspectFill, upscale: options.enlarge))
                    processors.append(AutoResize(crop: crop))
                }
            } else if width > 0 || height > 0 {
                // One side given: the other follows the aspect; the free side's bound keeps the
                // box within Resize's pixel limit.
                let given = max(width, height)
                let free = max(1, min(ImageProcessors.Resize.maxSide, min(maxPixels, ImageProcessors.Resize.maxPixels) / given))
                let box = width > 0 ? PixelSize(width: width, height: free) : PixelSize(width: free, height: height)
                processors.append(try ImageProcessors.Resize(size: box, contentMode: .aspectFit, upscale: options.enlarge))
            }
            if options.blur > 0 { processors.append(try ImageProcessors.GaussianBlur(radius: options.blur)) }
        } catch {
            throw .badRequest("the options make no valid size")
        }
        return processors
    }
}
