import Foundation
import Imago

/// What honouring colour profiles costs: the ukui photos made into Adobe RGB (1998) JPEGs by
/// ImageMagick, and the same photos written by ImageMagick at the same quality without a profile.
/// `imago thumbnail` and cold `imago serve` on each set (the profiled set converted to sRGB at the
/// output size, the transform made once), in pairs of rounds whose order alternates; and
/// `imago thumbnail` against `vipsthumbnail --export-profile srgb` on the profiled set.
enum ColorBenchmark {
    static let rounds = 7
    static let box = 256
    static let adobe = "/usr/share/color/icc/colord/AdobeRGB1998.icc"
    static let sRGB = "/usr/share/color/icc/colord/sRGB.icc"

    static func run() async throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        let photos = CodecBenchmark.jpegs.map { "\(CodecBenchmark.directory)/\($0)" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !photos.isEmpty, FileManager.default.fileExists(atPath: adobe) else { throw BenchmarkError("no photos or profiles: run `make deps`") }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-color-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let sources = work.appendingPathComponent("sources")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        var plain: [Data] = [], profiled: [Data] = []
        for (index, photo) in photos.enumerated() {
            let plainPath = sources.appendingPathComponent("plain-\(index).jpg").path, adobePath = sources.appendingPathComponent("adobe-\(index).jpg").path
            try Measure.run("/usr/bin/convert", [photo, "-strip", "-quality", "92", plainPath])
            try Measure.run("/usr/bin/convert", [photo, "-strip", "-profile", sRGB, "-profile", adobe, "-quality", "92", adobePath])
            plain.append(try Data(contentsOf: URL(fileURLWithPath: plainPath)))
            profiled.append(try Data(contentsOf: URL(fileURLWithPath: adobePath)))
        }
        let plainFiles = try BatchThumbnailBenchmark.copies(of: plain, in: work.appendingPathComponent("plain"))
        let adobeFiles = try BatchThumbnailBenchmark.copies(of: profiled, in: work.appendingPathComponent("adobe"))
        let output = work.appendingPathComponent("out")
        func timed(_ executable: String, _ arguments: [String]) throws -> Double {
            try? FileManager.default.removeItem(at: output)
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            let start = ContinuousClock.now
            try Measure.run(executable, arguments)
            return (ContinuousClock.now - start) / .seconds(1)
        }
        func thumbnails(_ files: [String]) throws -> Double {
            try timed(cli, ["thumbnail", "--json", "--size", "\(box)x\(box)", "--quality", "85", "--out", output.path] + files)
        }
        _ = try thumbnails(adobeFiles)
        _ = try thumbnails(plainFiles)

        // 1. imago thumbnail, profiled against plain: the cost of the conversion.
        let cost = try await Measure.pairedRounds(rounds, imago: { try thumbnails(adobeFiles) }, peer: { try thumbnails(plainFiles) })
        let slowdown = 1 / cost.ratio
        report(
            "imago thumbnail to fit \(box)×\(box), q85, of \(adobeFiles.count) Adobe RGB JPEGs (3840×2400) against the same photos untagged, median pair of \(rounds)",
            imago: String(format: "Adobe RGB, converted to sRGB: %.2f s", Measure.median(cost.imago)),
            peer: String(format: "untagged: %.2f s", Measure.median(cost.peer)),
            ratio: slowdown, target: "≤ 1.1× the time without a profile", met: slowdown <= 1.1)

        // 2. Against vipsthumbnail converting to sRGB.
        let vips = try await Measure.pairedRounds(
            rounds, imago: { try thumbnails(adobeFiles) },
            peer: {
                try timed("/usr/bin/vipsthumbnail", adobeFiles + ["--size", "\(box)x\(box)", "--export-profile", "srgb", "-o", "\(output.path)/%s.jpg[Q=85]"])
            })
        report(
            "the Adobe RGB photos to fit \(box)×\(box), q85, converted to sRGB, whole processes, median pair of \(rounds)",
            imago: String(format: "imago thumbnail: %.2f s", Measure.median(vips.imago)),
            peer: String(format: "vipsthumbnail --export-profile srgb (default threads): %.2f s", Measure.median(vips.peer)),
            ratio: vips.ratio, target: "≥ 1.5×", met: vips.ratio >= 1.5)

        // 3. Cold imago serve: each round asks every source at a size of its own, so nothing is kept.
        try await serve(cli: cli, root: sources, count: photos.count)
    }

    /// `imago serve` on `root`, every photo of each set fetched cold by one curl process (its
    /// requests one after another), profiled and plain sets alternating.
    static func serve(cli: String, root: URL, count: Int) async throws {
        let port = 18_000 + Int(getpid() % 1000)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: cli)
        server.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--local-root", root.path]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let base = "http://127.0.0.1:\(port)"
        for _ in 0..<200 {
            if (try? Measure.run("/usr/bin/curl", ["-sf", "-o", "/dev/null", "\(base)/health"])) != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        var size = 500
        func fetch(_ prefix: String) throws -> Double {
            size += 1
            let urls = (0..<count).map { "\(base)/_/rs:fit:\(size):\(size)/plain/local:///\(prefix)-\($0).jpg@jpg" }
            let start = ContinuousClock.now
            try Measure.run("/usr/bin/curl", ["-sf"] + urls.flatMap { ["-o", "/dev/null", $0] })
            return (ContinuousClock.now - start) / .seconds(1)
        }
        _ = try fetch("adobe")
        _ = try fetch("plain")
        let cost = try await Measure.pairedRounds(rounds * 2, imago: { try fetch("adobe") }, peer: { try fetch("plain") })
        let slowdown = 1 / cost.ratio
        report(
            "imago serve, cold: \(count) Adobe RGB JPEGs (3840×2400) → JPEG fit ~500, one client, against the same photos untagged, median pair of \(rounds * 2)",
            imago: String(format: "Adobe RGB, converted to sRGB: %.0f ms per image", Measure.median(cost.imago) / Double(count) * 1000),
            peer: String(format: "untagged: %.0f ms per image", Measure.median(cost.peer) / Double(count) * 1000),
            ratio: slowdown, target: "≤ 1.1× the time without a profile", met: slowdown <= 1.1)
    }
}
