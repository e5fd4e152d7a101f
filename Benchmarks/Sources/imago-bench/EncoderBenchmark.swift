import Foundation
import Imago

/// The encoders issue 41 added, against their reference tools on the same pixels (the 5 ukui
/// photos, decoded once and written as PNG for the tools): JPEG XL against `cjxl` at the same
/// distance and effort (its own MP/s, PNG reading excluded), HEIC against `heif-enc` at the same
/// quality (its process, PNG reading included), TIFF against Pillow's deflate TIFF (its `save`
/// alone); bytes and SSIMULACRA2 of each. Then the peak memory of `imago convert` writing each
/// format from a 50 MP PNG, against the image's own RGBA bytes.
enum EncoderBenchmark {
    static func run() throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-encoders-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let photos = try CodecBenchmark.jpegs.map { name in
            try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: "\(CodecBenchmark.directory)/\(name)")))
        }
        var pngs: [String] = []
        for (index, photo) in photos.enumerated() {
            let path = work.appendingPathComponent("\(index).png").path
            try PNGEncoder(compressionLevel: 1).encode(photo).write(to: URL(fileURLWithPath: path))
            pngs.append(path)
        }
        let megapixels = photos.reduce(0.0) { $0 + Double($1.width * $1.height) / 1e6 }
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"

        struct Side {
            var seconds = 0.0, bytes = 0, scores: [Double] = []
            var meanScore: Double { scores.reduce(0, +) / Double(max(scores.count, 1)) }
        }
        func compare(
            _ label: String, imagoName: String, peerName: String, encoder: any ImageEncoding, peer: (Int, String) throws -> (seconds: Double, output: String)
        ) throws {
            var imago = Side(), other = Side()
            for (index, photo) in photos.enumerated() {
                let reference = try SSIMULACRA2.Reference(photo)
                var data = Data()
                imago.seconds += try Measure.elapsed { data = try encoder.encode(photo) }
                imago.bytes += data.count
                imago.scores.append(try reference.score(try DecoderRegistry.standard().decode(data)))
                let (seconds, output) = try peer(index, pngs[index])
                let peerData = try Data(contentsOf: URL(fileURLWithPath: output))
                other.seconds += seconds
                other.bytes += peerData.count
                other.scores.append(try reference.score(try DecoderRegistry.standard().decode(peerData)))
            }
            let ratio = other.seconds / imago.seconds
            report(
                label,
                imago: String(format: "%@: %.1f MP/s, %d bytes, SSIMULACRA2 %.2f", imagoName, megapixels / imago.seconds, imago.bytes, imago.meanScore),
                peer: String(format: "%@: %.1f MP/s, %d bytes, SSIMULACRA2 %.2f", peerName, megapixels / other.seconds, other.bytes, other.meanScore),
                ratio: ratio, target: "≥ 1.0× at no more bytes for the score", met: ratio >= 1.0 && imago.bytes <= other.bytes + other.bytes / 100)
        }

        let distance = JXLEncoder.distance(quality: 80)
        try compare(
            "JPEG XL at quality 80 (distance \(String(format: "%.2f", distance))), effort 4, the 5 photos", imagoName: "JXLEncoder",
            peerName: "cjxl (its own MP/s)",
            encoder: JXLEncoder(quality: 80, effort: 4)
        ) { index, png in
            let output = work.appendingPathComponent("\(index)-cjxl.jxl").path
            let text = try Measure.run("/usr/bin/cjxl", [png, output, "-d", String(format: "%.3f", distance), "-e", "4"], standardError: true)
            // "… 12.34 MP/s [...]": cjxl's own speed, its PNG read excluded.
            let rate =
                text.split(separator: "\n").compactMap { line -> Double? in
                    guard let range = line.range(of: " MP/s") else { return nil }
                    return Double(line[..<range.lowerBound].split(separator: " ").last ?? "")
                }.last ?? 0
            let image = photos[index]
            return (rate > 0 ? Double(image.width * image.height) / 1e6 / rate : .infinity, output)
        }
        try compare(
            "HEIC at quality 80 (x265), the 5 photos", imagoName: "HEIFEncoder", peerName: "heif-enc -q 80 (process, PNG read included)",
            encoder: HEIFEncoder(quality: 80)
        ) { index, png in
            let output = work.appendingPathComponent("\(index)-heif-enc.heic").path
            return (try Measure.elapsed { try Measure.spawn("/usr/bin/heif-enc", ["-q", "80", png, "-o", output]) }, output)
        }
        let pillowTIFF = """
            import sys, time
            from PIL import Image
            image = Image.open(sys.argv[1]); image.load()
            start = time.perf_counter(); image.save(sys.argv[2], compression="tiff_adobe_deflate"); print(time.perf_counter() - start)
            """
        try compare(
            "TIFF, deflate, the 5 photos", imagoName: "TIFFEncoder (deflate, predictor)", peerName: "Pillow save(compression=tiff_adobe_deflate), save alone",
            encoder: TIFFEncoder()
        ) { index, png in
            let output = work.appendingPathComponent("\(index)-pillow.tiff").path
            let seconds = Double(try Measure.run(python, ["-c", pillowTIFF, png, output]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? .infinity
            return (seconds, output)
        }

        // 50 MP: the first photo resized to 8,660 × 5,774 and written as PNG; `imago convert` to
        // each format, its peak RSS against the image's RGBA bytes.
        let big = try ImageProcessors.Resize(size: PixelSize(width: 8660, height: 5774), contentMode: .aspectFill, upscale: true).process(photos[0])
        let bigPNG = work.appendingPathComponent("big.png").path
        try PNGEncoder(compressionLevel: 1).encode(big).write(to: URL(fileURLWithPath: bigPNG))
        let rgbaMB = Double(big.width * big.height * 4) / 1_048_576
        var rows: [String] = []
        var worst = 0.0
        for format in ["jpg", "png", "webp", "avif", "jxl", "heic", "tiff", "bmp"] {
            let output = work.appendingPathComponent("big-out.\(format)").path
            var peak = 0.0
            let seconds = try Measure.elapsed { peak = try Measure.spawnMeasured(cli, ["convert", "--speed", "9", bigPNG, output]) }
            worst = max(worst, peak / rgbaMB)
            rows.append(String(format: "%@ %.0f MB in %.1f s", format, peak, seconds))
        }
        report(
            "imago convert of a \(big.width)×\(big.height) PNG (\(String(format: "%.0f", rgbaMB)) MB of RGBA) to each format: peak RSS",
            imago: rows.joined(separator: "; "), peer: String(format: "the image's RGBA: %.0f MB", rgbaMB),
            ratio: worst, target: "≤ 4× the RGBA bytes for every format", met: worst <= 4)
    }
}
