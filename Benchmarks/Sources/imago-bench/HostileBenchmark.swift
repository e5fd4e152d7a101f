import Foundation
import Imago

/// Peak memory and time for every file in `Tests/Hostile` under 1 MB, decoded the way
/// `imago convert FILE out.png` does it (the pipeline's default configuration, then a PNG encode)
/// and the way `imago fetch` does (decode only), each in a child process measured by
/// `/usr/bin/time`, beside Pillow opening, loading and saving the same file as PNG.
/// Target: no file over 1 GB peak RSS or 30 s.
enum HostileBenchmark {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/Hostile")

    /// Child side: `imago-bench hostile convert|fetch FILE`. Exit 0 whether the file decodes or
    /// is refused: the measure is what it costs either way.
    static func runChild(mode: String, file: String) async {
        let pipeline = ImagePipeline(configuration: ImagePipeline.Configuration())
        do {
            let image = try await pipeline.image(for: URL(fileURLWithPath: file))
            if mode == "convert" {
                let output = FileManager.default.temporaryDirectory.appendingPathComponent("imago-hostile-\(getpid()).png")
                try PNGEncoder().encode(image).write(to: output)
                try? FileManager.default.removeItem(at: output)
            }
            print("decoded \(image.width)x\(image.height)")
        } catch {
            print("refused")
        }
    }

    static func run() throws {
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.fileSizeKey])
            .filter { !["py", "md"].contains($0.pathExtension) }
            .filter { ((try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) < 1 << 20 }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let python = ProcessInfo.processInfo.environment["IMAGO_BENCH_PYTHON"] ?? "/usr/bin/python3"
        let pillow = """
            import sys
            from PIL import Image
            try:
                image = Image.open(sys.argv[1]); image.load(); image.convert("RGBA").save("/tmp/imago-hostile-pillow.png")
                print("decoded")
            except Exception as error:
                print("refused", type(error).__name__)
            """
        print("hostile files, peak RSS and time per file (convert = decode + PNG encode; fetch = decode)")
        var worstMB = 0.0, worstSeconds = 0.0
        for file in files {
            let convert = try measure(CommandLine.arguments[0], ["hostile", "convert", file.path])
            let fetch = try measure(CommandLine.arguments[0], ["hostile", "fetch", file.path])
            let peer = try measure(python, ["-c", pillow, file.path])
            worstMB = max(worstMB, convert.megabytes, fetch.megabytes)
            worstSeconds = max(worstSeconds, convert.seconds, fetch.seconds)
            print(
                "  \(file.lastPathComponent) (\(Int64((try? Data(contentsOf: file).count) ?? 0)) B): convert \(convert), fetch \(fetch); Pillow \(peer)"
                    + String(format: "  (RSS ratio %.2f×)", convert.megabytes / max(peer.megabytes, 1)))
        }
        report(
            "hostile files under 1 MB, worst of convert and fetch", imago: String(format: "%.0f MB peak, %.2f s", worstMB, worstSeconds),
            peer: "target 1,000 MB and 30 s", ratio: worstMB / 1000, target: "≤ 1.0 of 1 GB, and ≤ 30 s",
            met: worstMB <= 1000 && worstSeconds <= 30)
    }

    struct Cost: CustomStringConvertible {
        var megabytes: Double
        var seconds: Double
        var outcome: String
        var description: String { String(format: "%.0f MB %.2f s %@", megabytes, seconds, outcome) }
    }

    /// Runs `executable` under `/usr/bin/time` and reads its peak RSS and wall time.
    static func measure(_ executable: String, _ arguments: [String]) throws -> Cost {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("imago-time-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: report) }
        let output = try Measure.run("/usr/bin/time", ["-f", "%M %e", "-o", report.path, executable] + arguments)
        let fields = try String(contentsOf: report, encoding: .utf8).split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, let kilobytes = Double(fields[fields.count - 2]), let seconds = Double(fields[fields.count - 1]) else {
            throw BenchmarkError("cannot read /usr/bin/time's report for \(arguments)")
        }
        return Cost(megabytes: kilobytes / 1024, seconds: seconds, outcome: output.split(separator: "\n").last.map(String.init) ?? "")
    }
}
