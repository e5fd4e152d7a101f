import Foundation

/// A video's poster frame, one process per file on both sides, as a thumbnailing job runs them:
/// `imago thumbnail --video-second N` against `ffmpeg -ss N -i file -frames:v 1 -vf scale=…`
/// (FFmpeg's own tool on Debian's libraries, its default threads), on clips made by ffmpeg
/// (H.264 1080p and 4K, HEVC 1080p, VP9 720p, 30 s each). Alternating, median of rounds.
enum VideoBenchmark {
    static let rounds = 5
    static let second = 10
    static let box = 512

    static func run() throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        let ffmpeg = "/usr/bin/ffmpeg"
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-video-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let clips: [(String, String, [String])] = [
            ("h264-1080p.mp4", "1920x1080", ["-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-pix_fmt", "yuv420p"]),
            // CRF 28: ultrafast's 4K file (230 MB) is past the CLI's 200 MB source limit.
            ("h264-2160p.mp4", "3840x2160", ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-g", "60", "-pix_fmt", "yuv420p"]),
            ("hevc-1080p.mkv", "1920x1080", ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none", "-g", "60"]),
            ("vp9-720p.webm", "1280x720", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "60", "-b:v", "2M"]),
        ]
        var files: [String] = []
        for (name, size, options) in clips {
            let path = work.appendingPathComponent(name).path
            try Measure.spawn(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30:duration=30"] + options + [path])
            files.append(path)
        }
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var imago: [[Double]] = Array(repeating: [], count: files.count), peer: [[Double]] = Array(repeating: [], count: files.count)
        for round in 0...rounds {
            for (index, file) in files.enumerated() {
                let a = try Measure.elapsed {
                    try Measure.spawn(
                        cli, ["thumbnail", file, "--size", "\(box)x\(box)", "--quality", "80", "--video-second", "\(second)", "--out", out.path, "--json"])
                }
                let b = try Measure.elapsed {
                    try Measure.spawn(
                        ffmpeg,
                        [
                            "-v", "error", "-y", "-ss", "\(second)", "-i", file, "-frames:v", "1", "-vf",
                            "scale=\(box):\(box):force_original_aspect_ratio=decrease", "-q:v", "4", out.appendingPathComponent("ffmpeg.jpg").path,
                        ])
                }
                if round > 0 {
                    imago[index].append(a)
                    peer[index].append(b)
                }
            }
        }
        var worst = Double.infinity
        for (index, (name, _, _)) in clips.enumerated() {
            let mine = Measure.median(imago[index]) * 1000, theirs = Measure.median(peer[index]) * 1000
            worst = min(worst, theirs / mine)
            report(
                "a video's frame at second \(second) to fit \(box)×\(box) JPEG, \(name), 30 s, one process each, median of \(rounds) rounds",
                imago: String(format: "imago thumbnail: %.1f ms", mine), peer: String(format: "ffmpeg -ss %d -frames:v 1 -vf scale: %.1f ms", second, theirs),
                ratio: theirs / mine, target: "≥ 1.0× (no slower than FFmpeg's tool)", met: theirs / mine >= 1.0)
        }
        print(String(format: "video: the slowest file at %.2f× ffmpeg's speed\n", worst))
    }
}
