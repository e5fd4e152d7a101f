import ArgumentParser
import Foundation
import Imago

struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Make thumbnails of files, folders and URLs, decoding on every core at a reduced scale where the format allows."
    )

    @Argument(help: "Image files, folders (searched recursively for the extensions of every format Imago reads) or URLs.")
    var inputs: [String]

    @Option(help: ArgumentHelp("The box to fit or fill, in pixels.", valueName: "WxH"))
    var size: String

    @Option(help: "How the image meets the box: contain (whole image inside), cover (cropped to fill), fill (stretched) or center (only shrunk).")
    var fit: ConvertCommand.Fit = .contain

    @Option(help: ArgumentHelp("The format written: \(ImageFormat.writtenExtensions())."))
    var format = "jpg"

    @Option(
        help: ArgumentHelp(
            "Quality 1…100 for JPEG, WebP and AVIF, or auto[:TARGET]: per thumbnail, the smallest whose output scores TARGET (75) in SSIMULACRA2.",
            valueName: "Q"))
    var quality: QualityOption = .fixed(85)

    @Option(help: "The directory the thumbnails go to, named after their inputs.")
    var out: String

    @OptionGroup var kept: KeptOptions

    @OptionGroup var sourceOptions: SourceOptions

    @Flag(help: "Print one JSON object: per-input results and totals.")
    var json = false

    struct Report: Encodable {
        struct Result: Encodable {
            var input: String
            var status: String
            var error: String?
            var output: String?
            var width: Int?
            var height: Int?
            var bytes: Int?
            var quality: Int?
            var score: Double?
            var seconds: Double?
        }
        struct Totals: Encodable {
            var images: Int
            var errors: Int
            var seconds: Double
            var imagesPerSecond: Double
        }
        var images: [Result]
        var totals: Totals
    }

    mutating func run() async throws {
        let box = try PixelSize(parsing: size, option: "--size")
        guard let outputFormat = ImageFormat(fileExtension: format), outputFormat.encoder() != nil else {
            throw ValidationError("--format must be \(ImageFormat.writtenExtensions()), not '\(format)'")
        }
        let encoding = Encoding(format: outputFormat, quality: quality)
        let fileExtension = outputFormat.preferredExtension
        let directory = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let items = try InputList.expand(inputs)

        var configuration = try ImagePipeline.Configuration.commandLine()
        // Each thumbnail is made once and written: nothing to keep in memory.
        configuration.memoryCache = nil
        sourceOptions.apply(to: &configuration)
        let pipeline = ImagePipeline(configuration: configuration, loaders: .commandLine(), decoders: .commandLine())
        let thumbnail = ImageRequest.Thumbnail(size: box, contentMode: fit.contentMode)
        let requestOptions = kept.requestOptions(writing: outputFormat)
        let display = ProgressDisplay(quiet: json && isatty(STDERR_FILENO) != 1)
        display.begin(total: items.count)
        let start = ContinuousClock.now
        // Output names are chosen up front, so two inputs never race for one name.
        var used: Set<String> = []
        let names = items.enumerated().map { index, item -> String in
            let base = (try? item.get()).map { OutputFileName.make(for: $0, index: index) } ?? "image-\(index)"
            let stem = (base as NSString).deletingPathExtension
            return OutputFileName.unique("\(stem.isEmpty ? "image-\(index)" : stem).\(fileExtension)", in: &used)
        }
        let images = await windowed(items.count) { index in
            await Self.make(
                items[index], thumbnail: thumbnail, options: requestOptions, pipeline: pipeline, encoding: encoding,
                to: directory.appendingPathComponent(names[index]), display: display)
        }
        display.end()
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let errors = images.filter { $0.status == "error" }.count
        let totals = Report.Totals(images: images.count, errors: errors, seconds: seconds, imagesPerSecond: seconds > 0 ? Double(images.count) / seconds : 0)
        if json {
            try printJSON(Report(images: images, totals: totals))
        } else {
            for image in images where image.status == "error" { warn("\(image.input): \(image.error ?? "")") }
            say(
                "\(images.count - errors) thumbnails in \(directory.path), \(errors) errors, \(String(format: "%.2f", seconds)) s (\(String(format: "%.1f", totals.imagesPerSecond)) images/s)"
            )
        }
        if errors > 0 { throw ExitCode(1) }
    }

    /// Loads `item` as `thumbnail`, encodes it and writes it atomically to `output`.
    private static func make(
        _ item: Result<URL, InvalidInput>, thumbnail: ImageRequest.Thumbnail, options: ImageRequest.Options, pipeline: ImagePipeline,
        encoding: Encoding, to output: URL, display: ProgressDisplay
    ) async -> Report.Result {
        let url: URL
        switch item {
        case .failure(let invalid): return Report.Result(input: invalid.text, status: "error", error: invalid.reason)
        case .success(let loaded): url = loaded
        }
        let start = ContinuousClock.now
        let task = pipeline.imageTask(
            with: ImageRequest(url: url, options: options, thumbnail: thumbnail),
            progress: { received, expected, _ in display.progress(url, received: received, expected: expected) }
        )
        let input = url.isFileURL ? url.path : url.redactedString
        do {
            let response = try await task.response
            display.finished(url, result: .success(response))
            let image = response.image
            let (data, quality, score) = try encoding.quality.encode(image, format: encoding.format) {
                encoding.format.encoder(quality: $0) ?? PNGEncoder()
            }
            try data.write(to: output, options: .atomic)
            return Report.Result(
                input: input, status: "ok", output: output.path, width: image.width, height: image.height,
                bytes: data.count, quality: quality, score: score, seconds: (ContinuousClock.now - start) / .seconds(1))
        } catch {
            let imagoError = error as? ImagoError ?? ImagoError(.loaderFailed, url: url, underlying: error)
            display.finished(url, result: .failure(imagoError))
            return Report.Result(input: input, status: "error", error: "\(error)", seconds: (ContinuousClock.now - start) / .seconds(1))
        }
    }

    /// The format and quality every thumbnail is written with.
    struct Encoding: Sendable {
        let format: ImageFormat
        let quality: QualityOption
    }
}
