import Foundation
import Imago
import Testing

/// Imago's cascade detector and corner detector against OpenCV's own, on the same grey pictures
/// with the same cascade files and parameters. A minute of both cores in a debug build, so it runs
/// in `make test-thumbor` (the reference suites, after `make test`), which sets
/// `IMAGO_DETECTION_REFERENCE`; `make test` runs the hostile and server detection suites.
@Suite(
    "Detection against OpenCV", .enabled(if: OpenCVReference.isInstalled && ProcessInfo.processInfo.environment["IMAGO_DETECTION_REFERENCE"] != nil),
    .timeLimit(.minutes(6)))
struct CascadeDetectionTests {
    enum Picture: String, CaseIterable, Sendable {
        case astronaut, camera, coffee
        /// Twelve faces of 80 pixels, four by three.
        case group
        /// Twelve faces of 36 pixels, six by two: near thumbor's smallest window.
        case smallGroup
    }

    static let cascades = [
        "haarcascades/haarcascade_frontalface_alt.xml",  // thumbor's default: stumps
        "haarcascades/haarcascade_frontalface_default.xml",
        "haarcascades/haarcascade_frontalface_alt_tree.xml",  // trees
        "haarcascades/haarcascade_profileface.xml",
        "haarcascades/haarcascade_eye_tree_eyeglasses.xml",  // tilted features, trees
        "lbpcascades/lbpcascade_frontalface_improved.xml",  // local binary patterns
    ]

    static func load(_ picture: Picture, in directory: URL) async throws -> (plane: GrayPlane, file: URL) {
        switch picture {
        case .group: try await OpenCVReference.group(columns: 4, rows: 3, side: 80, in: directory)
        case .smallGroup: try await OpenCVReference.group(columns: 6, rows: 2, side: 36, in: directory)
        default: try await OpenCVReference.picture(picture.rawValue, in: directory)
        }
    }

    static func intersectionOverUnion(_ a: [Int], _ b: CascadeClassifier.Detection) -> Double {
        let left = max(a[0], b.x), top = max(a[1], b.y)
        let right = min(a[0] + a[2], b.x + b.width), bottom = min(a[1] + a[3], b.y + b.height)
        let overlap = Double(max(0, right - left) * max(0, bottom - top))
        return overlap / Double(a[2] * a[3] + b.width * b.height - Int(overlap))
    }

    @Test("the same boxes as OpenCV's detectMultiScale with thumbor's parameters (IoU ≥ 0.9 each, none missing, none extra)", arguments: Picture.allCases)
    func sameBoxesAsOpenCV(_ picture: Picture) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (plane, file) = try await Self.load(picture, in: directory)
        let options = CascadeClassifier.DetectionOptions.thumbor(width: plane.width, height: plane.height)
        var found = 0
        for name in Self.cascades {
            let url = OpenCVReference.cascade(name)
            let cascade = try CascadeClassifier(contentsOf: url)
            let expected = try await OpenCVReference.detect(url, file: file, options: options)
            let detections = cascade.detect(in: plane, options: options)
            found += detections.count
            #expect(detections.count == expected.count, "\(picture) \(name): OpenCV \(expected), Imago \(detections)")
            for box in expected {
                let best = detections.map { Self.intersectionOverUnion(box, $0) }.max() ?? 0
                #expect(best >= 0.9, "\(picture) \(name): OpenCV's \(box) against Imago's \(detections)")
            }
        }
        if picture == .group || picture == .astronaut { #expect(found > 0, "the faces are found at all") }
    }

    @Test("OpenCV's own defaults (scale 1.1, 3 neighbours, any size) give the same boxes too")
    func openCVDefaults() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (plane, file) = try await Self.load(.group, in: directory)
        let options = CascadeClassifier.DetectionOptions()
        for name in [Self.cascades[0]] {
            let url = OpenCVReference.cascade(name)
            let expected = try await OpenCVReference.detect(url, file: file, options: options)
            let detections = try CascadeClassifier(contentsOf: url).detect(in: plane, options: options)
            #expect(detections.count == expected.count && !expected.isEmpty, "\(name): OpenCV \(expected), Imago \(detections)")
            for box in expected {
                #expect((detections.map { Self.intersectionOverUnion(box, $0) }.max() ?? 0) >= 0.9, "\(name): \(box)")
            }
        }
    }

    @Test("the same Shi–Tomasi corners as OpenCV's goodFeaturesToTrack with thumbor's parameters", arguments: [Picture.astronaut, .coffee, .group])
    func sameCornersAsOpenCV(_ picture: Picture) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (plane, file) = try await Self.load(picture, in: directory)
        let detector = CornerDetector()
        let expected = try await OpenCVReference.corners(file: file, detector: detector)
        let corners = detector.corners(in: plane).map { [$0.x, $0.y] }
        #expect(corners.count == expected.count)
        #expect(Set(corners) == Set(expected), "\(picture): OpenCV \(expected), Imago \(corners)")
    }
}
