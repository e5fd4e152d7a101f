import Foundation
import Imago

/// imgproxy's geometry as plan steps: trim, rotate and flip, crop, scale, crop to the result (at
/// the gravity, a focus point or the most interesting region), filters, extend, extend to the
/// aspect ratio, padding, background and watermark, in the order of imgproxy's `mainPipeline`.
/// The numbers are ``VariantGeometry``'s (imgproxy's `CalcParams`) from the source's full size, so
/// ``PlanProcessor`` can run them on a decode reduced to what the scale needs.
struct ImgproxySteps: StepPlanning {
    let options: ProcessingOptions
    /// `options.key`, made once: the identifier is asked for several times per image (the decode
    /// plan, the processors' identity, the memory estimate), and encoding the options each time
    /// was a tenth of a cold request's CPU.
    let optionsKey: String
    /// The server's limit on the result's longest side, beside the URL's own.
    let maxResultDimension: Int
    /// The server's watermark, when it has one and the URL asks for it.
    let watermark: Watermark?
    /// What smart and object gravities look for faces with.
    var faces = FaceSettings()

    /// The steps for `options`; `optionsKey` is `options.key` when the caller has made it already.
    init(options: ProcessingOptions, optionsKey: String? = nil, maxResultDimension: Int, watermark: Watermark?) {
        self.options = options
        self.optionsKey = optionsKey ?? options.key
        self.maxResultDimension = maxResultDimension
        self.watermark = watermark
    }

    /// The server's face settings, as imgproxy Pro's.
    struct FaceSettings: Sendable {
        /// The face cascade, when the server has one: read at start when a setting needs it,
        /// else when a URL first asks for faces.
        var cascade: FaceCascade?
        /// The face cascade's detector, nil when there is none (or it cannot be read).
        var detector: FaceDetector? { cascade?.detector }
        /// `IMGPROXY_SMART_CROP_FACE_DETECTION`: smart gravity keeps faces first.
        var smartCropFindsFaces = false
        /// `IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP`: an object gravity without faces
        /// is smart gravity (else the centre).
        var objectsFallBackToSmart = true

        /// What `options` gives faces to decide: part of its variants' keys (empty when nothing).
        func identity(for options: ProcessingOptions) -> String {
            let gravities = [options.gravity] + (options.crop?.gravity.map { [$0] } ?? [])
            let smart = smartCropFindsFaces && gravities.contains { $0.kind == .smart || ($0.kind == .objects && objectsFallBackToSmart) }
            let objects = gravities.contains { $0.wantsFaces }
            guard smart || objects, let detector else { return "" }
            return "faces:\(detector.identifier),smart:\(smartCropFindsFaces),fallback:\(objectsFallBackToSmart)"
        }
    }

    var identifier: String {
        let faces = faces.identity(for: options)
        return "imgproxy(\(optionsKey)\(watermark.map { ",wm:" + $0.identifier } ?? "")\(faces.isEmpty ? "" : "," + faces))"
    }

    private var effectiveMaxResultDimension: Int {
        let asked = options.maxResultDimension
        return asked > 0 && maxResultDimension > 0 ? min(asked, maxResultDimension) : max(asked, maxResultDimension)
    }

    func plan(_ source: SourceFacts, look: PixelLook) throws(ImagoError) -> StepPlan? {
        var plan = StepPlan(source: source.size)
        if options.autoRotate == false, source.orientation != .up { plan.append(.undoOrientation(source.orientation)) }
        if let trim = options.trim {
            // Trim measures the picture itself: the full decode's pixels.
            guard let picture = try look.picture(after: plan) else { return nil }
            let trimmer = try ImageProcessors.Trim(
                threshold: trim.threshold, color: trim.color, equalHorizontal: trim.equalHorizontal, equalVertical: trim.equalVertical)
            if let box = trimmer.bounds(in: picture) { plan.append(.crop(PixelBox(x: box.x, y: box.y, width: box.width, height: box.height))) }
        }
        if options.rotate != 0, ImageProcessors.Rotate(degrees: options.rotate) != nil { plan.append(.rotate(degrees: options.rotate)) }
        if options.flipHorizontal || options.flipVertical { plan.append(.flip(horizontal: options.flipHorizontal, vertical: options.flipVertical)) }
        guard let full = plan.size else { return plan }
        let geometry = VariantGeometry(
            source: (full.width, full.height), options: options, maxResultDimension: effectiveMaxResultDimension, isVector: source.isVector)
        crop(&plan, width: geometry.cropWidth, height: geometry.cropHeight, gravity: options.crop?.gravity ?? options.gravity, dpr: 1)
        let scaled = PixelSize(width: max(1, geometry.scaledWidth), height: max(1, geometry.scaledHeight))
        if plan.size != scaled { plan.append(.resize(width: scaled.width, height: scaled.height)) }
        crop(&plan, width: geometry.resultCropWidth, height: geometry.resultCropHeight, gravity: options.gravity, dpr: geometry.dprScale)
        if options.blur > 0 { plan.append(.filter(SizeKeepingProcessor(try ImageProcessors.GaussianBlur(radius: options.blur)))) }
        if options.sharpen > 0 { plan.append(.filter(SizeKeepingProcessor(try ImageProcessors.Sharpen(sigma: options.sharpen)))) }
        if options.pixelate > 1 { plan.append(.filter(SizeKeepingProcessor(try ImageProcessors.Pixelate(size: options.pixelate)))) }
        if options.extend.enabled {
            extend(&plan, to: (geometry.targetWidth, geometry.targetHeight), gravity: options.extend.gravity, dpr: geometry.dprScale)
        }
        if options.extendAspectRatio.enabled, geometry.extendAspectRatioWidth > 0, geometry.extendAspectRatioHeight > 0 {
            extend(
                &plan, to: (geometry.extendAspectRatioWidth, geometry.extendAspectRatioHeight), gravity: options.extendAspectRatio.gravity,
                dpr: geometry.dprScale)
        }
        if options.padding.isEnabled, let size = plan.size {
            let p = options.padding, dpr = geometry.dprScale
            let (top, right) = (VariantGeometry.scaleToEven(p.top, dpr), VariantGeometry.scaleToEven(p.right, dpr))
            let (bottom, left) = (VariantGeometry.scaleToEven(p.bottom, dpr), VariantGeometry.scaleToEven(p.left, dpr))
            plan.append(.extend(width: size.width + left + right, height: size.height + top + bottom, x: left, y: top, background: fill))
        }
        if let background = options.background { plan.append(.flatten(background)) }
        if let watermark, let placement = options.watermark {
            plan.append(.filter(PlacedWatermark(watermark: watermark, placement: placement, dpr: geometry.dprScale)))
        }
        return plan
    }

