import Foundation
import Imago

/// The formats issue's figures, each beside the tool that ships with the library underneath,
/// measured in the same run: PNG encode against Pillow's `save(format="PNG")` (size too), AVIF
/// encode against `avifenc` at the same quantizer and speed, and decode of AVIF (`avifdec --info`,
/// which decodes every frame and writes nothing), HEIC (`heif-convert` to y4m, no RGB conversion),
/// JPEG XL (`djxl`'s own timing, one thread) and TIFF (Pillow). Decodes are Imago's, one thread
/// each as in the pipeline. A command-line peer is timed by a shell loop around it (its start and
/// exit included, a few ms), not by Foundation's `Process`, whose own start cost tens of ms.
enum FormatBenchmark {
    static let rounds = 3

    /// The photos every row here is measured on.
    static func photos() throws -> [String] {
        let photos = CodecBenchmark.jpegs.map { "\(CodecBenchmark.directory)/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard photos.count >= 2 else { throw BenchmarkError("no photos in \(CodecBenchmark.directory): run `make deps`") }
        return photos
    }

    static func run() throws {
        let photos = try Self.photos()
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-formats-\(getpid())")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        try pngEncode(photos)
        // The slower codecs get two photos: an AVIF encode of 9 MP takes seconds.
        let two = Array(photos.prefix(2))
        try avifEncode(two, in: temporary)
        try decode(
            "AVIF", two, in: temporary, make: { "/usr/bin/avifenc -j all -y 420 -s 8 --min 24 --max 26 \($0) \($1)" }, ext: "avif",
            peerName: "avifdec --jobs 1 --info"
        ) { file in
            try shellTime("/usr/bin/avifdec --jobs 1 --info '\(file)'")
        }
        try decode(
            "HEIC", two, in: temporary, make: { "/usr/bin/heif-enc -q 60 \($0) -o \($1)" }, ext: "heic",
            peerName: "heif-convert to y4m"
        ) { file in
            try shellTime("/usr/bin/heif-convert --quiet '\(file)' '\(temporary.appendingPathComponent("out.y4m").path)'")
        }
        try decode(
            "JPEG XL", two, in: temporary, make: { "/usr/bin/cjxl --num_threads=0 -d 1 \($0) \($1)" }, ext: "jxl",
            peerName: "djxl --num_threads=1 (its own timing)"
        ) { file in try djxlTime(file) }
        try decode(
            "TIFF (LZW)", two, in: temporary, make: { "/usr/bin/convert \($0) -compress lzw \($1)" }, ext: "tif",
            peerName: "Pillow Image.open().load()"
        ) { file in try pillowDecodeTime(file) }
    }

    static func wallTime(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    /// Seconds one run of `command` takes, the mean of `rounds` runs in one shell loop.
    static func shellTime(_ command: String, rounds: Int = 3) throws -> Double {
        let script = "start=$(date +%s%N); for i in $(seq \(rounds)); do \(command) >/dev/null 2>&1 || exit 1; done; echo $(( $(date +%s%N) - start ))"
        guard let nanoseconds = Double(try Measure.run("/bin/sh", ["-c", script]).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError("cannot time \(command)")
        }
        return nanoseconds / 1e9 / Double(rounds)
    }

    static var python: String { ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3" }

    /// Imago's `PNGEncoder()` and Pillow's `save(format="PNG")` at their defaults on the decoded
    /// photos, alternating, median of rounds each.
    static func pngEncode(_ photos: [String]) throws {
        let script = """
            import io, sys, time
            from PIL import Image
            for path in sys.argv[1:]:
                image = Image.open(path); image.load(); times = []
                for _ in range(\(rounds)):
                    out = io.BytesIO(); start = time.perf_counter(); image.save(out, format="PNG"); times.append(time.perf_counter() - start)
                times.sort(); print(times[len(times) // 2], out.tell())
            """
        var imagoSeconds = 0.0, peerSeconds = 0.0, imagoBytes = 0, peerBytes = 0, megapixels = 0.0
        for photo in photos {
            let lines = try Measure.run(python, ["-c", script, photo]).split(separator: "\n").map { $0.split(separator: " ") }
            guard let line = lines.first, line.count == 2, let seconds = Double(line[0]), let bytes = Int(line[1]) else {
                throw BenchmarkError("Pillow did not report (is it installed?)")
            }
            peerSeconds += seconds
            peerBytes += bytes
            let image = try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: photo)))
            var times: [Double] = [], size = 0
            for _ in 0..<rounds { times.append(try wallTime { size = try PNGEncoder().encode(image).count }) }
            imagoSeconds += Measure.median(times)
            imagoBytes += size
            megapixels += CodecBenchmark.megapixels(image)
        }
        let ratio = peerSeconds / imagoSeconds
        report(
            "PNG encode, \(photos.count) decoded photos of 3840×2400 RGB, defaults (Imago: rows filtered on every core, then run-length or libdeflate level 7 as a fast LZ77 pass judges them; Pillow: zlib-ng level 6, one thread)",
            imago: String(
                format: "%.1f MP/s, %d bytes (%.2f%% of Pillow's)", megapixels / imagoSeconds, imagoBytes, Double(imagoBytes) / Double(peerBytes) * 100),
            peer: String(format: "Pillow save(format=\"PNG\"): %.1f MP/s, %d bytes", megapixels / peerSeconds, peerBytes),
            ratio: ratio, target: "≥ 1.0× Pillow at no larger size", met: ratio >= 1.0 && imagoBytes <= peerBytes)
    }

