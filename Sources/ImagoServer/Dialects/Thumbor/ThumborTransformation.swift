import Foundation
import Imago

/// thumbor's transformer and its filters as plan steps, as `Transformer.transform` and the
/// handler run them: the after-load filters, trim, smart detection (thumbor's detectors, else Imago's saliency), the manual
/// crop, the target size, the focal points, then `fit-in` or the crop to the box's aspect around
/// the focal points' centre of mass, the resize and the flips; then the post-transform filters in
/// the URL's order. Sizes are worked out with thumbor's own Python arithmetic (floats, banker's
/// rounding, truncations), so the boxes match it to the pixel; ``PlanProcessor`` runs them.
struct ThumborTransformation: StepPlanning {
    var url: ThumborURL
    var filters: [ThumborFilter]
    /// Focal points from the pre-load filters (`focal`, `extract_focal`), in source pixels.
    var focalPoints: [FocalPoint] = []
    /// thumbor's `DETECTORS`, which `/smart/` runs; none: Imago's saliency.
    var detectors = ThumborDetectors.none
    /// Whether the EXIF orientation is applied (thumbor's `RESPECT_ORIENTATION`, off by default).
    var respectsOrientation = false
    /// Images the watermark and frame filters place, by their URL, loaded beforehand.
    var overlays: [String: Image] = [:]
    /// The most pixels the watermark filter may scale its image to.
    var maxPixels = 50_000_000
    /// What else decides the picture (the variant's key): part of the identifier.
    var identity = ""

    /// The box as thumbor's request holds it: pixels, or `orig`; `no_upscale` and `fit-in` change
    /// it, and `fill` and `upscale` read it.
    var requestWidth: ThumborURL.Side
    var requestHeight: ThumborURL.Side
    /// thumbor's `MAX_WIDTH` and `MAX_HEIGHT` (0: none).
    var maxSize: (width: Int, height: Int)

    /// The transformation of `url` with `filters`; under `maxSize` (thumbor's `MAX_WIDTH` and
    /// `MAX_HEIGHT`) the box asked for is clamped to it, as thumbor's handler clamps it.
    init(url: ThumborURL, filters: [ThumborFilter], maxSize: (width: Int, height: Int) = (0, 0)) {
        self.url = url
        self.filters = filters
        self.maxSize = maxSize
        requestWidth = url.width
        requestHeight = url.height
        if maxSize.width > 0, case .pixels(let width) = requestWidth, width > maxSize.width { requestWidth = .pixels(maxSize.width) }
        if maxSize.height > 0, case .pixels(let height) = requestHeight, height > maxSize.height { requestHeight = .pixels(maxSize.height) }
    }

    var identifier: String { "thumbor(\(identity.isEmpty ? url.signedPart : identity))" }

    func plan(_ source: SourceFacts, look: PixelLook) throws(ImagoError) -> StepPlan? {
        var state = self
        return try state.transform(source, look)
    }

    /// The image made from `decoded`, and the plan that made it.
    func run(_ decoded: Image) throws(ImagoError) -> (image: Image, plan: StepPlan) {
        try PlanProcessor(self, maxPixels: maxPixels).run(decoded)
    }