    /// Refuses a box over `maxPixels` before any work: an enlarged or extended result allocates
    /// 4 bytes for each of its pixels. (A result the box does not bound is refused by the plan's
    /// canvas budget before its steps run.)
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

    private func extend(_ plan: inout StepPlan, to target: (width: Int, height: Int), gravity: Gravity, dpr: Double) {
        guard let size = plan.size, target.width > size.width || target.height > size.height else { return }
        let canvas = (
            width: target.width > 0 ? max(target.width, size.width) : size.width, height: target.height > 0 ? max(target.height, size.height) : size.height
        )
        let (x, y) = VariantGeometry.position(outer: canvas, inner: (size.width, size.height), gravity: gravity, dpr: dpr)
        plan.append(.extend(width: canvas.width, height: canvas.height, x: x, y: y, background: fill))
    }

    /// imgproxy's `cropImage`: a `width × height` window (0: the whole side) at `gravity`, the
    /// most interesting one for smart gravity (faces first with `IMGPROXY_SMART_CROP_FACE_DETECTION`),
    /// the one holding the most of the faces for an object gravity.
    private func crop(_ plan: inout StepPlan, width: Int, height: Int, gravity: Gravity, dpr: Double) {
        guard width > 0 || height > 0, let size = plan.size else { return }
        let cropWidth = VariantGeometry.minNonZero(width, size.width), cropHeight = VariantGeometry.minNonZero(height, size.height)
        guard cropWidth < size.width || cropHeight < size.height else { return }
        let smartFaces = faces.smartCropFindsFaces ? faces.detector : nil
        switch gravity.kind {
        case .smart:
            plan.append(.smartCrop(width: cropWidth, height: cropHeight, faces: smartFaces, withoutFaces: .saliency))
            return
        case .objects:
            let detector = gravity.wantsFaces ? faces.detector : nil
            if detector != nil || faces.objectsFallBackToSmart {
                plan.append(
                    .smartCrop(
                        width: cropWidth, height: cropHeight, faces: detector ?? smartFaces, withoutFaces: faces.objectsFallBackToSmart ? .saliency : .centre))
                return
            }
        default: break
        }
        let (x, y) = VariantGeometry.position(outer: (size.width, size.height), inner: (cropWidth, cropHeight), gravity: gravity, dpr: dpr)
        plan.append(.crop(PixelBox(x: x, y: y, width: cropWidth, height: cropHeight)))
    }
}

/// A face cascade file read once, when first needed: `imago serve` starts without parsing
/// Debian's 900 KB of XML (about 90 ms) unless a setting needs faces from the start.
final class FaceCascade: Sendable {
    private let path: String
    /// Whether the file was read, and what it gave.
    private let state: Locked<(read: Bool, detector: FaceDetector?)>

    /// The cascade in the file at `path`, read on first use; one that cannot be read finds no faces.
    init(path: String) {
        self.path = path
        state = Locked((false, nil))
    }

    /// A cascade already read.
    init(_ detector: FaceDetector) {
        path = ""
        state = Locked((true, detector))
    }

    var detector: FaceDetector? {
        state.withLock { state in
            if !state.read { state = (true, try? FaceDetector(contentsOf: URL(fileURLWithPath: path))) }
            return state.detector
        }
    }
}

/// The server's watermark placed on the result, as a plan step.
struct PlacedWatermark: PixelFilter {
    let watermark: Watermark
    let placement: ProcessingOptions.WatermarkPlacement
    /// What pixel offsets are multiplied by.
    let dpr: Double

    func apply(to image: Image) throws(ImagoError) -> Image { try watermark.place(on: image, placement, dpr: dpr) }
}
