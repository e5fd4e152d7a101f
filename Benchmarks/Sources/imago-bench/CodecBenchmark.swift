import Foundation
import Imago

/// Decode speed on the same files, one thread, against the tools the libraries ship or that people
/// use: JPEG against `tjbench` (libjpeg-turbo-progs), JPEG 1/8 against Imago's own full decode, PNG
/// against Pillow, WebP against `dwebp`; and the peak RSS of decoding a 24 MP JPEG. Photos are
/// ukui-wallpapers' (3840×2400), installed by `make deps`.
enum CodecBenchmark {
    static let directory = "/usr/share/backgrounds"
    static let jpegs = ["2004default.jpg", "firstgeneration.jpg", "rhythm.jpg", "string.jpg", "the-mouse.jpg"]
    static let pngs = ["calla.png", "fluent-color.png", "goldfish.png", "focal-ubuntukylin.png"]
    static let rounds = 5

    static func run() throws {
        let jpegFiles = jpegs.map { "\(directory)/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        let pngFiles = pngs.map { "\(directory)/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !jpegFiles.isEmpty, !pngFiles.isEmpty else { throw BenchmarkError("no photos in \(directory): run `make deps`") }
        try jpegFull(jpegFiles)
        try jpegScaled(jpegFiles)
        try png(pngFiles)
        try webp(jpegFiles)
        try peakMemory(jpegFiles[0])
    }

    /// Median seconds of `rounds` decodes of `data` with `options`, after one untimed warm-up decode
    /// (tjbench warms up too), and the image.
    static func decodeTime(_ data: Data, options: DecodingOptions = DecodingOptions()) throws -> (seconds: Double, image: Image) {
        var times: [Double] = []
        var image: Image? = try DecoderRegistry.standard().decode(data, options: options)
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            image = try DecoderRegistry.standard().decode(data, options: options)
            times.append((ContinuousClock.now - start) / .seconds(1))
        }
        return (Measure.median(times), image!)
    }

    static func megapixels(_ image: Image) -> Double { Double(image.width * image.height) / 1_000_000 }

    /// Peer and Imago alternate, `peerRounds` times per file, and each side's median counts: on this
    /// VM the speed drifts by 10–20% over a minute, which a one-after-the-other order turns into the ratio.
    static let peerRounds = 3

