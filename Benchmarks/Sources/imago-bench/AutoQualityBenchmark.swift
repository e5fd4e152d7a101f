import Foundation
import Imago

/// Auto quality against the fixed quality a user who must guarantee a SSIMULACRA2 score would
/// pick: every ukui wallpaper fitted to 1024 px, then for JPEG and WebP (a) `auto:75` per photo
/// (Imago's search, quality 1…100, allowed error 0.5), (b) the smallest single quality that brings
/// every photo to 75 (each photo's smallest passing quality found by bisection, the largest of
/// those taken), (c) plain quality 80. Bytes in total, each photo's quality, bytes and score, and
/// the search's time against one encode at the fixed quality (medians of three).
enum AutoQualityBenchmark {
    static let side = 1024
    static let target = 75.0

    static func run() throws {
        let directory = CodecBenchmark.directory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted() ?? []
        guard !names.isEmpty else { throw BenchmarkError("no photos in \(directory): run `make deps`") }
        let resize = try ImageProcessors.Resize(size: PixelSize(width: side, height: side), contentMode: .aspectFit)
        var photos: [(name: String, image: Image)] = []
        for name in names {
            var image = try DecoderRegistry.standard().decode(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)")))
            image = try resize.process(image).convertedToSRGB()
            // The metric and JPEG see opaque pixels; wallpapers are opaque anyway.
            photos.append((name, image))
        }
        print("## Auto quality (SSIMULACRA2 target \(Int(target))), \(photos.count) wallpapers fitted to \(side) px")
        try metricSpeed(photos[0].image)
        for format in [ImageFormat.jpeg, .webp] {
            try run(format: format, photos: photos)
        }
        print("")
    }

    static func encoder(_ format: ImageFormat, _ quality: Int) -> any ImageEncoding {
        format == .webp ? WebPEncoder(quality: Float(quality)) : JPEGEncoder(quality: quality)
    }

    static func run(format: ImageFormat, photos: [(name: String, image: Image)]) throws {
        struct Row {
            var name: String
            var autoQuality: Int, autoBytes: Int, autoScore: Double, encodes: Int, autoSeconds: Double
            var smallestPassing: Int
        }
        var rows: [Row] = []
        let search = AutoQuality(.ssimulacra2(target: target), minQuality: 1, maxQuality: 100)
        for photo in photos {
            var times: [Double] = []
            var choice: AutoQuality.Choice?
            for _ in 0..<3 {
                let start = ContinuousClock.now
                choice = try search.encode(photo.image, format: format) { encoder(format, $0) }
                times.append((ContinuousClock.now - start) / .seconds(1))
            }
            let reference = try SSIMULACRA2.Reference(photo.image)
            func score(_ quality: Int) throws -> Double {
                try reference.score(try DecoderRegistry.standard().decode(try encoder(format, quality).encode(photo.image)))
            }
            // The smallest quality scoring at least the target, by bisection over 1…100; 101 when
            // not even 100 reaches it (no fixed quality can guarantee such a photo).
            var low = 0, high = 100
            if try score(100) < target { (low, high) = (100, 101) }
            while high - low > 1 {
                let middle = (low + high) / 2
                if try score(middle) >= target { high = middle } else { low = middle }
            }
            rows.append(
                Row(
                    name: photo.name, autoQuality: choice!.quality, autoBytes: choice!.data.count, autoScore: choice!.score ?? 0,
                    encodes: choice!.encodes, autoSeconds: Measure.median(times), smallestPassing: high))
        }
        // Photos no quality brings to the target are left out of the comparison (and named).
        let unreachable = Set(rows.filter { $0.smallestPassing > 100 }.map(\.name))
        rows.removeAll { unreachable.contains($0.name) }
        let compared = photos.filter { !unreachable.contains($0.name) }
        let guarantee = rows.map(\.smallestPassing).max() ?? 100
        var fixedBytes = 0, q80Bytes = 0, encodeSeconds = 0.0, worstFixedScore = 100.0
        for photo in compared {
            let data = try encoder(format, guarantee).encode(photo.image)
            fixedBytes += data.count
            worstFixedScore = min(worstFixedScore, try SSIMULACRA2.score(original: photo.image, distorted: try DecoderRegistry.standard().decode(data)))
            q80Bytes += try encoder(format, 80).encode(photo.image).count
            var times: [Double] = []
            for _ in 0..<3 {
                let start = ContinuousClock.now
                _ = try encoder(format, guarantee).encode(photo.image)
                times.append((ContinuousClock.now - start) / .seconds(1))
            }
            encodeSeconds += Measure.median(times)
        }
        let autoBytes = rows.map(\.autoBytes).reduce(0, +)
        let autoSeconds = rows.map(\.autoSeconds).reduce(0, +)
        print("")
        print("### \(format) — photo, auto quality, bytes, score, encodes; smallest quality reaching \(Int(target))")
        if !unreachable.isEmpty { print("  left out, \(Int(target)) unreachable even at q100: \(unreachable.sorted().joined(separator: ", "))") }
        for row in rows {
            print(
                "  \(row.name): q\(row.autoQuality) \(row.autoBytes) B, \(String(format: "%.2f", row.autoScore)), \(row.encodes) encodes, \(String(format: "%.0f", row.autoSeconds * 1000)) ms; fixed needs q\(row.smallestPassing)"
            )
        }
        let saving = 1 - Double(autoBytes) / Double(fixedBytes)
        print(
            "  auto:\(Int(target)) \(autoBytes) B against the fixed q\(guarantee) that brings every photo to \(Int(target)) (\(fixedBytes) B, worst \(String(format: "%.2f", worstFixedScore))): \(String(format: "%.1f", saving * 100))% fewer bytes; worst auto score \(String(format: "%.2f", rows.map(\.autoScore).min() ?? 0))"
        )
        print("  against plain q80 (\(q80Bytes) B): \(String(format: "%.2f", Double(autoBytes) / Double(q80Bytes)))× the bytes")
        print(
            "  time: auto \(String(format: "%.0f", autoSeconds * 1000)) ms, one q\(guarantee) encode \(String(format: "%.0f", encodeSeconds * 1000)) ms per set → \(String(format: "%.2f", autoSeconds / encodeSeconds))× one encode; \(String(format: "%.1f", Double(rows.map(\.encodes).reduce(0, +)) / Double(rows.count))) encodes per photo"
        )
    }

