import Foundation
import Imago

/// The cost of keeping an HDR gain map: 400-pixel thumbnails (JPEG q80) of the 5 ukui photos made
/// Ultra HDR by libultrahdr (`hdr_bench.py make`, gain map at 1/4 a side), against the same files
/// cut before their gain maps (the same base bytes), and against libvips 8.18's `thumbnail` of the
/// Ultra HDR files (which keeps the gain map too), each one image at a time on one thread.
enum HDRBenchmark {
    static let width = 400
    static let rounds = 7

    static func run() throws {
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../hdr_bench.py").standardized.path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-hdr-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try Measure.run(python, [script, "make", work.path] + CodecBenchmark.jpegs.map { "\(CodecBenchmark.directory)/\($0)" })
        let names = CodecBenchmark.jpegs.map { ($0 as NSString).deletingPathExtension }
        let hdrFiles = names.map { work.appendingPathComponent("\($0)-uhdr.jpg").path }
        let baseFiles = names.map { work.appendingPathComponent("\($0)-base.jpg").path }

        var keptMaps = 0
        func thumbnail(_ data: Data) throws -> Data {
            var options = DecodingOptions()
            options.gainMapHandling = .keep
            options.targetSize = PixelSize(width: width, height: width)
            options.targetMode = .fit
            let decoded = try JPEGDecoder().decode(data, options: options)
            let resized = try ImageProcessors.Resize(size: PixelSize(width: width, height: width)).process(decoded)
            if resized.gainMap != nil { keptMaps += 1 }
            return try JPEGEncoder(quality: 80).encode(resized)
        }
        func imagoSeconds(_ files: [String]) throws -> Double {
            var total = 0.0
            for file in files {
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                var times: [Double] = []
                for _ in 0..<rounds { times.append(try Measure.elapsed { _ = try thumbnail(data) }) }
                total += Measure.median(times)
            }
            return total
        }
        let hdr = try imagoSeconds(hdrFiles)
        let base = try imagoSeconds(baseFiles)
        let vips = try Measure.run(python, [script, "time", "\(rounds)", "\(width)"] + hdrFiles)
            .split(separator: "\n").compactMap { Double($0) }.reduce(0, +)
        let cost = hdr / base
        report(
            "Keeping the gain map: \(width)-px thumbnails of \(names.count) Ultra HDR photos of 3840×2400 (gain map 960×600) against the same bases without one, q80",
            imago: String(format: "with the gain map kept (written as Ultra HDR, %d of %d): %.1f ms", keptMaps / rounds, names.count, hdr * 1000),
            peer: String(format: "the bases alone: %.1f ms", base * 1000), ratio: cost, target: "≤ 1.3× the time", met: cost <= 1.3)
        report(
            "Ultra HDR thumbnails against libvips 8.18 + libultrahdr (pyvips-binary, thumbnail, VIPS_CONCURRENCY=1), gain map kept by both",
            imago: String(format: "%.1f ms", hdr * 1000), peer: String(format: "libvips: %.1f ms", vips * 1000), ratio: vips / hdr, target: "≥ 1.5×",
            met: vips / hdr >= 1.5)
    }
}
