import Foundation
import Imago

/// `imago thumbnail` (the CLI, release build) on every core against libvips' `vipsthumbnail` (its
/// default threads) and Pillow in one process and in as many processes as cores (the files split
/// among them, as a `multiprocessing.Pool` would: a real Pool started from this process hung with
/// a dead worker on this machine, so the processes are started here, at once),
/// each given the same files in one process: the ukui photos (3840×2400), and the same photos
/// re-encoded as q85 JPEGs. Each file is copied four times under other names, so every tool makes
/// 20 thumbnails per run and nothing is coalesced; whole processes are timed (start-up included
/// for all), median of alternating rounds.
enum BatchThumbnailBenchmark {
    static let rounds = 5
    static let box = 256

    static func run() throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        let photos = CodecBenchmark.jpegs.map { "\(CodecBenchmark.directory)/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !photos.isEmpty else { throw BenchmarkError("no photos in \(CodecBenchmark.directory): run `make deps`") }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-batch-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let originals = try copies(of: photos.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }, in: work.appendingPathComponent("photos"))
        let reencoded = try photos.map { path in
            try JPEGEncoder(quality: 85).encode(try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: path))))
        }
        let q85 = try copies(of: reencoded, in: work.appendingPathComponent("q85"))
        try compare(originals, label: "the ukui photos (\(photos.count) × 4 copies)", cli: cli, work: work, target: 1.5)
        try compare(q85, label: "the ukui photos re-encoded at q85 (\(photos.count) × 4 copies)", cli: cli, work: work, target: 1.2)
        try convertResize(photos, cli: cli, work: work)
    }

    /// `imago convert --resize 512x512` of progressive JPEGs (the ukui photos re-encoded by cjpeg
    /// -progressive), one process per photo, against djpeg -scale 1/4 and a Pillow process.
    static func convertResize(_ photos: [String], cli: String, work: URL) throws {
        let directory = work.appendingPathComponent("progressive")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var files: [String] = []
        for (index, photo) in photos.enumerated() {
            let ppm = directory.appendingPathComponent("\(index).ppm").path, jpeg = directory.appendingPathComponent("\(index).jpg").path
            try Measure.run("/usr/bin/djpeg", ["-outfile", ppm, photo])
            try Measure.run("/usr/bin/cjpeg", ["-progressive", "-quality", "90", "-outfile", jpeg, ppm])
            files.append(jpeg)
        }
        let out = directory.appendingPathComponent("out.jpg").path
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let pillow = """
            import sys
            from PIL import Image
            image = Image.open(sys.argv[1]); image.draft("RGB", (512, 512)); image.thumbnail((512, 512)); image.save(sys.argv[2], "JPEG", quality=85)
            """
        func timed(_ body: () throws -> Void) rethrows -> Double {
            let start = ContinuousClock.now
            try body()
            return (ContinuousClock.now - start) / .seconds(1)
        }
        var imago: [Double] = [], djpeg: [Double] = [], pillowTimes: [Double] = []
        for round in 0...rounds {
            let a = try timed { for file in files { try Measure.run(cli, ["convert", "--resize", "512x512", "--quality", "85", file, out]) } }
            let b = try timed { for file in files { try Measure.run("/usr/bin/djpeg", ["-scale", "1/4", "-outfile", "/dev/null", file]) } }
            let c = try timed { for file in files { try Measure.run(python, ["-c", pillow, file, out]) } }
            if round > 0 {
                imago.append(a)
                djpeg.append(b)
                pillowTimes.append(c)
            }
        }
        let perPhoto = { (seconds: Double) in seconds / Double(files.count) * 1000 }
        let imagoMS = perPhoto(Measure.median(imago)), djpegMS = perPhoto(Measure.median(djpeg)), pillowMS = perPhoto(Measure.median(pillowTimes))
        report(
            "convert --resize 512x512 of \(files.count) progressive 3840×2400 JPEGs, one process per photo (start-up included), median of \(rounds) rounds",
            imago: String(format: "imago convert --resize (decode at 1/4, resize, encode q85): %.0f ms per photo", imagoMS),
            peer: String(format: "djpeg -scale 1/4 (decode only): %.0f ms; Pillow draft + thumbnail + save: %.0f ms", djpegMS, pillowMS),
            ratio: pillowMS / imagoMS, target: "≥ 1.0× Pillow", met: pillowMS / imagoMS >= 1.0)
    }

    /// Each image written four times under distinct names; returns the paths.
    static func copies(of images: [Data], in directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var paths: [String] = []
        for copy in 0..<4 {
            for (index, data) in images.enumerated() {
                let path = directory.appendingPathComponent("photo-\(index)-\(copy).jpg").path
                try data.write(to: URL(fileURLWithPath: path))
                paths.append(path)
            }
        }
        return paths
    }

    static func compare(_ files: [String], label: String, cli: String, work: URL, target: Double) throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let output = work.appendingPathComponent("out")
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let pillow = """
            import os, sys
            from PIL import Image
            for path in sys.argv[2:]:
                image = Image.open(path); image.draft("RGB", (\(box), \(box))); image.thumbnail((\(box), \(box)))
                image.save(os.path.join(sys.argv[1], os.path.basename(path)), "JPEG", quality=85)
            """
        /// Pillow in `cores` processes at once, each given every `cores`-th file.
        func pillowProcesses() throws {
            let processes = try (0..<cores).map { part -> Process in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: python)
                process.arguments = ["-c", pillow, output.path] + files.enumerated().filter { $0.offset % cores == part }.map(\.element)
                try process.run()
                return process
            }
            for process in processes {
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { throw BenchmarkError("a Pillow process exited with \(process.terminationStatus)") }
            }
        }
        func timed(_ executable: String, _ arguments: [String]) throws -> Double {
            try timed { try Measure.run(executable, arguments) }
        }
        func timed(_ body: () throws -> Void) throws -> Double {
            try? FileManager.default.removeItem(at: output)
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            let start = ContinuousClock.now
            try body()
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            let written = try FileManager.default.contentsOfDirectory(atPath: output.path).count
            guard written == files.count else { throw BenchmarkError("wrote \(written) of \(files.count) thumbnails") }
            return seconds
        }
        let runs: [(String, () throws -> Double)] = [
            ("imago", { try timed(cli, ["thumbnail", "--json", "--size", "\(box)x\(box)", "--quality", "85", "--out", output.path] + files) }),
            ("vips", { try timed("/usr/bin/vipsthumbnail", files + ["--size", "\(box)x\(box)", "-o", "\(output.path)/%s.jpg[Q=85]"]) }),
            ("pillow", { try timed(python, ["-c", pillow, output.path] + files) }),
            ("pool", { try timed(pillowProcesses) }),
        ]
        var times: [String: [Double]] = [:]
        for run in runs { _ = try run.1() }  // warm the page cache and the interpreters
        for _ in 0..<rounds {
            for (name, body) in runs { times[name, default: []].append(try body()) }
        }
        let imago = Measure.median(times["imago"] ?? []), vips = Measure.median(times["vips"] ?? [])
        let pillowOne = Measure.median(times["pillow"] ?? []), pool = Measure.median(times["pool"] ?? [])
        let fastest = min(vips, pillowOne, pool)
        let perImage = { (seconds: Double) in seconds / Double(files.count) * 1000 }
        report(
            "Batch thumbnails to fit \(box)×\(box), JPEG q85, of \(label), \(cores) cores, whole processes, median of \(rounds) rounds",
            imago: String(format: "imago thumbnail: %.2f s (%.1f ms per image)", imago, perImage(imago)),
            peer: String(
                format: "vipsthumbnail (default threads): %.2f s; Pillow one process: %.2f s; Pillow in %d processes: %.2f s — fastest %.2f s",
                vips, pillowOne, cores, pool, fastest),
            ratio: fastest / imago, target: String(format: "≥ %.1f× the fastest peer", target), met: fastest / imago >= target)
    }
}
