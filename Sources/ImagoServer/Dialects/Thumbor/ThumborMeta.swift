import Foundation
import Imago

/// thumbor's `meta/` answer (its JSON engine), serialised from the plan's steps: the source (as
/// thumbor reports it: the image's quoted path and the size the image has once made), the
/// transformer's operations in order (its crops, resizes and flips; filters are not reported),
/// the target size (the last crop's or resize's) and the focal points.
enum ThumborMeta {
    /// An operation thumbor's JSON engine records.
    enum Operation: Sendable, Equatable {
        case crop(left: Int, top: Int, right: Int, bottom: Int)
        case resize(width: Int, height: Int)
        case flipHorizontally
        case flipVertically
    }

    /// The operations `plan`'s steps are in thumbor's terms.
    static func operations(of plan: StepPlan) -> [Operation] {
        plan.steps.dropFirst(plan.firstReportedStep).flatMap { step -> [Operation] in
            switch step {
            case .crop(let box): [.crop(left: box.left, top: box.top, right: box.right, bottom: box.bottom)]
            case .resize(let width, let height): [.resize(width: width, height: height)]
            case .flip(let horizontal, let vertical): (horizontal ? [.flipHorizontally] : []) + (vertical ? [.flipVertically] : [])
            default: []
            }
        }
    }

    static func json(image path: String, made: Image, plan: StepPlan, frames: Int) -> Data {
        var target = (made.width, made.height)
        var written: [String] = []
        for operation in Self.operations(of: plan) {
            switch operation {
            case .crop(let left, let top, let right, let bottom):
                written.append(#"{"type": "crop", "left": \#(left), "top": \#(top), "right": \#(right), "bottom": \#(bottom)}"#)
                target = (right - left, bottom - top)
            case .resize(let width, let height):
                written.append(#"{"type": "resize", "width": \#(width), "height": \#(height)}"#)
                target = (width, height)
            case .flipHorizontally: written.append(#"{"type": "flip_horizontally"}"#)
            case .flipVertically: written.append(#"{"type": "flip_vertically"}"#)
            }
        }
        let points = plan.focalPoints.map { point in
            #"{"x": \#(point.x), "y": \#(point.y), "z": \#(point.weight), "height": \#(point.height), "width": \#(point.width), "origin": \#(quoted(point.origin))}"#
        }
        let url = path.addingPercentEncoding(withAllowedCharacters: quoteSafe) ?? ""
        var text = #"{"thumbor": {"source": {"url": \#(quoted(url)), "width": \#(made.width), "height": \#(made.height), "frameCount": \#(frames)}, "#
        text += #""operations": [\#(written.joined(separator: ", "))], "target": {"width": \#(target.0), "height": \#(target.1)}"#
        if !points.isEmpty { text += #", "focal_points": [\#(points.joined(separator: ", "))]"# }
        text += "}}"
        return Data(text.utf8)
    }

    /// What Python's `quote` leaves as it is (its default `safe` is `/`).
    private static let quoteSafe = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~/")

    /// A JSON string (the values here are percent-encoded or fixed words: only quotes and
    /// backslashes could need escaping).
    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// thumbor's `meta/` as a plan's report: the transformation (with the overlay images it places)
/// run on the full decode (no processor, so no reduced decode), reported as JSON.
struct ThumborMetaReport: SourceReporting {
    let transformation: ThumborTransformation
    let overlays: [String]
    /// The URL's image part, as the report quotes it.
    let image: String
    let requestOptions: ImageRequest.Options
    let identity: String
    let dialect: ThumborDialect

    func report(_ response: ImageResponse, pipeline: ImagePipeline) async throws -> Data {
        let transformation = try await dialect.loaded(transformation, overlays: overlays)
        let made = try await pipeline.runOnCPUStage { try transformation.run(response.image) }
        return ThumborMeta.json(image: image, made: made.image, plan: made.plan, frames: response.image.frames.count)
    }
}
