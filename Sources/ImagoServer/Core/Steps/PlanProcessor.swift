import Imago

/// The one executor of every dialect's pixel work: the pipeline's processor for a plan. It asks
/// the dialect's geometry (``StepPlanning``) for its steps, derives from them the reduced decode
/// they need, checks the canvas budget before any step runs, maps full-size boxes onto a reduced
/// decode and runs the steps (``StepCanvas``).
struct PlanProcessor: ReducedDecodeProcessing {
    let planner: any StepPlanning
    /// The most pixels any step may make (a scaled image, an extended canvas): what a URL's
    /// `min-width`, `zoom`, `extend` or `fill` could otherwise ask of memory.
    var maxPixels: Int
    /// What encoding the result will hold per pixel, by the source's format (the answer's format
    /// may follow it): counted in ``workingBytes(decoded:original:format:)``, so the decode's
    /// reservation, held past delivery, covers the encode too.
    var encodeBytesPerPixel: @Sendable (ImageFormat?) -> Int = { _ in 0 }
    /// Whether a raster source is decoded reduced to what the first resize needs (JPEG's and
    /// WebP's shrink-on-load); false decodes it whole (imgproxy's `IMGPROXY_DISABLE_SHRINK_ON_LOAD`).
    var reducesDecode = true
    /// Whether resizes average in linear light (`IMGPROXY_USE_LINEAR_COLORSPACE`).
    var linearLight = false

    init(_ planner: any StepPlanning, maxPixels: Int = 50_000_000) {
        self.planner = planner
        self.maxPixels = maxPixels
    }

    var identifier: String { "imago-serve.plan(\(planner.identifier))" + (reducesDecode ? "" : ".whole") + (linearLight ? ".linear" : "") }

    func requiredDecodeSize(width: Int, height: Int) -> PixelSize? { reducesDecode ? decodeSize(width, height, isVector: false) : nil }

    /// A vector source is rendered at the size its first resize asks, larger than its own too.
    func vectorRenderSize(width: Int, height: Int) -> PixelSize? { decodeSize(width, height, isVector: true) }

    func process(_ image: Image) throws(ImagoError) -> Image { try run(image).image }

    /// The most any one step holds beside the decode: what it makes, its input when that is not
    /// the decode, and its own working copies (a resize's intermediate rows and premultiplied
    /// copy, a filter's planes, a smart crop's saliency map), or, when more, the result with its
    /// encode's working bytes. Steps before the first resize work at the decode's scale. The
    /// larger figure of the file stored either way up; nil when a plan needs the pixels to be made.
    func workingBytes(decoded: PixelSize, original: PixelSize, format: ImageFormat?) -> Int? {
        guard original.width > 0, original.height > 0 else { return nil }
        let reduced = Double(decoded.width * decoded.height) / Double(original.width * original.height)
        var peak = 0
        for (size, orientation) in [(original, ImageOrientation.up), (original.turned, .right)] {
            let facts = SourceFacts(size: size, orientation: orientation, isVector: format == .svg, format: format)
            guard let plan = try? planner.plan(facts, look: PixelLook(nil)) else { return nil }
            var current = size, scale = reduced, first = true
            for step in plan.steps {
                guard let next = step.size(after: current) else { return nil }
                let linear = scale.squareRoot()
                let input = Double(current.width * current.height) * scale * 4
                if case .resize = step { scale = 1 }
                let output = Double(next.width * next.height) * scale * 4
                var held = output + (first ? 0 : input)
                switch step {
                case .resize(let width, let height):
                    // Reducing by more than twice, blocks are averaged first to within twice the
                    // target (Resampler.boxReduce); then, with alpha, a premultiplied 16-bit copy
                    // and one pass's 16-bit output (the other side still the input's).
                    let inWidth = Double(current.width) * linear, inHeight = Double(current.height) * linear
                    let boxWidth = min(inWidth, Double(4 * max(1, width))), boxHeight = min(inHeight, Double(4 * max(1, height)))
                    let box = boxWidth * boxHeight * 4
                    let between = max(Double(width) * boxHeight, boxWidth * Double(height)) * 8
                    held += (box < input ? box : 0) + box * 2 + between
                case .filter: held += input * 4
                case .smartCrop: held += input * 2
                default: break
                }
                peak = max(peak, Int(min(held, Double(Int.max / 2))))
                (current, first) = (next, false)
            }
            // Without steps the result is the decode, which the pipeline counts itself.
            let result = Double(current.width * current.height) * scale
            let perPixel = (plan.steps.isEmpty ? 0 : 4) + encodeBytesPerPixel(format)
            peak = max(peak, Int(min(result * Double(perPixel), Double(Int.max / 2))))
        }
        return peak
    }

    /// The image made from `decoded`, and the plan that made it.
    func run(_ decoded: Image) throws(ImagoError) -> (image: Image, plan: StepPlan) {
        let metadata = decoded.metadata
        let facts = SourceFacts(
            size: metadata.uprightOriginalSize, orientation: metadata.orientationApplied, isVector: metadata.format == .svg,
            format: metadata.format, frameCount: decoded.frames.count)
        let canvas = StepCanvas(decoded, fullSize: facts.size, maxPixels: maxPixels, linearLight: linearLight)
        guard let plan = try planner.plan(facts, look: PixelLook(canvas)) else {
            throw ImagoError(.processingFailed("the plan could not be made from the decoded image"), url: nil, stage: .processing)
        }
        try canvas.run(plan.steps)
        return (canvas.image, plan)
    }

    /// The size a decode of an upright `width × height` source must reach: the first resize's
    /// scale applied to the full size, for the file stored either way up (the decode's turn is
    /// not known yet); nil for the full decode — when a step before the first resize needs the
    /// full picture's pixels, or (for a raster) the resize does not reduce it.
    private func decodeSize(_ width: Int, _ height: Int, isVector: Bool) -> PixelSize? {
        guard width > 0, height > 0 else { return nil }
        let upright = PixelSize(width: width, height: height)
        var needed = PixelSize(width: 1, height: 1)
        for orientation in [ImageOrientation.up, .right] {
            let facts = SourceFacts(size: upright, orientation: orientation, isVector: isVector)
            guard let plan = try? planner.plan(facts, look: PixelLook(nil)), var scale = Self.firstScale(plan.steps, from: upright) else {
                return nil
            }
            if !isVector { scale = (min(scale.x, 1), min(scale.y, 1)) }
            needed.width = max(needed.width, Int((Double(width) * scale.x).rounded(.up)))
            needed.height = max(needed.height, Int((Double(height) * scale.y).rounded(.up)))
        }
        guard isVector || needed.width < width || needed.height < height else { return nil }
        return needed
    }

    /// The first resize's scale in the upright source's axes; nil when there is none or a step
    /// before it reads or adds pixels at the full scale.
    static func firstScale(_ steps: [PixelStep], from source: PixelSize) -> (x: Double, y: Double)? {
        var size = source
        var turned = false
        for step in steps {
            switch step {
            case .resize(let width, let height):
                let scale = (x: Double(max(1, width)) / Double(size.width), y: Double(max(1, height)) / Double(size.height))
                return turned ? (scale.y, scale.x) : scale
            case .undoOrientation(let orientation): if orientation.swapsDimensions { turned.toggle() }
            case .rotate(let degrees): if degrees % 180 != 0 { turned.toggle() }
            case .firstFrame, .crop, .smartCrop, .flip: break
            case .extend, .flatten, .filter: return nil
            }
            guard let next = step.size(after: size) else { return nil }
            size = next
        }
        return nil
    }
}
