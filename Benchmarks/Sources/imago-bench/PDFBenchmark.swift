import Foundation

/// A PDF page's thumbnail, one process per file on both sides, as a thumbnailing job runs them:
/// `imago thumbnail` (which runs Poppler's `pdfinfo` and `pdftoppm` as child processes) against
/// `pdftoppm -scale-to` writing the JPEG itself, on two A4 pages Ghostscript writes: a page of
/// text, and a scanned page (a 2480×3508 JPEG, A4 at 300 dpi). Alternating, median of rounds.
enum PDFBenchmark {
    static let rounds = 9
    static let box = 512

    static func run() throws {
        guard let cli = ProcessInfo.processInfo.environment["IMAGO_CLI"], FileManager.default.isExecutableFile(atPath: cli) else {
            throw BenchmarkError("IMAGO_CLI must name the release imago binary (make bench builds it)")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-pdf-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let text = work.appendingPathComponent("text.pdf").path, scan = work.appendingPathComponent("scan.pdf").path
        let program = work.appendingPathComponent("text.ps")
        try Data(
            """
            /Times-Roman findfont 10 scalefont setfont /y 800 def
            1 1 75 { pop 50 y moveto (The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. 0123456789) show /y y 10 sub def } for
            0.8 0.1 0.1 setrgbcolor 50 50 200 20 rectfill showpage
            """.utf8
        ).write(to: program)
        try Measure.spawn("/usr/bin/gs", ["-q", "-dNOPAUSE", "-dBATCH", "-sDEVICE=pdfwrite", "-sPAPERSIZE=a4", "-o", text, program.path])
        let photo = work.appendingPathComponent("scan.jpg").path
        try Measure.spawn("/usr/bin/convert", ["/usr/share/backgrounds/2004default.jpg", "-resize", "2480x3508!", "-quality", "85", photo])
        let viewJPEG = try FileManager.default.contentsOfDirectory(atPath: "/usr/share/ghostscript").lazy
            .map { "/usr/share/ghostscript/\($0)/lib/viewjpeg.ps" }.first { FileManager.default.fileExists(atPath: $0) }
        guard let viewJPEG else { throw BenchmarkError("Ghostscript's viewjpeg.ps is missing") }
        try Measure.spawn(
            "/usr/bin/gs",
            [
                "-q", "-dNOSAFER", "-dNOPAUSE", "-dBATCH", "-sDEVICE=pdfwrite", "-o", scan, "-c", "<< /PageSize [595 842] >> setpagedevice", "-f", viewJPEG,
                "-c", "0.2399 0.2399 scale (\(photo)) viewJPEG showpage",
            ])
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let cases = [("an A4 page of text", text), ("an A4 scanned page (a 2480×3508 JPEG)", scan)]
        var mine: [[Double]] = Array(repeating: [], count: cases.count), theirs: [[Double]] = Array(repeating: [], count: cases.count)
        for round in 0...rounds {
            for (index, (_, file)) in cases.enumerated() {
                let a = try Measure.elapsed {
                    try Measure.spawn(cli, ["thumbnail", file, "--size", "\(box)x\(box)", "--quality", "80", "--out", out.path, "--json"])
                }
                let b = try Measure.elapsed {
                    try Measure.spawn(
                        "/usr/bin/pdftoppm",
                        ["-f", "1", "-l", "1", "-scale-to", "\(box)", "-jpeg", "-jpegopt", "quality=80", file, out.appendingPathComponent("peer").path])
                }
                if round > 0 {
                    mine[index].append(a)
                    theirs[index].append(b)
                }
            }
        }
        var worst = Double.infinity
        for (index, (name, _)) in cases.enumerated() {
            let a = Measure.median(mine[index]) * 1000, b = Measure.median(theirs[index]) * 1000
            worst = min(worst, b / a)
            report(
                "a PDF page's thumbnail to fit \(box)×\(box) JPEG q80, \(name), one process each, median of \(rounds) rounds",
                imago: String(format: "imago thumbnail: %.1f ms", a), peer: String(format: "pdftoppm -scale-to -jpeg: %.1f ms", b), ratio: b / a,
                target: "≥ 1.0× (no slower than the reference tool)", met: b / a >= 1.0)
        }
        print(String(format: "pdf: the slowest page at %.2f× pdftoppm's speed\n", worst))
    }
}