    private mutating func transform(_ source: SourceFacts, _ look: PixelLook) throws(ImagoError) -> StepPlan? {
        // thumbor's boxes read the source's own pixels at their positions: those plans take the full decode.
        guard look.hasPixels || worksOnAnyScale else { return nil }
        var plan = StepPlan(source: source.size)
        if !respectsOrientation, source.orientation != .up { plan.append(.undoOrientation(source.orientation)) }
        if url.filters.contains("cover()"), source.format == .gif, (source.frameCount ?? 0) > 1 { plan.append(.firstFrame) }
        guard var size = plan.size.map({ (width: $0.width, height: $0.height) }) else { return plan }
        var crop = url.crop
        // thumbor's engine normalises the image it loaded (before turning it by its orientation,
        // which its transformer does) to MAX_WIDTH or MAX_HEIGHT, and moves the manual crop with it.
        let turned = respectsOrientation && source.orientation.swapsDimensions
        let loaded = turned ? (width: size.height, height: size.width) : size
        if let normal = Self.normalizedSize(loaded, max: maxSize) {
            plan.append(.resize(width: turned ? normal.height : normal.width, height: turned ? normal.width : normal.height))
            plan.firstReportedStep = plan.steps.count
            size = turned ? (normal.height, normal.width) : normal
            if let box = crop, box.left > 0 || box.top > 0 || box.right > 0 || box.bottom > 0 {
                // Clamped first (the crop is clamped to the image below), so the products stay small.
                let x = { (value: Int) in min(max(value, 0), loaded.width) * normal.width / loaded.width }
                let y = { (value: Int) in min(max(value, 0), loaded.height) * normal.height / loaded.height }
                crop = ThumborURL.Box(left: x(box.left), top: y(box.top), right: x(box.right), bottom: y(box.bottom))
            }
        }
        for filter in filters where filter.phase == .afterLoad {
            if case .noUpscale = filter {
                requestWidth = .pixels(min(pixels(requestWidth, size.width), size.width))
                requestHeight = .pixels(min(pixels(requestHeight, size.height), size.height))
            }
        }
        if let trim = url.trim {
            guard let picture = try look.picture(after: plan) else { return nil }
            if let box = Self.trimBox(picture, bottomRight: trim.bottomRight, tolerance: trim.tolerance) {
                plan.append(.crop(PixelBox(left: box.left, top: box.top, right: box.right + 1, bottom: box.bottom + 1)))
                size = (box.right + 1 - box.left, box.bottom + 1 - box.top)
                if let manual = crop {
                    crop = ThumborURL.Box(
                        left: manual.left - box.left, top: manual.top - box.top, right: manual.right - box.left, bottom: manual.bottom - box.top)
                }
            }
        }
        var focal = focalPoints
        if url.smart, size.width > 0, size.height > 0 {
            guard let picture = try look.picture(after: plan) else { return nil }
            // thumbor's detectors when configured (none finding anything leaves the alignment);
            // else Imago's saliency.
            if detectors.isEmpty {
                focal.append(Self.salientPoint(picture))
            } else {
                focal += detectors.focalPoints(in: picture)
            }
        }
        // Manual crop, clamped; an empty one is none.
        if let box = crop {
            let clamp = { (value: Int, limit: Int) in min(max(value, 0), limit) }
            let (left, top) = (clamp(box.left, size.width), clamp(box.top, size.height))
            let (right, bottom) = (clamp(box.right, size.width), clamp(box.bottom, size.height))
            if left >= right || top >= bottom {
                crop = nil
            } else {
                crop = ThumborURL.Box(left: left, top: top, right: right, bottom: bottom)
                plan.append(.crop(PixelBox(left: left, top: top, right: right, bottom: bottom)))
                size = (right - left, bottom - top)
            }
        }
        var target = targetSize(size)
        // Focal points inside the manual crop, moved with it; else the alignment's point.
        if let crop, !focal.isEmpty {
            focal = focal.compactMap { point in
                guard point.x >= crop.left, point.x <= crop.right, point.y >= crop.top, point.y <= crop.bottom else { return nil }
                var moved = point
                moved.x -= crop.left
                moved.y -= crop.top
                return moved
            }
        }
        let explicitFocus = !focal.isEmpty
        if focal.isEmpty { focal = [alignmentPoint(size)] }
        plan.focalPoints = focal
        if url.debug {
            if explicitFocus { plan.append(.filter(ThumborRectangles(points: focal))) }
        } else {
            if url.fitIn != .none {
                if let resize = fitInSize(size, &target) { plan.append(.resize(width: resize.width, height: resize.height)) }
            } else {
                if !filters.contains(.stretch), let box = Self.autoCropBox(size, target: target, focal: focal) {
                    plan.append(.crop(PixelBox(left: box.left, top: box.top, right: box.right, bottom: box.bottom)))
                    size = (box.right - box.left, box.bottom - box.top)
                }
                if target.width != Double(size.width) || target.height != Double(size.height) {
                    plan.append(.resize(width: Int(target.width == 0 ? 1 : target.width), height: Int(target.height == 0 ? 1 : target.height)))
                }
            }
            if url.flipHorizontal { plan.append(.flip(horizontal: true, vertical: false)) }
            if url.flipVertical { plan.append(.flip(horizontal: false, vertical: true)) }
        }
        // thumbor's handler runs no post-transform filter on a GIF source: it skips them unless
        // `USE_GIFSICLE_ENGINE` is None, and it is False by default.
        guard source.format != .gif else { return plan }
        for filter in filters where filter.phase == .postTransform {
            if case .rotate(let degrees) = filter {
                // Pillow's ROTATE_90 turns counter-clockwise; the plan's rotation turns clockwise.
                let clockwise = (360 - ((degrees % 360) + 360) % 360) % 360
                if degrees % 90 == 0, clockwise != 0 { plan.append(.rotate(degrees: clockwise)) }
            } else {
                plan.append(.filter(ThumborFilterStep(filter: filter, transformation: self)))
            }
        }
        return plan
    }

