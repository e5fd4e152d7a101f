import ArgumentParser
import Foundation
import Imago

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start a local origin (Hummingbird) with sample images, then load and decode them through the pipeline."
    )

    static let defaultImageDirectories = ["/usr/share/backgrounds", "../shared/corpus"]

    @Option(
        name: .customLong("images"),
        help: "A directory of sample images (repeatable). Default: \(defaultImageDirectories.joined(separator: ", ")), those that exist.")
    var imageDirectories: [String] = []

    @Option(help: "Bytes per second each transfer is throttled to at the origin, so progress is visible; 0 for none.")
    var rate = 8_000_000

    @Flag(help: "Print one JSON object per phase instead of tables.")
    var json = false

    @Option(help: "Where to write the contact sheet of every image loaded.")
    var sheetPath = "imago-demo.png"

    mutating func run() async throws {
        let animatedDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-demo-animated-\(getpid())")
        defer { try? FileManager.default.removeItem(at: animatedDirectory) }
        // The default samples get animated GIF and WebP made from the corpus; given directories are served as they are.
        let files = try sampleFiles() + (imageDirectories.isEmpty ? AnimatedSamples.make(in: animatedDirectory) : [])
        guard !files.isEmpty else {
            throw ValidationError("no sample images found; run `make deps` (installs ukui-wallpapers) or pass --images DIR")
        }
        // The origin serves a folder of links to the samples: every fourth under /revalidate/
        // (no-cache, so each later load is a 304), the others under /fresh/ (max-age=3600).
        let servedDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-demo-served-\(getpid())")
        defer { try? FileManager.default.removeItem(at: servedDirectory) }
        var urls: [URL] = []
        var paths: [String] = []
        for (index, file) in files.enumerated() {
            let folder = index % 4 == 3 ? "revalidate" : "fresh"
            let name = "\(index)-\(file.lastPathComponent)"
            let link = servedDirectory.appendingPathComponent(folder).appendingPathComponent(name)
            try FileManager.default.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file.standardizedFileURL.resolvingSymlinksInPath())
            paths.append("/\(folder)/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)")
        }
        let origin = try await DemoOrigin.start(root: servedDirectory, bytesPerSecond: rate > 0 ? rate : nil)
        for path in paths {
            guard let url = URL(string: origin.baseURL.absoluteString + path) else { throw ValidationError("cannot make a URL for \(path)") }
            urls.append(url)
        }
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-demo-cache-\(getpid())")
        try? FileManager.default.removeItem(at: cacheDirectory)
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }
        func diskPipeline() throws -> ImagePipeline {
            var configuration = ImagePipeline.Configuration()
            configuration.diskCache = try DiskCache(configuration: .init(directory: cacheDirectory))
            return ImagePipeline(configuration: configuration)
        }
        if !json {
            say(
                "Imago demo: a Hummingbird origin on \(origin.baseURL.absoluteString) serving \(files.count) images from \(Set(files.map { $0.deletingLastPathComponent().path }).sorted().joined(separator: ", "))"
            )
            say("disk cache: \(cacheDirectory.path) (removed at the end)\n")
        }
        let display = ProgressDisplay(quiet: json)
        let first = try diskPipeline()
        let loader = BatchLoader(pipeline: first, display: display)
        var phases: [(String, BatchReport)] = []

        if !json { say("1. cold: every image from the network, decoded") }
        let (cold, coldResponses) = await loader.load(urls)
        phases.append(("cold", cold))
        // Each image captioned with its name, pixel size, where it came from and its milliseconds.
        let entries = coldResponses.sorted { $0.key < $1.key }.map { index, response -> ContactSheet.Entry in
            let image = response.image
            let milliseconds = Int(((cold.images[index].seconds ?? 0) * 1000).rounded())
            return ContactSheet.Entry(
                image: image,
                caption: [urls[index].lastPathComponent, "\(image.width)x\(image.height) \(response.source.rawValue) \(milliseconds) ms"])
        }
        let sheet = try ContactSheet().make(entries)
        let sheetFile = URL(fileURLWithPath: sheetPath)
        try PNGEncoder().encode(sheet).write(to: sheetFile, options: .atomic)

        if !json { say("2. again: every image from the memory cache") }
        let (memory, _) = await loader.load(urls)
        phases.append(("memory", memory))
        first.configuration.diskCache?.flush()

        if !json { say("3. a new pipeline on the same cache directory: fresh images from disk, every fourth revalidated (304)") }
        let (disk, _) = await BatchLoader(pipeline: try diskPipeline(), display: display).load(urls)
        phases.append(("disk", disk))

        let largest = zip(urls, cold.images).max { $0.1.bytes < $1.1.bytes }!.0
        if !json {
            say(
                "4. a new pipeline without caches, 50 concurrent requests for one image (\(largest.lastPathComponent)), made while the pipeline is suspended, then resumed"
            )
        }
        // Suspended, the pipeline starts no download, so all 50 handles are made before the one
        // transfer starts, however fast this machine is against a loopback origin.
        let coalescing = ImagePipeline()
        coalescing.suspend()
        let (coalesced, _) = await BatchLoader(pipeline: coalescing, display: display)
            .load(Array(repeating: largest, count: 50), whenAllStarted: { coalescing.resume() })
        phases.append(("coalesced", coalesced))

        try await origin.shutdown()
        if json {
            try printJSON(phases.map { PhaseSummary(phase: $0.0, totals: $0.1.totals) })
        } else {
            printTable(phases)
            for (name, report) in phases {
                for image in report.images where image.status == "error" { say("\(name): \(image.error ?? "")") }
            }
        }
        if !json { say("\ncontact sheet of the \(cold.totals.images - cold.totals.errors) images: \(sheetFile.path) (\(sheet.width)×\(sheet.height))") }
        if phases.contains(where: { $0.1.totals.errors > 0 }) { throw ExitCode(1) }
    }

    private func sampleFiles() throws -> [URL] {
        let directories =
            imageDirectories.isEmpty
            ? Self.defaultImageDirectories.filter { FileManager.default.fileExists(atPath: $0) }
            : imageDirectories
        var files: [URL] = []
        for directory in directories {
            guard let found = InputList.images(inFolder: directory) else { throw ValidationError("cannot read \(directory)") }
            // The corpus's deliberately broken files belong to the tests, not the demo.
            files += found.filter { $0.deletingLastPathComponent().lastPathComponent != "invalid" }
        }
        return files.sorted { $0.path < $1.path }
    }

    private func printTable(_ phases: [(String, BatchReport)]) {
        let header = ["phase", "images", "transfers", "coalesced", "memory hits", "disk hits", "revalidated", "bytes", "errors", "seconds", "images/s"]
        let rows = phases.map { name, report in
            let totals = report.totals
            return [
                name, "\(totals.images)", "\(totals.networkRequests)", "\(totals.coalesced)", "\(totals.memoryHits)",
                "\(totals.diskHits)", "\(totals.revalidated)", totals.bytes.byteCount,
                "\(totals.errors)", String(format: "%.2f", totals.seconds), String(format: "%.0f", totals.imagesPerSecond),
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max()! }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }
        say()
        say(line(header))
        say(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        for row in rows { say(line(row)) }
    }
}

/// One phase of the demo in `--json` output: its name and the same fields as `fetch --json` totals.
struct PhaseSummary: Encodable {
    var phase: String
    var totals: BatchReport.Totals

    func encode(to encoder: any Encoder) throws {
        try totals.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(phase, forKey: .phase)
    }

    enum CodingKeys: String, CodingKey { case phase }
}
