import Foundation

/// The sizes imgproxy's processing works out before it touches a pixel (its `CalcParams`), for a
/// source of `source` size in the output's orientation: the crop, the scale, the box, the crop
/// to the result and the aspect-ratio extension. Arithmetic and rounding follow imgproxy's
/// `processing/prepare.go`, so the same URL gives the same size.
struct VariantGeometry: Equatable {
    /// The `crop` option's area in source pixels (0: the whole side).
    var cropWidth = 0
    var cropHeight = 0
    /// Scale factors from the (cropped) source to the scaled image.
    var widthScale = 1.0
    var heightScale = 1.0
    /// What offsets, paddings and the box are multiplied by: `dpr`, less what `enlarge: false`
    /// or `max_result_dimension` took back.
    var dprScale = 1.0
    /// The box in pixels (0: free).
    var targetWidth = 0
    var targetHeight = 0
    /// The scaled image's size.
    var scaledWidth = 0
    var scaledHeight = 0
    /// The crop to the result after scaling (0: none on that side).
    var resultCropWidth = 0
    var resultCropHeight = 0
    /// The canvas of `extend_aspect_ratio` (0: none).
    var extendAspectRatioWidth = 0
    var extendAspectRatioHeight = 0

    /// `isVector`: the source is a vector (SVG), which is enlarged to the box without `enlarge`, as imgproxy does.
    init(source: (width: Int, height: Int), options o: ProcessingOptions, maxResultDimension: Int, isVector: Bool = false) {
        cropWidth = o.crop.map { Self.cropSize(source.width, $0.width) } ?? 0
        cropHeight = o.crop.map { Self.cropSize(source.height, $0.height) } ?? 0
        let widthToScale = Self.minNonZero(cropWidth, source.width), heightToScale = Self.minNonZero(cropHeight, source.height)
        calculateScale(widthToScale, heightToScale, o, isVector: isVector)
        calculateSizes(widthToScale, heightToScale, o)
        limitScale(widthToScale, heightToScale, o, maxResultDimension: maxResultDimension)
    }

    static func minNonZero(_ a: Int, _ b: Int) -> Int { a == 0 ? b : b == 0 ? a : min(a, b) }
    /// Go's math.Round: halves away from zero.
    static func scale(_ a: Int, _ factor: Double) -> Int { a == 0 ? 0 : Int((Double(a) * factor).rounded()) }
    static func scaleToEven(_ a: Int, _ factor: Double) -> Int { a == 0 ? 0 : Int((Double(a) * factor).rounded(.toNearestOrEven)) }

    static func cropSize(_ original: Int, _ crop: Double) -> Int {
        if crop == 0 { return 0 }
        if crop >= 1 { return Int(crop) }
        return max(1, scale(original, crop))
    }

    private mutating func calculateScale(_ width: Int, _ height: Int, _ o: ProcessingOptions, isVector: Bool) {
        var wshrink = 1.0, hshrink = 1.0
        let srcW = Double(width), srcH = Double(height)
        let dstW = o.width == 0 ? srcW : Double(o.width), dstH = o.height == 0 ? srcH : Double(o.height)
        if dstW != srcW { wshrink = srcW / dstW }
        if dstH != srcH { hshrink = srcH / dstH }
        if wshrink != 1 || hshrink != 1 {
            var type = o.resizingType
            if type == .auto {
                let sameShape = (srcW - srcH >= 0) == (dstW - dstH >= 0)
                type = sameShape ? .fill : .fit
            }
            switch true {
            case o.width == 0 && type != .force: wshrink = hshrink
            case o.height == 0 && type != .force: hshrink = wshrink
            case type == .fit:
                wshrink = max(wshrink, hshrink)
                hshrink = wshrink
            case type == .fill || type == .fillDown:
                wshrink = min(wshrink, hshrink)
                hshrink = wshrink
            default: break
            }
        }
        wshrink /= o.zoom.x
        hshrink /= o.zoom.y
        dprScale = o.dpr
        if !o.enlarge, !isVector {
            let minShrink = min(wshrink, hshrink)
            if minShrink < 1 {
                wshrink /= minShrink
                hshrink /= minShrink
                if !o.extend.enabled { dprScale /= minShrink }
            }
            dprScale = min(dprScale, min(wshrink, hshrink))
        }
        if o.minWidth > 0, srcW / Double(o.minWidth) < wshrink {
            let minShrink = srcW / Double(o.minWidth)
            hshrink /= wshrink / minShrink
            wshrink = minShrink
        }
        if o.minHeight > 0, srcH / Double(o.minHeight) < hshrink {
            let minShrink = srcH / Double(o.minHeight)
            wshrink /= hshrink / minShrink
            hshrink = minShrink
        }
        wshrink /= dprScale
        hshrink /= dprScale
        wshrink = min(wshrink, srcW)
        hshrink = min(hshrink, srcH)
        widthScale = 1 / wshrink
        heightScale = 1 / hshrink
    }

