import Foundation
import Imago

/// OpenCV 4.14 (PyPI's opencv-python-headless in the peers' venv) through
/// `Tests/Peers/opencv_reference.py`: its `detectMultiScale` and `goodFeaturesToTrack` are the
/// references for Imago's detectors, on scikit-image's pictures (its wheel, installed without its
/// dependencies for its data) and Debian's cascades (`opencv-data`).
enum OpenCVReference {
    static let script = ObjectStorePeer.project.appendingPathComponent("Tests/Peers/opencv_reference.py").path
    static let cascades = URL(fileURLWithPath: "/usr/share/opencv4")

    /// Whether the venv has OpenCV and scikit-image's data, and Debian's cascades are installed
    /// (`make test` installs all three).
    static var isInstalled: Bool {
        let lib = ObjectStorePeer.project.appendingPathComponent(".venv-peers/lib")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        let packages = versions.contains { version in
            ["cv2", "skimage/data"].allSatisfy { FileManager.default.fileExists(atPath: lib.appendingPathComponent("\(version)/site-packages/\($0)").path) }
        }
        return packages && FileManager.default.fileExists(atPath: cascade("haarcascades/haarcascade_frontalface_alt.xml").path)
    }

    /// Whether this is `make test-thumbor`'s reference run (`IMAGO_DETECTION_REFERENCE` set, OpenCV
    /// installed): the suites that spend seconds of both cores on detection run there, apart from
    /// `make test`'s timed tests.
    static var isReferenceRun: Bool { isInstalled && ProcessInfo.processInfo.environment["IMAGO_DETECTION_REFERENCE"] != nil }

    static func cascade(_ name: String) -> URL { cascades.appendingPathComponent(name) }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { "opencv_reference.py: \(message)" }
    }

    private static func run(_ arguments: [String]) async throws -> Data {
        let run = try await runProcess(ObjectStorePeer.python, [script] + arguments, withStandardError: true)
        guard run.status == 0 else { throw Failure(message: String(decoding: run.output, as: UTF8.self)) }
        return run.output
    }

    /// scikit-image's picture `name`, grey, and where it was written.
    static func picture(_ name: String, in directory: URL) async throws -> (plane: GrayPlane, file: URL) {
        let file = directory.appendingPathComponent("\(name).pgm")
        _ = try await run(["picture", name, file.path])
        return (try readPGM(file), file)
    }

    /// A group photo of `columns × rows` faces from scikit-image's LFW subset, `side` pixels each.
    static func group(columns: Int, rows: Int, side: Int, in directory: URL) async throws -> (plane: GrayPlane, file: URL) {
        let file = directory.appendingPathComponent("group-\(columns)x\(rows)-\(side).pgm")
        _ = try await run(["group", file.path, "\(columns)", "\(rows)", "\(side)"])
        return (try readPGM(file), file)
    }

    /// A 960×240 scene: three LFW faces of 80 pixels in a row at the left (x 20…320, y 60…140, on
    /// grey), and a red and green checkerboard at the right (x 780…900), which saliency prefers to
    /// the grey faces.
    static func faceScene(in directory: URL) async throws -> Image {
        let (group, _) = try await Self.group(columns: 3, rows: 1, side: 80, in: directory)
        let (width, height) = (960, 240)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                var value: (UInt8, UInt8, UInt8) = (128, 128, 128)
                if x < group.width, y >= 60, y - 60 < group.height {
                    let grey = group.pixels[(y - 60) * group.width + x]
                    value = (grey, grey, grey)
                } else if (780..<900).contains(x), (40..<200).contains(y) {
                    value = (x / 10 + y / 10) % 2 == 0 ? (230, 20, 20) : (20, 200, 40)
                }
                paint(&pixels, width: width, x, y, value)
            }
        }
        return Image.test(width, height, pixels)
    }

    /// OpenCV's boxes for `cascade` on the picture in `file`.
    static func detect(_ cascade: URL, file: URL, options: CascadeClassifier.DetectionOptions) async throws -> [[Int]] {
        let output = try await run([
            "detect", cascade.path, file.path, "\(options.scaleFactor)", "\(options.minNeighbors)", "\(options.minWidth)", "\(options.minHeight)",
        ])
        return try JSONDecoder().decode([[Int]].self, from: output)
    }

    /// OpenCV's corners of the picture in `file`, strongest first.
    static func corners(file: URL, detector: CornerDetector) async throws -> [[Int]] {
        let output = try await run(["corners", file.path, "\(detector.maxCorners)", "\(detector.qualityLevel)", "\(detector.minDistance)"])
        return try JSONDecoder().decode([[Int]].self, from: output)
    }

    /// A binary PGM (P5, 8-bit) as a grey plane.
    static func readPGM(_ file: URL) throws -> GrayPlane {
        let data = try Data(contentsOf: file)
        var fields: [Int] = []
        var index = 2
        // Magic, then width, height and maximum, each after whitespace; one whitespace byte, then pixels.
        guard data.prefix(2) == Data("P5".utf8) else { throw Failure(message: "not a binary PGM") }
        while fields.count < 3 {
            while index < data.count, data[index] == 0x20 || data[index] == 0x0A || data[index] == 0x0D || data[index] == 0x09 { index += 1 }
            var number = 0
            while index < data.count, (0x30...0x39).contains(data[index]) {
                number = number * 10 + Int(data[index] - 0x30)
                index += 1
            }
            fields.append(number)
        }
        index += 1
        let width = fields[0], height = fields[1]
        guard fields[2] == 255, data.count - index == width * height else { throw Failure(message: "an unexpected PGM") }
        return GrayPlane(width: width, height: height, pixels: [UInt8](data[index...]))
    }
}