    /// Whether a reduced decode gives the same picture: no step reads the source's pixels at
    /// their own positions before the resize (a manual crop, focal points, debug's boxes, a GIF's
    /// cover); trim and smart detection ask for the pixels themselves.
    private var worksOnAnyScale: Bool {
        !url.debug && url.crop == nil && focalPoints.isEmpty && !url.filters.contains("cover()")
    }

    /// `BaseEngine.normalize`'s size for a loaded image of `size` under thumbor's `MAX_WIDTH` and
    /// `MAX_HEIGHT`, nil when it keeps its size. Its arithmetic exactly: a side is scaled to its
    /// limit only when it is over it by more than the other side is over its own (a limit of 0
    /// counting as 0, so a square image over both equally is left as it is).
    static func normalizedSize(_ size: (width: Int, height: Int), max: (width: Int, height: Int)) -> (width: Int, height: Int)? {
        guard size.width > max.width || size.height > max.height else { return nil }
        let (widthOver, heightOver) = (size.width - max.width, size.height - max.height)
        if max.width > 0, widthOver > heightOver {
            let height = (Double(max.width) * Double(size.height) / Double(size.width)).rounded(.toNearestOrEven)
            return (max.width, Swift.max(1, Int(height)))
        }
        if max.height > 0, heightOver > widthOver {
            let width = (Double(max.height) * Double(size.width) / Double(size.height)).rounded(.toNearestOrEven)
            return (Swift.max(1, Int(width)), max.height)
        }
        return nil
    }

    /// A side's pixels, `orig` being the image's own.
    func pixels(_ side: ThumborURL.Side, _ own: Int) -> Int {
        if case .pixels(let value) = side { return value }
        return own
    }

    private func isZero(_ side: ThumborURL.Side) -> Bool { side == .pixels(0) }

