import Foundation
import Imago

/// thumbor's `meta/` answer (its JSON engine): the source (as thumbor reports it: the image's
/// quoted path and the size the image has once made), the operations in order, the target size
/// (the last crop's or resize's) and the focal points.
enum ThumborMeta {
    static func json(image path: String, made: Image, report: ThumborReport, frames: Int) -> Data {
        var target = (made.width, made.height)
        var operations: [String] = []
        for operation in report.operations {
            switch operation {
            case .crop(let left, let top, let right, let bottom):
                operations.append(#"{"type": "crop", "left": \#(left), "top": \#(top), "right": \#(right), "bottom": \#(bottom)}"#)
                target = (right - left, bottom - top)
            case .resize(let width, let height):
                operations.append(#"{"type": "resize", "width": \#(width), "height": \#(height)}"#)
                target = (width, height)
            case .flipHorizontally: operations.append(#"{"type": "flip_horizontally"}"#)
            case .flipVertically: operations.append(#"{"type": "flip_vertically"}"#)
            }
        }
        let points = report.focalPoints.map { point in
            #"{"x": \#(point.x), "y": \#(point.y), "z": \#(point.weight), "height": \#(point.height), "width": \#(point.width), "origin": \#(quoted(point.origin))}"#
        }
        let url = path.addingPercentEncoding(withAllowedCharacters: quoteSafe) ?? ""
        var text = #"{"thumbor": {"source": {"url": \#(quoted(url)), "width": \#(made.width), "height": \#(made.height), "frameCount": \#(frames)}, "#
        text += #""operations": [\#(operations.joined(separator: ", "))], "target": {"width": \#(target.0), "height": \#(target.1)}"#
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
