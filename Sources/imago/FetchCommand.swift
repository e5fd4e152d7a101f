import ArgumentParser
import Foundation
import Imago

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load and decode URLs through one pipeline, all started at once."
    )

    @Argument(help: "URLs to load (http, https, s3, gs, file, data). Repeats coalesce into one transfer.")
    var urls: [String]

    @Option(help: "Write each loaded image into this directory, named after its URL's last path component (made safe: no separators, no leading dots).")
    var out: String?

    @Option(help: "Transfers in flight at most.")
    var concurrency = 6

    @Option(help: "Fail a transfer not finished within this many seconds.")
    var timeout: Double = 120

    @Option(help: "The disk cache's directory. Default: $XDG_CACHE_HOME/imago, else ~/.cache/imago.")
    var cacheDir: String?

    @Flag(help: "Use no disk cache: every image comes from the network.")
    var noDiskCache = false

    @Flag(help: "Print one JSON object: per-URL results and totals.")
    var json = false

    mutating func run() async throws {
        // An input that is neither a URL nor an existing file is that input's error; the others load.
        let parsed = urls.map { text -> Result<URL, InvalidInput> in
            guard let url = URL(string: text), url.scheme != nil else {
                if FileManager.default.fileExists(atPath: text) { return .success(URL(fileURLWithPath: text)) }
                return .failure(InvalidInput(text: text, reason: "not a URL or a file: \(text)"))
            }
            return .success(url)
        }
        if noDiskCache && cacheDir != nil { throw ValidationError("--cache-dir and --no-disk-cache exclude each other") }
        var configuration = try ImagePipeline.Configuration.commandLine()
        guard (1...1000).contains(concurrency) else { throw ValidationError("--concurrency must be from 1 to 1000") }
        configuration.maxConcurrentDownloads = concurrency
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be more than 0 and at most 86400 seconds") }
        configuration.deadline = .milliseconds(Int64(timeout * 1000))
        if !noDiskCache {
            let directory = cacheDir.map { URL(fileURLWithPath: $0) } ?? DiskCache.defaultDirectory
            do {
                configuration.diskCache = try DiskCache(configuration: .init(directory: directory))
            } catch {
                // A cache that cannot be opened (read-only, full disk) costs speed, not the fetch.
                warn("imago: warning: no disk cache: cannot open \(directory.path) (\(error)); loading without it")
            }
        }
        let pipeline = ImagePipeline(configuration: configuration, loaders: .commandLine(), decoders: .commandLine())
        let display = ProgressDisplay(quiet: json && isatty(STDERR_FILENO) != 1)
        let (report, responses) = await BatchLoader(pipeline: pipeline, display: display).load(parsed)
        // Disk writes are made in the background; they must land before the process ends.
        configuration.diskCache?.flush()
        if let out { try save(responses.mapValues(\.data), urls: parsed.map { try? $0.get() }, into: URL(fileURLWithPath: out)) }
        if json {
            try printJSON(report)
        } else {
            let totals = report.totals
            say(
                "\(totals.images) images, \(totals.networkRequests) transfers, \(totals.coalesced) coalesced, \(totals.diskHits) from disk, \(totals.revalidated) revalidated, \(totals.bytes.byteCount), \(totals.errors) errors, \(String(format: "%.2f", totals.seconds)) s"
            )
        }
        if report.totals.errors > 0 { throw ExitCode(1) }
    }

    /// Writes each image atomically; names that collide get a numeric suffix.
    private func save(_ data: [Int: Data], urls: [URL?], into directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var used: Set<String> = []
        for (index, url) in urls.enumerated() {
            guard let url, let bytes = data[index] else { continue }
            let name = OutputFileName.unique(OutputFileName.make(for: url, index: index), in: &used)
            try bytes.write(to: directory.appendingPathComponent(name), options: .atomic)
        }
    }
}
