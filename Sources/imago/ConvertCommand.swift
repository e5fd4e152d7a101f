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

    @Argument(help: "Where to write: .jpg/.jpeg, .png or .webp. Written atomically.")
    var output: String

    @Option(help: "Quality 1…100 for JPEG and lossy WebP.")
    var quality = 85

    @Flag(help: "Write WebP losslessly.")
    var lossless = false

    @Flag(help: "Write a progressive JPEG.")
    var progressive = false

    @Flag(help: "Print width, height, format and frames as JSON.")
    var json = false

    struct Summary: Encodable {
        var width: Int
        var height: Int
        var format: String
        var frames: Int
        var output: String
        var bytes: Int
    }

    mutating func run() async throws {
        let destination = URL(fileURLWithPath: output)
        guard let format = ImageFormat(fileExtension: destination.pathExtension) else {
            throw ValidationError("cannot tell the output format from '\(destination.lastPathComponent)': use .jpg, .png or .webp")
        }
        let encoder: any ImageEncoding = switch format {
        case .jpeg: JPEGEncoder(quality: quality, progressive: progressive)
        case .png: PNGEncoder()
        case .webp: WebPEncoder(quality: Float(quality), lossless: lossless)
        default: throw ValidationError("Imago does not encode \(format)")
        }
        let source = URL(string: input).flatMap { $0.scheme == nil ? nil : $0 } ?? URL(fileURLWithPath: input)
        let image = try await ImagePipeline().image(for: source)
        let data = try encoder.encode(image)
        try data.write(to: destination, options: .atomic)
        if json {
            try printJSON(Summary(width: image.width, height: image.height, format: image.metadata.format.rawValue,
                                  frames: image.frames.count, output: destination.path, bytes: data.count))
        } else {
            say("\(source.absoluteString): \(image.metadata.format) \(image.width)×\(image.height), \(image.frames.count) frame(s) → \(destination.path) (\(format), \(Int64(data.count).byteCount))")
        }
    }
}