    private mutating func calculateSizes(_ width: Int, _ height: Int, _ o: ProcessingOptions) {
        targetWidth = Self.scale(o.width, dprScale * o.zoom.x)
        targetHeight = Self.scale(o.height, dprScale * o.zoom.y)
        scaledWidth = Self.scale(width, widthScale)
        scaledHeight = Self.scale(height, heightScale)
        (resultCropWidth, resultCropHeight) = (targetWidth, targetHeight)
        if o.resizingType == .fillDown, !o.enlarge, targetWidth > 0, targetHeight > 0 {
            let diffW = Double(targetWidth) / Double(scaledWidth), diffH = Double(targetHeight) / Double(scaledHeight)
            if diffW > diffH, diffW > 1 {
                resultCropHeight = Self.scale(scaledWidth, Double(targetHeight) / Double(targetWidth))
                resultCropWidth = scaledWidth
            } else if diffH > diffW, diffH > 1 {
                resultCropWidth = Self.scale(scaledHeight, Double(targetWidth) / Double(targetHeight))
                resultCropHeight = scaledHeight
            }
        }
        (extendAspectRatioWidth, extendAspectRatioHeight) = (0, 0)
        if o.extendAspectRatio.enabled, targetWidth > 0, targetHeight > 0 {
            let outWidth = Self.minNonZero(scaledWidth, resultCropWidth), outHeight = Self.minNonZero(scaledHeight, resultCropHeight)
            let diffW = Double(targetWidth) / Double(outWidth), diffH = Double(targetHeight) / Double(outHeight)
            if diffH > diffW {
                extendAspectRatioHeight = Self.scale(outWidth, Double(targetHeight) / Double(targetWidth))
                extendAspectRatioWidth = outWidth
            } else if diffW > diffH {
                extendAspectRatioWidth = Self.scale(outHeight, Double(targetWidth) / Double(targetHeight))
                extendAspectRatioHeight = outHeight
            }
        }
    }

    private mutating func limitScale(_ width: Int, _ height: Int, _ o: ProcessingOptions, maxResultDimension: Int) {
        guard maxResultDimension > 0 else { return }
        var outWidth = Self.minNonZero(scaledWidth, resultCropWidth), outHeight = Self.minNonZero(scaledHeight, resultCropHeight)
        if o.extend.enabled {
            outWidth = max(outWidth, targetWidth)
            outHeight = max(outHeight, targetHeight)
        } else if o.extendAspectRatio.enabled {
            outWidth = max(outWidth, extendAspectRatioWidth)
            outHeight = max(outHeight, extendAspectRatioHeight)
        }
        outWidth += Self.scaleToEven(o.padding.left, dprScale) + Self.scaleToEven(o.padding.right, dprScale)
        outHeight += Self.scaleToEven(o.padding.top, dprScale) + Self.scaleToEven(o.padding.bottom, dprScale)
        guard outWidth > maxResultDimension || outHeight > maxResultDimension else { return }
        let downScale = Double(maxResultDimension) / Double(max(outWidth, outHeight))
        widthScale = max(widthScale * downScale, 1 / Double(width))
        heightScale = max(heightScale * downScale, 1 / Double(height))
        dprScale *= downScale
        calculateSizes(width, height, o)
    }

    /// Where an `inner` box sits in an `outer` one at `gravity` (imgproxy's `calcPosition`):
    /// offsets of magnitude 1 or more are pixels times `dpr`, smaller ones fractions of the outer
    /// side; the box is kept inside unless `allowOverflow`.
    static func position(
        outer: (width: Int, height: Int), inner: (width: Int, height: Int), gravity: Gravity, dpr: Double, allowOverflow: Bool = false
    ) -> (x: Int, y: Int) {
        var left: Int, top: Int
        if gravity.kind == .focusPoint {
            left = scaleToEven(outer.width, gravity.x) - inner.width / 2
            top = scaleToEven(outer.height, gravity.y) - inner.height / 2
        } else {
            let offX = abs(gravity.x) >= 1 ? Int((gravity.x * dpr).rounded(.toNearestOrEven)) : scaleToEven(outer.width, gravity.x)
            let offY = abs(gravity.y) >= 1 ? Int((gravity.y * dpr).rounded(.toNearestOrEven)) : scaleToEven(outer.height, gravity.y)
            left = shrinkToEven(outer.width - inner.width + 1, 2) + offX
            top = shrinkToEven(outer.height - inner.height + 1, 2) + offY
            if [.north, .northEast, .northWest].contains(gravity.kind) { top = offY }
            if [.east, .northEast, .southEast].contains(gravity.kind) { left = outer.width - inner.width - offX }
            if [.south, .southEast, .southWest].contains(gravity.kind) { top = outer.height - inner.height - offY }
            if [.west, .northWest, .southWest].contains(gravity.kind) { left = offX }
        }
        let (minX, maxX) = allowOverflow ? (-inner.width + 1, outer.width - 1) : (0, outer.width - inner.width)
        let (minY, maxY) = allowOverflow ? (-inner.height + 1, outer.height - 1) : (0, outer.height - inner.height)
        return (max(minX, min(left, maxX)), max(minY, min(top, maxY)))
    }

    static func shrinkToEven(_ a: Int, _ shrink: Double) -> Int { a == 0 ? 0 : Int((Double(a) / shrink).rounded(.toNearestOrEven)) }
}
