import Foundation

/// Finds faces in an image with a frontal-face cascade (OpenCV's files; Debian's `opencv-data`
/// installs them), searched as thumbor's face detector searches: scale 1.2, 4 neighbours, faces at
/// least a fifteenth of the shorter side. The search runs on the picture's luma reduced by whole
/// blocks to at most ``maxSide`` pixels a side, so its work is bounded whatever the image's size;
/// boxes are given back in the image's pixels.
///
/// ``ImageProcessors/SmartCrop`` takes a detector to keep faces in its window.
public struct FaceDetector: Sendable, Hashable {
    /// A face: its box in the image's pixels.
    public struct Face: Sendable, Hashable, Codable {
        /// The box's left edge.
        public var x: Int
        /// The box's top edge.
        public var y: Int
        /// The box's width.
        public var width: Int
        /// The box's height.
        public var height: Int

        /// A face in that box.
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// This box in a picture `scale` times as large on each axis, its edges rounded and cut to
        /// `bounds` (the larger picture's size), at least 1 × 1.
        public func scaled(by scale: (x: Double, y: Double), within bounds: (width: Int, height: Int)) -> Face {
            let left = Int((Double(x) * scale.x).rounded()), top = Int((Double(y) * scale.y).rounded())
            let right = min(bounds.width, Int((Double(x + width) * scale.x).rounded()))
            let bottom = min(bounds.height, Int((Double(y + height) * scale.y).rounded()))
            return Face(x: left, y: top, width: max(1, right - left), height: max(1, bottom - top))
        }
    }

    /// The cascade searched with.
    public let cascade: CascadeClassifier
    /// The longest side the search looks at; a larger picture is reduced first.
    public let maxSide: Int

    /// Where Debian's `opencv-data` puts thumbor's default face cascade.
    public static let systemCascadePath = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml"

    /// A detector searching with `cascade` on pictures reduced to at most `maxSide` (at least 64).
    public init(cascade: CascadeClassifier, maxSide: Int = 800) {
        self.cascade = cascade
        self.maxSide = max(64, maxSide)
    }

    /// A detector with the cascade in the file at `url`; throws when the file cannot be read or is
    /// not a cascade (``CascadeClassifier/LoadError`` says why).
    public init(contentsOf url: URL, maxSide: Int = 800) throws(CascadeClassifier.LoadError) {
        self.init(cascade: try CascadeClassifier(contentsOf: url), maxSide: maxSide)
    }

    /// What stands for this detector in processors' identifiers: the cascade's digest and the side.
    public var identifier: String { "faces(\(cascade.digest),\(maxSide))" }

    public static func == (lhs: FaceDetector, rhs: FaceDetector) -> Bool { lhs.identifier == rhs.identifier }

    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// The faces in `image`'s first frame, largest first.
    public func faces(in image: Image) -> [Face] {
        guard image.width > 0, image.height > 0 else { return [] }
        let shrink = max(1, Int((Double(max(image.width, image.height)) / Double(maxSide)).rounded(.up)))
        let plane = GrayPlane(image, shrunkBy: shrink)
        let options = CascadeClassifier.DetectionOptions.thumbor(width: plane.width, height: plane.height)
        let scaleX = Double(image.width) / Double(max(plane.width, 1)), scaleY = Double(image.height) / Double(max(plane.height, 1))
        return cascade.detect(in: plane, options: options).map { box in
            Face(x: box.x, y: box.y, width: box.width, height: box.height).scaled(by: (scaleX, scaleY), within: (image.width, image.height))
        }
        .sorted { ($0.width * $0.height, $1.y, $1.x) > ($1.width * $1.height, $0.y, $0.x) }
    }

    /// The top left corner of the `width × height` window in a `size` picture that holds the most
    /// of `faces`' area (each face weighing its area), nearest to centring the faces' middle among
    /// windows that hold as much; nil without faces. At most the 64 largest faces count.
    public static func window(width: Int, height: Int, in size: (width: Int, height: Int), around faces: [Face]) -> (x: Int, y: Int)? {
        let faces = Array(faces.filter { $0.width > 0 && $0.height > 0 }.prefix(64))
        guard !faces.isEmpty else { return nil }
        let width = min(width, size.width), height = min(height, size.height)
        let freeX = size.width - width, freeY = size.height - height
        // The faces' middle, weighted by area: where the window's centre would best sit.
        var total = 0.0, middleX = 0.0, middleY = 0.0
        for face in faces {
            let area = Double(face.width * face.height)
            total += area
            middleX += area * (Double(face.x) + Double(face.width) / 2)
            middleY += area * (Double(face.y) + Double(face.height) / 2)
        }
        middleX /= total
        middleY /= total
        // Covered area is piecewise linear in the window's position: its best is at an edge of a
        // face or of the picture, or where the window centres the middle or one face.
        func candidates(_ free: Int, _ side: Int, _ middle: Double, _ spans: [(start: Int, length: Int)]) -> [Int] {
            var values = [0, free, Int((middle - Double(side) / 2).rounded())]
            for span in spans {
                values += [span.start, span.start + span.length - side, span.start + span.length / 2 - side / 2]
            }
            return Set(values.map { min(max($0, 0), free) }).sorted()
        }
        let xs = candidates(freeX, width, middleX, faces.map { ($0.x, $0.width) })
        let ys = candidates(freeY, height, middleY, faces.map { ($0.y, $0.height) })
        var best: (covered: Int, distance: Double, x: Int, y: Int)?
        for y in ys {
            for x in xs {
                var covered = 0
                for face in faces {
                    let overlapX = min(x + width, face.x + face.width) - max(x, face.x)
                    let overlapY = min(y + height, face.y + face.height) - max(y, face.y)
                    if overlapX > 0, overlapY > 0 { covered += overlapX * overlapY }
                }
                let dx = Double(x) + Double(width) / 2 - middleX, dy = Double(y) + Double(height) / 2 - middleY
                let distance = dx * dx + dy * dy
                if let current = best, covered < current.covered || (covered == current.covered && distance >= current.distance) { continue }
                best = (covered, distance, x, y)
            }
        }
        return best.map { ($0.x, $0.y) }
    }
}
