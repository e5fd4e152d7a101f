import ArgumentParser
import Foundation
import Imago

struct PlaceholderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "placeholder",
        abstract: "Print the ThumbHash and BlurHash of images, from a decode at a reduced scale (≤ 100 px), on every core."
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case thumbhash, blurhash, both
    }

    @Argument(help: "Image files, folders (searched recursively) or URLs.")
    var inputs: [String]

    @Option(help: "Which hash: thumbhash, blurhash or both.")
    var kind: Kind = .both

    @Option(help: ArgumentHelp("BlurHash terms across and down, 1…9 each.", valueName: "XxY"))
    var components = "4x3"

    @Flag(
        help:
            "Compute the BlurHash from the full-size decode, as the reference encoders do when given the file (slower; the ThumbHash always comes from ≤ 100 px)."
    )
    var fullSize = false

    @Flag(help: "Hash the stored colour values, as encoders that ignore colour profiles do (default: converted to sRGB first, as browsers show them).")
    var keepColorProfile = false

    @Flag(help: "Print one JSON object per input in an array.")
    var json = false

    struct Hashes: Encodable {
        var input: String
        var status: String
        var error: String?
        var width: Int?
        var height: Int?
        var thumbhash: String?
        var blurhash: String?
    }

    mutating func run() async throws {
        let terms = try PixelSize(parsing: components, option: "--components")
        guard (1...9).contains(terms.width), (1...9).contains(terms.height) else {
            throw ValidationError("--components must be 1…9 terms each way, not '\(components)'")
        }
        let items = try InputList.expand(inputs)
        var configuration = try ImagePipeline.Configuration.commandLine()
        configuration.memoryCache = nil  // each image is hashed once
        let pipeline = ImagePipeline(configuration: configuration, loaders: .commandLine(), decoders: .commandLine())
        let (kind, fullSize) = (kind, fullSize)
        let options: ImageRequest.Options = keepColorProfile ? [.keepsColorProfile] : []
        let all = await windowed(items.count) { index in
            await Self.hash(items[index], kind: kind, components: (terms.width, terms.height), fullSize: fullSize, options: options, pipeline: pipeline)
        }
        if json {
            try printJSON(all)
        } else {
            for result in all {
                guard result.status == "ok" else {
                    say("\(result.input): error: \(result.error ?? "")")
                    continue
                }
                say(
                    ([result.input] + [result.thumbhash.map { "thumbhash:\($0)" }, result.blurhash.map { "blurhash:\($0)" }].compactMap { $0 }).joined(
                        separator: "  "))
            }
        }
        if all.contains(where: { $0.status == "error" }) { throw ExitCode(1) }
    }

    /// The hashes of one input, from the pipeline's thumbnail decode for a 100-pixel box
    /// (orientation applied, sRGB), or from the full decode for `fullSize`.
    static func hash(
        _ item: Result<URL, InvalidInput>, kind: Kind, components: (Int, Int), fullSize: Bool, options: ImageRequest.Options, pipeline: ImagePipeline
    ) async -> Hashes {
        let url: URL
        switch item {
        case .failure(let invalid): return Hashes(input: invalid.text, status: "error", error: invalid.reason)
        case .success(let loaded): url = loaded
        }
        let input = url.isFileURL ? url.path : url.redactedString
        do {
            let thumbnail = ImageRequest.Thumbnail(size: PixelSize(width: ThumbHash.maxSide, height: ThumbHash.maxSide), contentMode: .aspectFit)
            let image = try await pipeline.image(for: ImageRequest(url: url, options: options, thumbnail: fullSize ? nil : thumbnail))
            var placeholders = try Self.placeholders(of: image, kind: kind, components: components)
            if fullSize, kind != .thumbhash {
                let still = Image(width: image.width, height: image.height, frames: [image.frames[0]], metadata: image.metadata)
                placeholders.blurhash = try BlurHash(pixels: still.pixels, width: still.width, height: still.height, components: components).string
            }
            return Hashes(
                input: input, status: "ok", width: image.metadata.originalWidth, height: image.metadata.originalHeight, thumbhash: placeholders.thumbhash,
                blurhash: placeholders.blurhash)
        } catch {
            return Hashes(input: input, status: "error", error: "\(error)")
        }
    }

    /// The hashes `kind` names of an image (its first frame).
    static func placeholders(of image: Image, kind: Kind, components: (Int, Int)) throws -> (thumbhash: String?, blurhash: String?) {
        let thumbhash = kind == .blurhash ? nil : try ThumbHash(image: image).base64
        let blurhash = kind == .thumbhash ? nil : try BlurHash(image: image, components: components).string
        return (thumbhash, blurhash)
    }
}
