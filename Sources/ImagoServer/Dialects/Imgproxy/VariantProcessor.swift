import Foundation
import Imago

/// imgproxy's processing of one image, as one processor: trim, rotate and flip, crop, scale,
/// crop to the result (at the gravity, a focus point or the most interesting region), filters,
/// extend, extend to the aspect ratio, padding, background and watermark, in the order of
/// imgproxy's `mainPipeline`. Sizes are worked out by ``VariantGeometry`` from the source's full
/// size, so a decode reduced to the size the result needs (asked through
/// ``requiredDecodeSize(width:height:)``) gives the same picture as a full one.
struct VariantProcessor: ReducedDecodeProcessing {
    let options: ProcessingOptions
    /// The server's limit on the result's longest side, beside the URL's own.
    let maxResultDimension: Int
    /// The server's watermark, when it has one and the URL asks for it.
    let watermark: Watermark?
    /// The most pixels any step may make (a scaled image, an extended canvas): what a URL's
    /// `min-width`, `zoom` or `extend` could otherwise ask of memory.
    var maxPixels = 50_000_000

    var identifier: String { "imago-server.variant(\(options.key)\(watermark.map { ",wm:" + $0.identifier } ?? ""))" }

    private var effectiveMaxResultDimension: Int {
        let asked = options.maxResultDimension
        return asked > 0 && maxResultDimension > 0 ? min(asked, maxResultDimension) : max(asked, maxResultDimension)
    }

    /// Whether the steps need the pictures' every pixel at full size: trim measures before the
    /// geometry is known, and without auto-rotation the stored orientation is not known up front.
    private var needsFullDecode: Bool { options.trim != nil || options.autoRotate == false }

    func requiredDecodeSize(width: Int, height: Int) -> PixelSize? {
        scaledSize(width: width, height: height, isVector: false)
    }

    /// A vector source is rendered at the size it is scaled to, larger than its own too.
    func vectorRenderSize(width: Int, height: Int) -> PixelSize? {
        scaledSize(width: width, height: height, isVector: true)
    }

    /// The source's size at the scale the geometry asks for, in the source's own orientation; nil
    /// when the full decode is needed, or (for a raster) when the scale does not reduce it.
    private func scaledSize(width: Int, height: Int, isVector: Bool) -> PixelSize? {
        guard !needsFullDecode else { return nil }
        let turned = options.rotate % 180 == 90
        let source = turned ? (width: height, height: width) : (width: width, height: height)
        let geometry = VariantGeometry(source: source, options: options, maxResultDimension: effectiveMaxResultDimension, isVector: isVector)
        // A raster is never decoded larger than it is.
        var scale = (width: geometry.widthScale, height: geometry.heightScale)
        if !isVector {
            guard scale.width < 1 || scale.height < 1 else { return nil }
            scale = (min(scale.width, 1), min(scale.height, 1))
        }
        let needed = (
            width: max(1, Int((Double(source.width) * scale.width).rounded(.up))),
            height: max(1, Int((Double(source.height) * scale.height).rounded(.up)))
        )
        return turned ? PixelSize(width: needed.height, height: needed.width) : PixelSize(width: needed.width, height: needed.height)
    }