    /// `_calculate_target_dimensions`: the box in floats, a free side from the other and the aspect.
    private func targetSize(_ size: (width: Int, height: Int)) -> (width: Double, height: Double) {
        let (sourceWidth, sourceHeight) = (Double(size.width), Double(size.height))
        guard !(isZero(requestWidth) && isZero(requestHeight)) else { return (sourceWidth, sourceHeight) }
        let height = Double(pixels(requestHeight, size.height)), width = Double(pixels(requestWidth, size.width))
        let targetWidth = isZero(requestWidth) ? (height * sourceWidth / sourceHeight).rounded(.toNearestOrEven) : width
        let targetHeight = isZero(requestHeight) ? (width * sourceHeight / sourceWidth).rounded(.toNearestOrEven) : height
        return (targetWidth, targetHeight)
    }
    /// `auto_crop`'s box: the target's aspect cut around the focal points' centre of mass; nil when
    /// the aspects already agree (to two decimals, as thumbor compares them).
    static func autoCropBox(_ size: (width: Int, height: Int), target: (width: Double, height: Double), focal: [FocalPoint]) -> ThumborURL.Box? {
        let (sourceWidth, sourceHeight) = (Double(size.width), Double(size.height))
        let targetHeight = target.height == 0 ? 1 : target.height, targetWidth = target.width == 0 ? 1 : target.width
        guard round2(sourceWidth / sourceHeight) != round2(targetWidth / targetHeight) else { return nil }
        let totalWeight = focal.reduce(0) { $0 + $1.weight }
        let focalX = (focal.reduce(0) { $0 + Double($1.x) * $1.weight } / totalWeight).rounded(.down)
        let focalY = (focal.reduce(0) { $0 + Double($1.y) * $1.weight } / totalWeight).rounded(.down)
        let cropWidth: Double, cropHeight: Double
        if target.width / sourceWidth > target.height / sourceHeight {
            cropWidth = sourceWidth
            cropHeight = (sourceWidth * target.height / targetWidth).rounded(.toNearestOrEven)
        } else {
            cropWidth = (target.width * sourceHeight / targetHeight).rounded(.up)
            cropHeight = sourceHeight
        }
        let left = Int(min(max(focalX - cropWidth / 2, 0), sourceWidth - cropWidth).rounded(.toNearestOrEven))
        let top = Int(min(max(focalY - cropHeight / 2, 0), sourceHeight - cropHeight).rounded(.toNearestOrEven))
        return ThumborURL.Box(left: left, top: top, right: min(left + Int(cropWidth), size.width), bottom: min(top + Int(cropHeight), size.height))
    }

    /// The alignment's focal point (thumbor's `FocalPoint.from_alignment`).
    private func alignmentPoint(_ size: (width: Int, height: Int)) -> FocalPoint {
        let fractions: [String: Double] = ["left": 0, "center": 0.5, "right": 1, "top": 0, "middle": 0.5, "bottom": 1]
        return FocalPoint(
            x: Int(Double(size.width) * fractions[url.horizontalAlignment.rawValue]!), y: Int(Double(size.height) * fractions[url.verticalAlignment.rawValue]!))
    }

    /// `fit_in_resize`'s size, nil when the image already fits (and not `full-`); it also turns
    /// the box for `adaptive-` and widens the request's box to the resized image (for `fill`).
    private mutating func fitInSize(_ size: (width: Int, height: Int), _ target: inout (width: Double, height: Double)) -> (width: Int, height: Int)? {
        let (sourceWidth, sourceHeight) = (Double(size.width), Double(size.height))
        if url.adaptive, (sourceWidth < sourceHeight && target.width > target.height) || (sourceWidth > sourceHeight && target.width < target.height) {
            swap(&requestWidth, &requestHeight)
            target = (target.height, target.width)
        }
        let sign = url.fitIn == .full ? -1.0 : 1.0
        if sign == 1, target.width >= sourceWidth, target.height >= sourceHeight { return nil }
        let resizeWidth: Double, resizeHeight: Double
        if sourceWidth / target.width * sign >= sourceHeight / target.height * sign {
            resizeHeight = (sourceHeight * target.width / sourceWidth + 1e-5).rounded(.toNearestOrEven)
            resizeWidth = target.width
        } else {
            resizeHeight = target.height
            resizeWidth = (sourceWidth * target.height / sourceHeight + 1e-5).rounded(.toNearestOrEven)
        }
        let requestedWidth = Double(pixels(requestWidth, size.width)), requestedHeight = Double(pixels(requestHeight, size.height))
        requestWidth = .pixels(Int(max(requestedWidth, resizeWidth)))
        requestHeight = .pixels(Int(max(requestedHeight, resizeHeight)))
        return (Int(resizeWidth), Int(resizeHeight))
    }

