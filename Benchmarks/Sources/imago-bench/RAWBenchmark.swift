import Foundation

/// A camera RAW file's thumbnail, one process per file on both sides, as a thumbnailing job runs
/// them, on 24-megapixel DNGs PiDNG writes (Tests/Peers/make_dng.py): with a 1620×1080 JPEG preview,
/// `imago thumbnail` against `exiftool -b -ThumbnailImage` then `vipsthumbnail` (the preview
/// extracted and scaled by the tools that do it alone); without one, against LibRaw's own
/// `dcraw_emu -h` then `vipsthumbnail` (a half-size demosaic either way). Alternating, median of rounds.
enum RAWBenchmark {
    static let rounds = 5
    static let box = 512

    static func run() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let cli = environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        guard let python = environment["IMAGO_BENCH_PYTHON"] else { throw BenchmarkError("IMAGO_BENCH_PYTHON must name the bench venv's python") }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-raw-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let wallpaper = "/usr/share/backgrounds/2004default.jpg"
        let preview = work.appendingPathComponent("preview.jpg").path
        try Measure.spawn("/usr/bin/convert", [wallpaper, "-resize", "1620x1080!", "-quality", "90", preview])
        let withPreview = work.appendingPathComponent("24mp-preview.dng").path, bare = work.appendingPathComponent("24mp.dng").path
        try Measure.spawn(python, ["../Tests/Peers/make_dng.py", wallpaper, withPreview, "6000", "4000", "--preview", preview, "1620", "1080"])
        try Measure.spawn(python, ["../Tests/Peers/make_dng.py", wallpaper, bare, "6000", "4000"])
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let peerOut = out.appendingPathComponent("peer.jpg").path
        let cases: [(String, String, String, String)] = [
            (
                "24 MP DNG with a 1620×1080 preview", withPreview, "exiftool -b -ThumbnailImage + vipsthumbnail",
                "exiftool -b -ThumbnailImage '\(withPreview)' > '\(out.path)/p.jpg' && vipsthumbnail '\(out.path)/p.jpg' -s \(box) -o '\(peerOut)[Q=80]'"
            ),
            (
                "24 MP DNG without a preview", bare, "dcraw_emu -h + vipsthumbnail",
                "dcraw_emu -w -h -T -Z '\(out.path)/d.tiff' '\(bare)' && vipsthumbnail '\(out.path)/d.tiff' -s \(box) -o '\(peerOut)[Q=80]'"
            ),
        ]
        var mine: [[Double]] = Array(repeating: [], count: cases.count), theirs: [[Double]] = Array(repeating: [], count: cases.count)
        for round in 0...rounds {
            for (index, (_, file, _, command)) in cases.enumerated() {
                let a = try Measure.elapsed {
                    try Measure.spawn(cli, ["thumbnail", file, "--size", "\(box)x\(box)", "--quality", "80", "--out", out.path, "--json"])
                }
                let b = try Measure.elapsed { try Measure.spawn("/bin/sh", ["-c", command]) }
                if round > 0 {
                    mine[index].append(a)
                    theirs[index].append(b)
                }
            }
        }
        var worst = Double.infinity
        for (index, (name, _, peer, _)) in cases.enumerated() {
            let a = Measure.median(mine[index]) * 1000, b = Measure.median(theirs[index]) * 1000
            worst = min(worst, b / a)
            report(
                "a RAW file's thumbnail to fit \(box)×\(box) JPEG q80, \(name), one process each, median of \(rounds) rounds",
                imago: String(format: "imago thumbnail: %.1f ms", a), peer: String(format: "%@: %.1f ms", peer, b), ratio: b / a,
                target: "≥ 1.0× (no slower than the reference tools)", met: b / a >= 1.0)
        }
        print(String(format: "raw: the slowest file at %.2f× the tools' speed\n", worst))
    }
}