    func process(_ decoded: Image) throws(ImagoError) -> Image {
        var image = decoded
        // The full decode's size, in the orientation the steps below see.
        var full = (width: image.metadata.uprightOriginalSize.width, height: image.metadata.uprightOriginalSize.height)
        if options.autoRotate == false, image.metadata.orientationApplied != .up {
            image = try Self.undo(image.metadata.orientationApplied, on: image)
            full = (image.width, image.height)
        }
        if let trim = options.trim {
            image = try ImageProcessors.Trim(
                threshold: trim.threshold, color: trim.color, equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical
            )
            .process(image)
            full = (image.width, image.height)
        }
        if options.rotate != 0, let rotation = ImageProcessors.Rotate(degrees: options.rotate) {
            image = try rotation.process(image)
            if options.rotate % 180 == 90 { full = (full.height, full.width) }
        }
        image = try ImageProcessors.Flip(horizontal: options.flipHorizontal, vertical: options.flipVertical).process(image)

        let geometry = VariantGeometry(
            source: full, options: options, maxResultDimension: effectiveMaxResultDimension, isVector: image.metadata.format == .svg)
        try checkSize(geometry)
        // The decode may be reduced (or a vector rendered larger): what the geometry says in full-size pixels, this image has
        // at `reduction` of them.
        let reduction = (x: Double(image.width) / Double(full.width), y: Double(image.height) / Double(full.height))
        if geometry.cropWidth > 0 || geometry.cropHeight > 0 {
            var gravity = options.crop?.gravity ?? options.gravity
            if gravity.kind != .focusPoint {
                if abs(gravity.x) >= 1 { gravity.x = (gravity.x * reduction.x).rounded(.toNearestOrEven) }
                if abs(gravity.y) >= 1 { gravity.y = (gravity.y * reduction.y).rounded(.toNearestOrEven) }
            }
            let width = geometry.cropWidth > 0 ? max(1, Int((Double(geometry.cropWidth) * reduction.x).rounded())) : 0
            let height = geometry.cropHeight > 0 ? max(1, Int((Double(geometry.cropHeight) * reduction.y).rounded())) : 0
            image = try Self.crop(image, width: width, height: height, gravity: gravity, dpr: 1)
        }
        if (image.width, image.height) != (geometry.scaledWidth, geometry.scaledHeight) {
            let size = PixelSize(width: max(1, geometry.scaledWidth), height: max(1, geometry.scaledHeight))
            image = try ImageProcessors.Resize(size: size, contentMode: .fill, upscale: true).process(image)
        }
        image = try Self.crop(image, width: geometry.resultCropWidth, height: geometry.resultCropHeight, gravity: options.gravity, dpr: geometry.dprScale)
        if options.blur > 0 { image = try ImageProcessors.GaussianBlur(radius: options.blur).process(image) }
        if options.sharpen > 0 { image = try ImageProcessors.Sharpen(sigma: options.sharpen).process(image) }
        if options.pixelate > 1 { image = try ImageProcessors.Pixelate(size: options.pixelate).process(image) }
        if options.extend.enabled {
            image = try extend(image, to: (geometry.targetWidth, geometry.targetHeight), gravity: options.extend.gravity, dpr: geometry.dprScale)
        }
        if options.extendAspectRatio.enabled, geometry.extendAspectRatioWidth > 0, geometry.extendAspectRatioHeight > 0 {
            image = try extend(
                image, to: (geometry.extendAspectRatioWidth, geometry.extendAspectRatioHeight), gravity: options.extendAspectRatio.gravity,
                dpr: geometry.dprScale)
        }
        if options.padding.isEnabled {
            let p = options.padding, dpr = geometry.dprScale
            let (top, right) = (VariantGeometry.scaleToEven(p.top, dpr), VariantGeometry.scaleToEven(p.right, dpr))
            let (bottom, left) = (VariantGeometry.scaleToEven(p.bottom, dpr), VariantGeometry.scaleToEven(p.left, dpr))
            image = try ImageProcessors.Extend(
                width: image.width + left + right, height: image.height + top + bottom, x: left, y: top, background: fill
            ).process(image)
        }
        if let background = options.background { image = try ImageProcessors.Flatten(background: background).process(image) }
        if let watermark, let placement = options.watermark {
            image = try watermark.place(on: image, placement, dpr: geometry.dprScale)
        }
        return image
    }

