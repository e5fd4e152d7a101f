import Foundation
import Imago

/// JPEG bytes at q80 against libvips with `optimize_coding` (what imgproxy asks libvips for): the
/// 5 ukui photos decoded once, written as PNG, and encoded from those same pixels by `JPEGEncoder`
/// and by `vips copy …[Q=80,optimize_coding,strip]`; both scored by SSIMULACRA2 against the pixels.
enum JPEGBytesBenchmark {
    static func run() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-jpeg-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        var imagoBytes = 0, vipsBytes = 0
        var imagoScores: [Double] = [], vipsScores: [Double] = []
        for name in CodecBenchmark.jpegs {
            let original = try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: "\(CodecBenchmark.directory)/\(name)")))
            let png = work.appendingPathComponent("\(name).png").path, vipsOut = work.appendingPathComponent("\(name)-vips.jpg").path
            try PNGEncoder(compressionLevel: 1).encode(original).write(to: URL(fileURLWithPath: png))
            try Measure.run("/usr/bin/vips", ["copy", png, vipsOut + "[Q=80,optimize_coding,strip]"])
            let vipsData = try Data(contentsOf: URL(fileURLWithPath: vipsOut))
            let imagoData = try JPEGEncoder(quality: 80).encode(original)
            let reference = try SSIMULACRA2.Reference(original)
            imagoScores.append(try reference.score(try DecoderRegistry.standard().decode(imagoData)))
            vipsScores.append(try reference.score(try DecoderRegistry.standard().decode(vipsData)))
            imagoBytes += imagoData.count
            vipsBytes += vipsData.count
        }
        let mean = { (values: [Double]) in values.reduce(0, +) / Double(values.count) }
        let ratio = Double(vipsBytes) / Double(imagoBytes)
        let scoreGap = mean(imagoScores) - mean(vipsScores)
        report(
            "JPEG at q80, \(CodecBenchmark.jpegs.count) photos of 3840×2400 (3640×2400), the same pixels to both",
            imago: String(format: "JPEGEncoder (optimised Huffman tables): %d bytes, SSIMULACRA2 %.2f", imagoBytes, mean(imagoScores)),
            peer: String(format: "vips copy [Q=80,optimize_coding,strip]: %d bytes, SSIMULACRA2 %.2f", vipsBytes, mean(vipsScores)),
            ratio: ratio, target: "≥ 1.0× (no more bytes) within 0.5 SSIMULACRA2", met: ratio >= 1.0 && scoreGap > -0.5)
    }
}
