import Foundation
import Imago

/// A process's start, and one thumbnail per process: `imago --version` against `vipsthumbnail
/// --version`, then 12 photos (the 5 ukui JPEGs and 7 of the PNG wallpapers written as q90 JPEGs),
/// each thumbnailed to 256×256 by its own `imago thumbnail`, `vipsthumbnail` and Pillow process,
/// as `find … -exec` would. Alternating, median of rounds; start-up counted for all; processes
/// started with posix_spawn (``Measure/spawn(_:_:)``), not Foundation's `Process`.
enum StartupBenchmark {
    static let rounds = 7
    static let box = 256

    static func run() throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        let vips = "/usr/bin/vipsthumbnail"
        var imagoStart: [Double] = [], vipsStart: [Double] = []
        for _ in 0..<30 {
            imagoStart.append(try Measure.elapsed { try Measure.spawn(cli, ["--version"]) })
            vipsStart.append(try Measure.elapsed { try Measure.spawn(vips, ["--version"]) })
        }
        let imagoMS = Measure.median(imagoStart) * 1000, vipsMS = Measure.median(vipsStart) * 1000
        report(
            "a process's start: `--version`, median of 30 alternating runs",
            imago: String(format: "imago --version: %.1f ms", imagoMS), peer: String(format: "vipsthumbnail --version: %.1f ms", vipsMS),
            ratio: imagoMS / vipsMS, target: "≤ 0.5× vipsthumbnail's time", met: imagoMS / vipsMS <= 0.5)

        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-startup-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        var photos = CodecBenchmark.jpegs.map { "\(CodecBenchmark.directory)/\($0)" }
        let wallpapers = try FileManager.default.contentsOfDirectory(atPath: CodecBenchmark.directory).filter { $0.hasSuffix(".png") }.sorted()
        for name in wallpapers.prefix(12 - photos.count) {
            let image = try DecoderRegistry.standard().decode(Data(contentsOf: URL(fileURLWithPath: "\(CodecBenchmark.directory)/\(name)")))
            let path = work.appendingPathComponent(name.replacingOccurrences(of: ".png", with: ".jpg")).path
            try JPEGEncoder(quality: 90).encode(image).write(to: URL(fileURLWithPath: path))
            photos.append(path)
        }
        guard photos.count == 12 else { throw BenchmarkError("12 photos wanted, \(photos.count) found in \(CodecBenchmark.directory)") }
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let pillow = """
            import sys
            from PIL import Image
            image = Image.open(sys.argv[1]); image.draft("RGB", (\(box), \(box))); image.thumbnail((\(box), \(box))); image.save(sys.argv[2], "JPEG", quality=80)
            """
        var imago: [Double] = [], vipsTimes: [Double] = [], pillowTimes: [Double] = []
        for round in 0...rounds {
            let a = try Measure.elapsed {
                for photo in photos { try Measure.spawn(cli, ["thumbnail", photo, "--size", "\(box)x\(box)", "--quality", "80", "--out", out.path]) }
            }
            let b = try Measure.elapsed {
                for photo in photos { try Measure.spawn(vips, [photo, "--size", "\(box)x\(box)", "-o", out.path + "/%s-vips.jpg[Q=80]"]) }
            }
            let c = try Measure.elapsed { for photo in photos { try Measure.spawn(python, ["-c", pillow, photo, out.path + "/pillow.jpg"]) } }
            if round > 0 {
                imago.append(a)
                vipsTimes.append(b)
                pillowTimes.append(c)
            }
        }
        let perPhoto = { (seconds: Double) in seconds / Double(photos.count) * 1000 }
        let imagoPhoto = perPhoto(Measure.median(imago)), vipsPhoto = perPhoto(Measure.median(vipsTimes)), pillowPhoto = perPhoto(Measure.median(pillowTimes))
        let worst = min(vipsPhoto, pillowPhoto) / imagoPhoto
        report(
            "12 photos (the ukui wallpapers: 5 JPEGs, 7 PNGs written as q90 JPEGs) thumbnailed to \(box)×\(box), one process per photo (start-up included), median of \(rounds) rounds",
            imago: String(format: "imago thumbnail: %.1f ms per photo", imagoPhoto),
            peer: String(
                format: "vipsthumbnail: %.1f ms (%.2f×); Pillow draft + thumbnail + save: %.1f ms (%.2f×)", vipsPhoto, vipsPhoto / imagoPhoto, pillowPhoto,
                pillowPhoto / imagoPhoto),
            ratio: worst, target: "≥ 1.5× both", met: worst >= 1.5)
    }
}