    /// Refuses geometry whose largest step would make more than ``maxPixels``.
    private func checkSize(_ geometry: VariantGeometry) throws(ImagoError) {
        let p = options.padding
        let padding = VariantGeometry.scaleToEven(p.left + p.right + p.top + p.bottom, geometry.dprScale)
        let widest = max(geometry.scaledWidth, geometry.targetWidth, geometry.extendAspectRatioWidth) + padding
        let tallest = max(geometry.scaledHeight, geometry.targetHeight, geometry.extendAspectRatioHeight) + padding
        let (pixels, overflow) = widest.multipliedReportingOverflow(by: tallest)
        guard !overflow, pixels <= maxPixels else {
            throw ImagoError(.processingFailed("the options make an image of \(widest)×\(tallest), over \(maxPixels) pixels"), url: nil, stage: .processing)
        }
    }

    /// Refuses a box over `maxPixels` before any work: an enlarged or extended result allocates
    /// 4 bytes for each of its pixels. (A result the box does not bound is checked by the
    /// processors themselves, against ``Imago/ImageProcessors/Resize/maxPixels``.)
    static func checkRequestedSize(_ options: ProcessingOptions, maxPixels: Int) throws(ServerError) {
        let maxSide = Double(ImageProcessors.Resize.maxSide)
        let padding = (options.padding.left + options.padding.right, options.padding.top + options.padding.bottom)
        let width = min((Double(options.width) * options.zoom.x + Double(padding.0)) * options.dpr, maxSide)
        let height = min((Double(options.height) * options.zoom.y + Double(padding.1)) * options.dpr, maxSide)
        guard width * height <= Double(maxPixels) else { throw .badRequest("the size asked for is over \(maxPixels) pixels") }
    }

    /// What extensions and padding show: the background when one is set, else transparency
    /// (flattened onto white later when the format has no alpha), as imgproxy's embed.
    private var fill: RGBAColor { options.background ?? .transparent }

    private func extend(_ image: Image, to size: (width: Int, height: Int), gravity: Gravity, dpr: Double) throws(ImagoError) -> Image {
        guard size.width > image.width || size.height > image.height else { return image }
        let canvas = (
            width: size.width > 0 ? max(size.width, image.width) : image.width, height: size.height > 0 ? max(size.height, image.height) : image.height
        )
        let (x, y) = VariantGeometry.position(outer: canvas, inner: (image.width, image.height), gravity: gravity, dpr: dpr)
        return try ImageProcessors.Extend(width: canvas.width, height: canvas.height, x: x, y: y, background: fill).process(image)
    }

    /// imgproxy's `cropImage`: a `width × height` window (0: the whole side) at `gravity`, or the
    /// most interesting one for smart gravity.
    static func crop(_ image: Image, width: Int, height: Int, gravity: Gravity, dpr: Double) throws(ImagoError) -> Image {
        guard width > 0 || height > 0 else { return image }
        let cropWidth = VariantGeometry.minNonZero(width, image.width), cropHeight = VariantGeometry.minNonZero(height, image.height)
        guard cropWidth < image.width || cropHeight < image.height else { return image }
        if gravity.kind == .smart { return try ImageProcessors.SmartCrop(width: cropWidth, height: cropHeight).process(image) }
        let (x, y) = VariantGeometry.position(outer: (image.width, image.height), inner: (cropWidth, cropHeight), gravity: gravity, dpr: dpr)
        return try ImageProcessors.Crop(x: x, y: y, width: cropWidth, height: cropHeight).process(image)
    }

    /// `image` back in the file's stored orientation: the inverse of turning it upright by
    /// `orientation` (a rotation, then a mirror for the mirrored ones).
    static func undo(_ orientation: ImageOrientation, on image: Image) throws(ImagoError) -> Image {
        let angle: Int =
            switch orientation {
            case .down, .downMirrored: 180
            case .leftMirrored, .right: 90
            case .rightMirrored, .left: 270
            default: 0
            }
        let mirrored = [.upMirrored, .downMirrored, .leftMirrored, .rightMirrored].contains(orientation)
        let unflipped = try ImageProcessors.Flip(horizontal: mirrored, vertical: false).process(image)
        return try (ImageProcessors.Rotate(degrees: -angle) ?? ImageProcessors.Rotate(degrees: 0)!).process(unflipped)
    }
}
