import Foundation
import Imago

/// Faces (issue 44): Imago's cascade detection against OpenCV 4.14's `detectMultiScale` on the
/// same grey pictures with thumbor's parameters, both on their own threads (OpenCV's default
/// pool, Imago's stripes over the cores); then `/smart/` cold with thumbor's face and feature
/// detectors against thumbor 7.8 with the same, through serve_bench.py.
enum FacesBenchmark {
    static let rounds = 7
    static let cascade = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml"

    static func run(server: Bool) throws {
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let script = here.appendingPathComponent("../../faces_bench.py").standardized.path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-faces-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let files = try Measure.run(python, [script, "make", work.path]).split(separator: "\n").map(String.init)
        let classifier = try CascadeClassifier(contentsOf: URL(fileURLWithPath: cascade))
        var imagoTotal = 0.0
        var rows: [(name: String, imago: Double, faces: Int)] = []
        for file in files {
            // A grey PNG: its RGBA has R = G = B, whose luma is the grey level itself.
            let plane = GrayPlane(try PNGDecoder().decode(Data(contentsOf: URL(fileURLWithPath: file)), options: DecodingOptions()))
            let options = CascadeClassifier.DetectionOptions.thumbor(width: plane.width, height: plane.height)
            let found = classifier.detect(in: plane, options: options)
            var times: [Double] = []
            for _ in 0..<rounds { times.append(Measure.elapsed { _ = classifier.detect(in: plane, options: options) }) }
            let median = Measure.median(times)
            imagoTotal += median
            rows.append(((file as NSString).lastPathComponent + " \(plane.width)×\(plane.height)", median, found.count))
        }
        let opencv = try Measure.run(python, [script, "time", "\(rounds)", cascade] + files).split(separator: "\n").map { $0.split(separator: " ") }
        var opencvTotal = 0.0
        for (index, row) in rows.enumerated() {
            let seconds = Double(opencv[index][0]) ?? .nan, faces = Int(opencv[index][1]) ?? -1
            opencvTotal += seconds
            print(String(format: "  %@: imago %.2f ms (%d faces), OpenCV %.2f ms (%d faces)", row.name, row.imago * 1000, row.faces, seconds * 1000, faces))
        }
        report(
            "Face detection: haarcascade_frontalface_alt, thumbor's parameters, \(files.count) grey pictures, median of \(rounds) each, summed",
            imago: String(format: "%.1f ms", imagoTotal * 1000), peer: String(format: "OpenCV 4.14 detectMultiScale: %.1f ms", opencvTotal * 1000),
            ratio: opencvTotal / imagoTotal, target: "≥ 1×", met: opencvTotal >= imagoTotal)
        try breakdown()
        guard server else { return }

        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("the faces group's server rows need IMAGO_CLI, the release imago binary (make bench sets it)")
        }
        fflush(nil)  // every stream: `stdout` itself is shared mutable state to Swift 6
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [here.appendingPathComponent("../../serve_bench.py").standardized.path, cli]
        process.environment = ProcessInfo.processInfo.environment.merging(["SERVE_BENCH_ONLY": "smart-detectors"]) { $1 }
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("serve_bench.py exited with \(process.terminationStatus)") }
    }

    /// Where a `/smart/` with detectors spends its time on one 2 MP photo (the first ukui photo at
    /// 1800 wide, JPEG q90 4:2:0 as serve_bench.py's sources): each stage's median of 7, one request
    /// on its own (detection on both cores).
    static func breakdown() throws {
        let photo = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/backgrounds/2004default.jpg"))
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 1800, height: 1800)
        options.targetMode = .fit
        let reduced = try ImageProcessors.Resize(size: PixelSize(width: 1800, height: 1800), contentMode: .aspectFit)
            .process(try JPEGDecoder().decode(photo, options: options))
        let source = try JPEGEncoder(quality: 90).encode(reduced)
        var smooth = DecodingOptions()
        smooth.smoothsChroma = true
        let classifier = try CascadeClassifier(contentsOf: URL(fileURLWithPath: cascade))
        func median(_ body: () throws -> Void) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<rounds { times.append(try Measure.elapsed(body)) }
            return Measure.median(times) * 1000
        }
        let image = try JPEGDecoder().decode(source, options: smooth)
        let plane = GrayPlane(image)
        let decode = try median { _ = try JPEGDecoder().decode(source, options: smooth) }
        let grey = median { _ = GrayPlane(image) }
        let faces = median { _ = classifier.detect(in: plane, options: .thumbor(width: plane.width, height: plane.height)) }
        let corners = median { _ = CornerDetector().corners(in: plane) }
        print(
            String(
                format: "  one %d×%d photo, each stage alone: decode (smooth chroma) %.1f ms, luma %.1f ms, faces %.1f ms, corners %.1f ms",
                image.width, image.height, decode, grey, faces, corners))
        print("")
    }
}
