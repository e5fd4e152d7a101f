import Imago

/// A dialect's geometry: a pure function from what is known of a source to the ``PixelStep``s
/// that make its variant. imgproxy's (``ImgproxySteps``) and thumbor's (``ThumborTransformation``)
/// each decide their numbers with their own arithmetic; ``PlanProcessor`` runs what they plan.
protocol StepPlanning: Sendable {
    /// Everything that decides the steps: part of the processor's identifier.
    var identifier: String { get }

    /// The steps for `source`. A plan that needs to measure the picture (a trim box, a salient
    /// point) asks `look` for its pixels after the steps planned so far; nil when `look` has none
    /// (the decode's size is being planned), so the source is decoded whole.
    func plan(_ source: SourceFacts, look: PixelLook) throws(ImagoError) -> StepPlan?
}

/// What a plan may know of its source before any pixel: the full decode's size, upright, and the
/// turn the decode made; the format and frames once decoded.
struct SourceFacts: Sendable {
    /// The full decode's size, turned upright.
    var size: PixelSize
    /// The orientation the decode applied to turn the stored picture upright.
    var orientation: ImageOrientation
    /// Whether the source is a vector (rendered at any size, larger than its own too).
    var isVector: Bool
    /// The decoded format; nil while the decode's size is planned.
    var format: ImageFormat?
    /// The decoded frames; nil while the decode's size is planned.
    var frameCount: Int?
}

/// A dialect's steps, with the picture's size (in full-decode pixels) as they leave it, and the
/// focal points its geometry used (thumbor's `meta/` reports them).
struct StepPlan: Sendable {
    private(set) var steps: [PixelStep] = []
    /// The picture's size after the steps so far; nil past a step only the pixels can size.
    private(set) var size: PixelSize?
    var focalPoints: [FocalPoint] = []
    /// The first step a report of the plan lists (thumbor's `meta/` leaves out the resize its
    /// engine normalises a loaded image with).
    var firstReportedStep = 0

    init(source: PixelSize) { size = source }

    mutating func append(_ step: PixelStep) {
        steps.append(step)
        size = size.flatMap(step.size(after:))
    }
}

/// The pixels a plan may measure part way through its steps: the picture after the steps planned
/// so far (run then and not again), or none while the decode's size is planned.
final class PixelLook {
    private let canvas: StepCanvas?

    init(_ canvas: StepCanvas?) { self.canvas = canvas }

    /// Whether pixels can be had: a plan that must work on the source's exact pixels (not a
    /// reduced decode of them) returns nil when not.
    var hasPixels: Bool { canvas != nil }

    /// The picture after `plan`'s steps; nil while the decode's size is planned.
    func picture(after plan: StepPlan) throws(ImagoError) -> Image? {
        guard let canvas else { return nil }
        try canvas.run(plan.steps)
        return canvas.image
    }
}

/// A point a crop is centred on: a centre, a box and a weight (thumbor's `FocalPoint`), and what
/// found it.
struct FocalPoint: Sendable, Hashable {
    var x: Int
    var y: Int
    var width = 1
    var height = 1
    var weight = 1.0
    var origin = "alignment"

    /// thumbor's `FocalPoint.from_square`: the box's centre, weighted by its area.
    static func square(left: Int, top: Int, width: Int, height: Int, origin: String) -> FocalPoint {
        FocalPoint(x: left + width / 2, y: top + height / 2, width: width, height: height, weight: Double(width * height), origin: origin)
    }
}
