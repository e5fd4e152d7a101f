import ArgumentParser
import Foundation
import Imago

struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Decode an image from a path or URL and write it in the format OUT's extension names."
    )

    @Argument(help: "A file path, or a URL loaded through the pipeline.")
    var input: String

    @Argument(help: ArgumentHelp("Where to write, its extension naming the format: \(ImageFormat.writtenExtensions()). Written atomically."))
    var output: String

    @Option(
        help: ArgumentHelp(
            "Quality 1…100 for \(ImageFormat.table.filter { $0.isWritten && $0.takesQuality }.map(\.format.preferredExtension).joined(separator: ", ")), or auto[:TARGET]: the smallest whose output scores TARGET (75) in SSIMULACRA2.",
            valueName: "Q"))
    var quality: QualityOption = .fixed(85)

    @Option(help: ArgumentHelp("PNG compression level 0…12 (0 stores, 12 is smallest and slowest).", valueName: "L"))
    var compressionLevel = ImageFormat.EncoderSettings().compressionLevel

    @Option(help: ArgumentHelp("AVIF encoder speed 0 (slowest, smallest) … 10 (fastest).", valueName: "S"))
    var speed = 6

    @Flag(help: "Write WebP, JPEG XL or HEIC losslessly.")
    var lossless = false

    @Flag(help: "Write a progressive JPEG.")
    var progressive = false

    @Option(help: ArgumentHelp("Resize to fit, cover, fill or sit within WIDTHxHEIGHT pixels (see --fit).", valueName: "WxH"))
    var resize: String?

    @Option(help: "How --resize fits: contain (whole image inside), cover (cropped to fill), fill (stretched) or center (only shrunk, if larger).")
    var fit: Fit = .contain

    @Option(help: ArgumentHelp("Gaussian blur of this radius in pixels (standard deviation).", valueName: "R"))
    var blur: Double?

    @Option(help: ArgumentHelp("Round the corners to this radius in pixels.", valueName: "R"))
    var round: Double?

    @OptionGroup var kept: KeptOptions

    @OptionGroup var sourceOptions: SourceOptions

    @Flag(help: "Print width, height, format and frames as JSON.")
    var json = false

    /// React Native's `resizeMode` names.
    enum Fit: String, ExpressibleByArgument, CaseIterable {
        case contain, cover, fill, center

        var contentMode: ImageProcessors.Resize.ContentMode {
            switch self {
            case .contain: .aspectFit
            case .cover: .aspectFill
            case .fill: .fill
            case .center: .center
            }
        }
    }

    /// The processors the options ask for, in the order they apply: resize, blur, round.
    func processors() throws -> [any ImageProcessing] {
        var processors: [any ImageProcessing] = []
        if let resize {
            let size = try PixelSize(parsing: resize, option: "--resize")
            processors.append(
                try validated { () throws(ImagoError) in
                    try ImageProcessors.Resize(size: size, contentMode: fit.contentMode, crop: fit == .cover)
                })
        }
        if let blur {
            processors.append(try validated { () throws(ImagoError) in try ImageProcessors.GaussianBlur(radius: blur) })
        }
        if let round {
            processors.append(try validated { () throws(ImagoError) in try ImageProcessors.RoundedCorners(radius: round) })
        }
        return processors
    }

    /// The processor `make` returns; its refusal becomes a usage error that says why.
    private func validated(_ make: () throws(ImagoError) -> any ImageProcessing) throws -> any ImageProcessing {
        do {
            return try make()
        } catch {
            guard error.code.kind == .processingFailed, let reason = error.code.message else { throw error }
            throw ValidationError(reason)
        }
    }

    struct Summary: Encodable {
        var width: Int
        var height: Int
        /// The format read.
        var sourceFormat: String
        /// The format written.
        var format: String
        var frames: Int
        var output: String
        var bytes: Int
        /// The quality written at (formats whose table row takes one).
        var quality: Int?
        /// The output's SSIMULACRA2 score against the image, with `--quality auto`.
        var score: Double?
    }

    mutating func run() async throws {
        let destination = URL(fileURLWithPath: output)
        guard let format = ImageFormat(fileExtension: destination.pathExtension) else {
            throw ValidationError(
                "cannot tell the output format from '\(destination.lastPathComponent)': use .\(ImageFormat.writtenExtensions(separator: ", .", last: " or ."))")
        }
        guard (0...12).contains(compressionLevel), (0...10).contains(speed) else {
            throw ValidationError("--compression-level must be from 0 to 12 and --speed from 0 to 10")
        }
        var settings = ImageFormat.EncoderSettings()
        (settings.compressionLevel, settings.speed, settings.progressive, settings.lossless) = (compressionLevel, speed, progressive, lossless)
        guard format.encoder(settings) != nil else { throw ValidationError("Imago does not encode \(format)") }
        let makeEncoder: (Int) -> any ImageEncoding = { [settings] quality in
            var settings = settings
            settings.quality = quality
            // Checked above: the format has an encoder.
            return format.encoder(settings) ?? PNGEncoder()
        }
        // A lossless encode (WebP, JPEG XL, HEIC) has no quality to choose.
        let quality = lossless && [.webp, .jxl, .heif].contains(format) ? QualityOption.fixed(quality.initial) : quality
        let processors = try processors()
        let source = URL(string: input).flatMap { $0.scheme == nil ? nil : $0 } ?? URL(fileURLWithPath: input)
        var configuration = try ImagePipeline.Configuration.commandLine()
        sourceOptions.apply(to: &configuration)
        let image = try await ImagePipeline(configuration: configuration, loaders: .commandLine(), decoders: .commandLine()).image(
            for: ImageRequest(url: source, options: kept.requestOptions(writing: format), processors: processors))
        let (data, usedQuality, score) = try quality.encode(image, format: format, encoder: makeEncoder)
        try data.write(to: destination, options: .atomic)
        if json {
            try printJSON(
                Summary(
                    width: image.width, height: image.height, sourceFormat: image.metadata.format.rawValue, format: format.rawValue,
                    frames: image.frames.count, output: destination.path, bytes: data.count, quality: usedQuality,
                    score: score))
        } else {
            say(
                "\(source.redactedString): \(image.metadata.format) \(image.width)×\(image.height), \(image.frames.count) frame(s) → \(destination.path) (\(format), \(Int64(data.count).byteCount)\(Self.qualityNote(usedQuality, score)))"
            )
        }
    }

    /// ", quality 72, SSIMULACRA2 75.3" when auto quality chose; empty otherwise.
    static func qualityNote(_ quality: Int?, _ score: Double?) -> String {
        guard let quality, let score else { return "" }
        return ", quality \(quality), SSIMULACRA2 \(String(format: "%.1f", score))"
    }
}