    /// The same quantizer (quality 60 → 25) and speed 6, both on every core.
    static func avifEncode(_ photos: [String], in temporary: URL) throws {
        var imagoSeconds = 0.0, peerSeconds = 0.0, imagoBytes = 0, peerBytes = 0
        let encoder = AVIFEncoder(quality: 60, speed: 6)
        for photo in photos {
            let output = temporary.appendingPathComponent("peer.avif").path
            let quantizer = String(encoder.quantizer)
            // 4:2:0 as Imago writes below quality 100 (avifenc keeps a JPEG's 4:4:4 otherwise).
            peerSeconds += try shellTime(
                "/usr/bin/avifenc -j all -y 420 -s 6 --min \(quantizer) --max \(quantizer) --minalpha 0 --maxalpha 0 '\(photo)' '\(output)'", rounds: 1)
            peerBytes += (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            let image = try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: photo)))
            imagoSeconds += try wallTime { imagoBytes += try encoder.encode(image).count }
        }
        report(
            "AVIF encode, \(photos.count) photos of 3840×2400, 4:2:0, quantizer \(encoder.quantizer), speed 6, every core (avifenc's time includes reading its JPEG)",
            imago: String(format: "%.2f s, %.2f MB", imagoSeconds, Double(imagoBytes) / 1e6),
            peer: String(format: "avifenc: %.2f s, %.2f MB", peerSeconds, Double(peerBytes) / 1e6),
            ratio: peerSeconds / imagoSeconds, target: "≥ 0.9× avifenc", met: peerSeconds / imagoSeconds >= 0.9)
    }

    /// Makes each photo into `ext` with the shell command `make(input, output)`, then times Imago's
    /// decode (median of rounds, after a warm-up) against `peer` (median of rounds).
    static func decode(
        _ name: String, _ photos: [String], in temporary: URL, make: (String, String) -> String, ext: String, peerName: String,
        peer: (String) throws -> Double
    ) throws {
        var imagoSeconds = 0.0, peerSeconds = 0.0, megapixels = 0.0
        for (index, photo) in photos.enumerated() {
            let file = temporary.appendingPathComponent("\(index).\(ext)").path
            try Measure.run("/bin/sh", ["-c", make(photo, file) + " >/dev/null 2>&1"])
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let (seconds, image) = try CodecBenchmark.decodeTime(data)
            imagoSeconds += seconds
            megapixels += CodecBenchmark.megapixels(image)
            peerSeconds += Measure.median(try (0..<rounds).map { _ in try peer(file) })
        }
        let ratio = peerSeconds / imagoSeconds
        report(
            "\(name) decode, \(photos.count) photos of 3840×2400 to 8-bit RGBA, one thread",
            imago: String(format: "%.1f MP/s", megapixels / imagoSeconds), peer: String(format: "\(peerName): %.1f MP/s", megapixels / peerSeconds),
            ratio: ratio, target: "≥ 0.9× the peer", met: ratio >= 0.9)
    }

    /// djxl decodes without writing and prints "W x H, geomean: S MP/s [min, max], N reps, T threads".
    static func djxlTime(_ file: String) throws -> Double {
        let output = try Measure.run("/usr/bin/djxl", [file, "--num_reps=3", "--num_threads=1"], standardError: true)
        guard let line = output.split(separator: "\n").first(where: { $0.contains("MP/s") }) else { throw BenchmarkError("cannot read djxl's output") }
        let fields = line.split(separator: " ")
        guard fields.count > 3, let unit = fields.firstIndex(of: "MP/s"), unit > 0, let speed = Double(fields[unit - 1]),
            let width = Double(fields[0]), let height = Double(fields[2].filter(\.isNumber))
        else { throw BenchmarkError("cannot read djxl's line \(line)") }
        return width * height / 1e6 / speed
    }

    static func pillowDecodeTime(_ file: String) throws -> Double {
        let script = """
            import sys, time
            from PIL import Image
            start = time.perf_counter(); image = Image.open(sys.argv[1]); image.load(); print(time.perf_counter() - start)
            """
        guard let seconds = Double(try Measure.run(python, ["-c", script, file]).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError("Pillow did not report")
        }
        return seconds
    }
}