    static func jpegFull(_ files: [String]) throws {
        var imagoMP = 0.0, imagoSeconds = 0.0, peerSeconds = 0.0
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            var imagoTimes: [Double] = [], peerRates: [Double] = [], megapixelsOfFile = 0.0
            for _ in 0..<peerRounds {
                let (seconds, image) = try decodeTime(data)
                imagoTimes.append(seconds)
                megapixelsOfFile = megapixels(image)
                let output = try Measure.run("/usr/bin/tjbench", [file, "-rgbx", "-fastupsample", "-benchtime", "1", "-warmup", "0.5", "-nowrite"])
                guard let line = output.split(separator: "\n").first(where: { $0.contains("Throughput") }),
                    let peerRate = line.split(separator: " ").compactMap({ Double($0) }).first
                else { throw BenchmarkError("cannot read tjbench's output") }
                peerRates.append(peerRate)
            }
            imagoMP += megapixelsOfFile
            imagoSeconds += Measure.median(imagoTimes)
            peerSeconds += megapixelsOfFile / Measure.median(peerRates)
        }
        let imago = imagoMP / imagoSeconds, peer = imagoMP / peerSeconds
        report(
            "JPEG full decode to RGBA, \(files.count) photos of 3840×2400, one thread, \(peerRounds) alternating rounds",
            imago: String(format: "%.1f MP/s", imago), peer: String(format: "tjbench -rgbx -fastupsample: %.1f MP/s", peer),
            ratio: imago / peer, target: "≥ 0.9× tjbench", met: imago / peer >= 0.9)
    }

    /// On the photos as shipped (quality ~98, 4:4:4, one of them progressive) and on q85 4:2:0
    /// re-encodes of them, a quality typical of the web. At 1/8 JPEGDecoder uses Imago's DC-only
    /// decoder; the slowest photo's own ratio is printed too.
    static func jpegScaled(_ files: [String]) throws {
        try jpegScaled(files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }, label: "the photos as shipped")
        let reencoded = try files.map { try JPEGEncoder(quality: 85).encode(DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: $0)))) }
        try jpegScaled(reencoded, label: "q85 re-encodes of the photos")
    }

    static func jpegScaled(_ files: [Data], label: String) throws {
        var full = 0.0, scaled = 0.0, worst = Double.infinity
        for data in files {
            let (fullSeconds, image) = try decodeTime(data)
            var options = DecodingOptions()
            options.targetSize = PixelSize(width: image.width / 8, height: image.height / 8)
            let (scaledSeconds, small) = try decodeTime(data, options: options)
            guard small.width * 8 <= image.width + 7 else { throw BenchmarkError("not decoded at 1/8") }
            full += fullSeconds
            scaled += scaledSeconds
            worst = min(worst, fullSeconds / scaledSeconds)
        }
        report(
            "JPEG decode at 1/8 scale (DC coefficients only), \(label)",
            imago: String(format: "%.1f ms per photo (slowest photo: %.2f× its full decode)", scaled / Double(files.count) * 1000, worst),
            peer: String(format: "Imago's full decode: %.1f ms per photo", full / Double(files.count) * 1000),
            ratio: full / scaled, target: "≥ 3× faster than full", met: full / scaled >= 3)
    }

    static func png(_ files: [String]) throws {
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let script = """
            import sys, time
            from PIL import Image
            for path in sys.argv[1:]:
                times = []
                for _ in range(\(rounds)):
                    start = time.perf_counter(); image = Image.open(path); image.load(); times.append(time.perf_counter() - start)
                times.sort(); print(times[len(times) // 2])
            """
        var peerTimes = [[Double]](repeating: [], count: files.count), imagoTimes = peerTimes
        var megapixelsTotal = 0.0
        for round in 0..<peerRounds {
            let times = try Measure.run(python, ["-c", script] + files).split(separator: "\n").compactMap { Double($0) }
            guard times.count == files.count else { throw BenchmarkError("Pillow did not time every file (is it installed?)") }
            for (index, file) in files.enumerated() {
                peerTimes[index].append(times[index])
                let (seconds, image) = try decodeTime(Data(contentsOf: URL(fileURLWithPath: file)))
                imagoTimes[index].append(seconds)
                if round == 0 { megapixelsTotal += megapixels(image) }
            }
        }
        let imago = megapixelsTotal / imagoTimes.map(Measure.median).reduce(0, +)
        let peer = megapixelsTotal / peerTimes.map(Measure.median).reduce(0, +)
        report(
            "PNG decode, \(files.count) photos of 3840×2400, one thread, \(peerRounds) alternating rounds (Imago to RGBA; Pillow in its native mode)",
            imago: String(format: "%.1f MP/s", imago), peer: String(format: "Pillow Image.open().load(): %.1f MP/s", peer),
            ratio: imago / peer, target: "≥ 1.0× Pillow", met: imago / peer >= 1.0)
    }

    static func webp(_ jpegFiles: [String]) throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-webp-\(getpid())")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        var megapixelsTotal = 0.0, imagoSeconds = 0.0, peerSeconds = 0.0
        for (index, file) in jpegFiles.enumerated() {
            let photo = try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: file)))
            let data = try WebPEncoder(quality: 80).encode(photo)
            let path = temporary.appendingPathComponent("\(index).webp").path
            try data.write(to: URL(fileURLWithPath: path))
            let (seconds, image) = try decodeTime(data)
            var peer: [Double] = []
            for _ in 0..<rounds {
                let output = try Measure.run("/usr/bin/dwebp", [path, "-pam", "-o", "/dev/null", "-v"], standardError: true)
                guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Time to decode picture") }),
                    let value = Double(line.split(separator: " ").last!.dropLast())
                else { throw BenchmarkError("cannot read dwebp's output") }
                peer.append(value)
            }
            megapixelsTotal += megapixels(image)
            imagoSeconds += seconds
            peerSeconds += Measure.median(peer)
        }
        let imago = megapixelsTotal / imagoSeconds, peer = megapixelsTotal / peerSeconds
        report(
            "WebP lossy decode (q80 encodings of the JPEG photos), one thread",
            imago: String(format: "%.1f MP/s", imago), peer: String(format: "dwebp (its own decode time): %.1f MP/s", peer),
            ratio: imago / peer, target: "≥ 0.9× dwebp", met: imago / peer >= 0.9)
    }

    /// A 6000×4000 JPEG tiled from a photo, decoded in a child process that reports its peak RSS.
    static func peakMemory(_ photoPath: String) throws {
        let photo = try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: photoPath)))
        let width = 6000, height = 4000
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in stride(from: 0, to: width, by: photo.width) {
                let count = min(photo.width, width - x) * 4
                let source = ((y % photo.height) * photo.width) * 4
                pixels.replaceSubrange(((y * width + x) * 4)..<((y * width + x) * 4 + count), with: photo.pixels[source..<(source + count)])
            }
        }
        let image = Image(
            width: width, height: height, frames: [.init(pixels: pixels)],
            metadata: ImageMetadata(format: .jpeg, originalWidth: width, originalHeight: height, hasAlpha: false))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-24mp-\(getpid()).jpg")
        try JPEGEncoder(quality: 85).encode(image).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try Measure.run(CommandLine.arguments[0], ["decode-rss", file.path])
        let values = Dictionary(
            uniqueKeysWithValues: output.split(separator: "\n").compactMap { line -> (String, Double)? in
                let parts = line.split(separator: "=")
                guard parts.count == 2, let value = Double(parts[1]) else { return nil }
                return (String(parts[0]), value)
            })
        let peak = values["peak"] ?? .nan, decoded = values["decoded"] ?? .nan, baseline = values["baseline"] ?? .nan
        report(
            "Peak RSS decoding a 6000×4000 (24 MP) JPEG, in its own process",
            imago: String(format: "peak RSS %.1f MB (process before decoding, file read: %.1f MB)", peak, baseline),
            peer: String(format: "the decoded RGBA size: %.1f MB", decoded),
            ratio: peak / decoded, target: "< 2× decoded size", met: peak < 2 * decoded)
    }

    /// Child side of `peakMemory`.
    static func decodeForMemory(_ path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let baseline = Measure.memoryMB("VmRSS")
        let image = try JPEGDecoder().decode(data, options: DecodingOptions())
        print("baseline=\(baseline)\npeak=\(Measure.memoryMB("VmHWM"))\ndecoded=\(Double(image.cost) / 1_048_576)")
    }
}