    /// Python's `round(x, 2)`.
    static func round2(_ value: Double) -> Double { (value * 100).rounded(.toNearestOrEven) / 100 }

    func checkCanvas(_ width: Int, _ height: Int) throws(ImagoError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maxPixels, width > 0, height > 0 else {
            throw ImagoError(.processingFailed("the URL asks for an image of \(width)×\(height), over \(maxPixels) pixels"), url: nil, stage: .processing)
        }
    }

    /// thumbor's `_bounding_box`: what differs from the corner's colour by more than `tolerance`
    /// (Euclidean over the channels thumbor's image has); nil when nothing would be left.
    static func trimBox(_ image: Image, bottomRight: Bool, tolerance: Int) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let (width, height) = (image.width, image.height)
        let pixels = image.frames[0].pixels
        let channels = image.metadata.hasAlpha ? 4 : 3
        let reference = bottomRight ? ((height - 1) * width + width - 1) * 4 : 0
        func differs(_ x: Int, _ y: Int) -> Bool {
            let at = (y * width + x) * 4
            var sum = 0.0
            for c in 0..<channels {
                let d = Double(Int(pixels[at + c]) - Int(pixels[reference + c]))
                sum += d * d
            }
            return sum.squareRoot() > Double(tolerance)
        }
        var box = (left: width, top: height, right: 0, bottom: 0)
        for y in 0..<height {
            var x = 0
            while x < width {
                if differs(x, y) {
                    box.left = min(box.left, x)
                    box.top = min(box.top, y)
                    box.bottom = y
                    break
                }
                x += 1
            }
            let minRight = max(x, box.right)
            var xi = width - 1
            while xi > minRight {
                if differs(xi, y) {
                    box.right = max(box.right, xi)
                    break
                }
                xi -= 1
            }
        }
        guard box.right >= box.left, box.bottom >= box.top else { return nil }
        return box
    }

    /// Where `smart/` centres: the middle of the most interesting square a quarter of the image's
    /// shorter side wide (Imago's saliency, where thumbor runs its detectors).
    static func salientPoint(_ image: Image) -> FocalPoint {
        let side = max(1, min(image.width, image.height) / 2)
        guard let crop = try? ImageProcessors.SmartCrop(width: side, height: side) else {
            return FocalPoint(x: image.width / 2, y: image.height / 2)
        }
        let origin = crop.origin(in: image)
        return .square(left: origin.x, top: origin.y, width: min(side, image.width), height: min(side, image.height), origin: "detection")
    }

    /// `debug/`: each focal point's box outlined in white, one pixel wide (Pillow's default ink).
    static func drawRectangles(_ image: Image, _ points: [FocalPoint]) -> Image {
        var frames = image.frames
        for index in frames.indices {
            var pixels = frames[index].pixels
            for point in points {
                let width = point.width <= 1 ? 10 : point.width, height = point.height <= 1 ? 10 : point.height
                let (x0, y0) = (point.x - width / 2, point.y - height / 2)
                let (x1, y1) = (x0 + width, y0 + height)
                func set(_ x: Int, _ y: Int) {
                    guard x >= 0, y >= 0, x < image.width, y < image.height else { return }
                    let at = (y * image.width + x) * 4
                    pixels[at] = 255
                    pixels[at + 1] = 255
                    pixels[at + 2] = 255
                    pixels[at + 3] = 255
                }
                for x in max(x0, 0)...max(min(x1, image.width - 1), max(x0, 0)) {
                    set(x, y0)
                    set(x, y1)
                }
                for y in max(y0, 0)...max(min(y1, image.height - 1), max(y0, 0)) {
                    set(x0, y)
                    set(x1, y)
                }
            }
            frames[index].pixels = pixels
        }
        return Image(width: image.width, height: image.height, frames: frames, loopCount: image.loopCount, metadata: image.metadata).carryingGainMap(
            of: image, .unchanged)
    }
}
