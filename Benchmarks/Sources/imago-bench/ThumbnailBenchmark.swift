import Foundation
import Imago

/// Thumbnails of the large JPEG photos (3840×2400) to fit 512×512 (decoded at 1/4) and 256×256
/// (decoded at 1/8, from DC coefficients alone): decode at a reduced scale, resize, JPEG q80
/// encode, one thread, against Pillow (`draft` + `thumbnail` + save) and libvips' `vipsthumbnail`
/// on the same files; and five processed variants of one source through the pipeline against one.
enum ThumbnailBenchmark {
    static let rounds = 5
    static let box = 512

    static func run() async throws {
        let files = CodecBenchmark.jpegs.map { "\(CodecBenchmark.directory)/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !files.isEmpty else { throw BenchmarkError("no photos in \(CodecBenchmark.directory): run `make deps`") }
        try thumbnails(files, box: box)
        try thumbnails(files, box: 256)
        try await variants(files[0])
    }

    static func thumbnails(_ files: [String], box: Int) throws {
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: box, height: box)
        options.targetMode = .fit
        let resize = try ImageProcessors.Resize(size: PixelSize(width: box, height: box))
        let encoder = JPEGEncoder(quality: 80)
        let photos = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        var size = ""
        func imagoRound() throws -> Double {
            let start = ContinuousClock.now
            for data in photos {
                let thumbnail = try resize.process(try DecoderRegistry.standard().decode(data, options: options))
                let encoded = try encoder.encode(thumbnail)
                size = "\(thumbnail.width)×\(thumbnail.height), \(encoded.count / 1024) KB"
            }
            return (ContinuousClock.now - start) / .seconds(1)
        }

        // Pillow times the same files in its own process, one pass per call, so that rounds of
        // the two alternate and drift in the machine hits both alike.
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let script = """
            import io, sys, time
            from PIL import Image
            def thumbnail(path):
                image = Image.open(path); image.draft("RGB", (\(box), \(box))); image.thumbnail((\(box), \(box)))
                image.save(io.BytesIO(), "JPEG", quality=80)
            thumbnail(sys.argv[1])  # loads the plugins, as Imago's process is warm
            start = time.perf_counter()
            for path in sys.argv[1:]: thumbnail(path)
            print(time.perf_counter() - start)
            """
        func pillowRound() throws -> Double {
            guard let seconds = Double(try Measure.run(python, ["-c", script] + files).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchmarkError("Pillow did not time the files (is it installed?)")
            }
            return seconds
        }
        _ = try imagoRound()
        _ = try pillowRound()
        var imagoTimes: [Double] = [], pillowTimes: [Double] = []
        for _ in 0..<rounds {
            imagoTimes.append(try imagoRound())
            pillowTimes.append(try pillowRound())
        }
        let imagoSeconds = Measure.median(imagoTimes), pillowSeconds = Measure.median(pillowTimes)

        // vipsthumbnail makes all the thumbnails in one process (each file four times, so its
        // start-up is shared by 20 thumbnails), on one thread as the others; median of the rounds.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-vips-\(getpid())")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        let repeated = Array(repeating: files, count: 4).flatMap { $0 }
        var vipsTimes: [Double] = []
        for round in 0...rounds {
            let start = ContinuousClock.now
            _ = try Measure.run(
                "/usr/bin/vipsthumbnail", repeated + ["--size", "\(box)x\(box)", "-o", "\(output.path)/%s.jpg[Q=80]"],
                environment: ["VIPS_CONCURRENCY": "1"])
            if round > 0 { vipsTimes.append((ContinuousClock.now - start) / .seconds(1)) }
        }
        let vipsSeconds = Measure.median(vipsTimes) / 4

        let perPhoto = { (seconds: Double) in seconds / Double(files.count) * 1000 }
        report(
            "Thumbnail to fit \(box)×\(box) + JPEG q80, \(files.count) photos of 3840×2400, one thread, median of \(rounds) alternating rounds (\(size))",
            imago: String(format: "reduced decode + Lanczos3 + encode: %.1f ms per photo", perPhoto(imagoSeconds)),
            peer: String(format: "Pillow draft + thumbnail + save: %.1f ms per photo", perPhoto(pillowSeconds)),
            ratio: pillowSeconds / imagoSeconds, target: "≥ 1.0× Pillow", met: pillowSeconds / imagoSeconds >= 1.0)
        report(
            "The same thumbnails against libvips",
            imago: String(format: "%.1f ms per photo", perPhoto(imagoSeconds)),
            peer: String(
                format: "vipsthumbnail --size %dx%d, VIPS_CONCURRENCY=1, 20 thumbnails per process: %.1f ms per photo", box, box, perPhoto(vipsSeconds)),
            ratio: vipsSeconds / imagoSeconds, target: "≥ 0.8× vipsthumbnail", met: vipsSeconds / imagoSeconds >= 0.8)
    }

    /// Five variants of one source (a 512 thumbnail plain, as a circle, rounded, grey, blurred)
    /// through one pipeline, against the plain one alone; a new pipeline without caches per round.
    static func variants(_ file: String) async throws {
        let url = URL(fileURLWithPath: file)
        let thumbnail = ImageRequest.Thumbnail(maxPixelSize: box)
        let processors: [[any ImageProcessing]] = [
            [], [try ImageProcessors.Circle()], [try ImageProcessors.RoundedCorners(radius: 24)],
            [ImageProcessors.Grayscale()], [try ImageProcessors.GaussianBlur(radius: 3)],
        ]
        func load(_ count: Int) async throws -> Double {
            var configuration = ImagePipeline.Configuration()
            configuration.memoryCache = nil
            let pipeline = ImagePipeline(configuration: configuration)
            let start = ContinuousClock.now
            let tasks = processors.prefix(count).map { pipeline.imageTask(with: ImageRequest(url: url, processors: $0, thumbnail: thumbnail)) }
            for task in tasks { _ = try await task.response }
            guard pipeline.statistics.decodes == 1 else { throw BenchmarkError("\(count) variants took \(pipeline.statistics.decodes) decodes") }
            return (ContinuousClock.now - start) / .seconds(1)
        }
        var one: [Double] = [], five: [Double] = []
        _ = try await load(1)
        for _ in 0..<rounds {
            one.append(try await load(1))
            five.append(try await load(5))
        }
        let ratio = Measure.median(five) / Measure.median(one)
        report(
            "Five variants of one photo (512 thumbnail: plain, circle, rounded, grey, blurred), one pipeline",
            imago: String(format: "five variants: %.1f ms (one decode)", Measure.median(five) * 1000),
            peer: String(format: "one variant: %.1f ms", Measure.median(one) * 1000),
            ratio: ratio, target: "< 1.5× one variant", met: ratio < 1.5)
    }
}