    /// One SSIMULACRA2 score of a q80 JPEG against its original: Imago's (prepared reference, as
    /// auto quality uses it, and whole) beside cloudinary/ssimulacra2's tool when
    /// `IMAGO_SSIMULACRA2` names it (its time includes reading two PNGs and its start).
    static func metricSpeed(_ image: Image) throws {
        let candidate = try DecoderRegistry.standard().decode(try JPEGEncoder(quality: 80).encode(image))
        let reference = try SSIMULACRA2.Reference(image)
        var prepared: [Double] = [], whole: [Double] = []
        var score = 0.0
        for _ in 0..<5 {
            var start = ContinuousClock.now
            score = try reference.score(candidate)
            prepared.append((ContinuousClock.now - start) / .seconds(1))
            start = ContinuousClock.now
            _ = try SSIMULACRA2.score(original: image, distorted: candidate)
            whole.append((ContinuousClock.now - start) / .seconds(1))
        }
        var line =
            "  one score at \(image.width)×\(image.height) (\(String(format: "%.2f", score))): \(String(format: "%.0f", Measure.median(prepared) * 1000)) ms against a prepared original, \(String(format: "%.0f", Measure.median(whole) * 1000)) ms whole"
        if let tool = ProcessInfo.processInfo.environment["IMAGO_SSIMULACRA2"], FileManager.default.isExecutableFile(atPath: tool) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-ssim-\(getpid())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let a = directory.appendingPathComponent("a.png").path, b = directory.appendingPathComponent("b.png").path
            try PNGEncoder().encode(image).write(to: URL(fileURLWithPath: a))
            try PNGEncoder().encode(candidate).write(to: URL(fileURLWithPath: b))
            var times: [Double] = []
            var output = ""
            for _ in 0..<5 {
                let start = ContinuousClock.now
                output = try Measure.run(tool, [a, b])
                times.append((ContinuousClock.now - start) / .seconds(1))
            }
            line +=
                "; cloudinary/ssimulacra2 \(String(format: "%.0f", Measure.median(times) * 1000)) ms (its score \(output.trimmingCharacters(in: .whitespacesAndNewlines)))"
        }
        print(line)
    }
}
