import ArgumentParser
import Foundation
import Imago

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Tell what images are: format, size, frames, orientation, colour, bit depth, alpha, metadata, and the decode a thumbnail would use."
    )

    @Argument(help: "Image files, folders or URLs.")
    var inputs: [String]

    @Option(name: .customLong("for"), help: ArgumentHelp("The thumbnail box whose reduced decode is reported (default 256x256).", valueName: "WxH"))
    var box = "256x256"

    @Flag(help: "Print one JSON object per input in an array.")
    var json = false

    @Flag(help: "Find faces (an OpenCV frontal-face cascade, as thumbor's face detector) and list their boxes in the upright image's pixels.")
    var faces = false

    @Option(
        name: .customLong("face-cascade"),
        help: ArgumentHelp("The OpenCV cascade --faces uses (default Debian's opencv-data haarcascade_frontalface_alt.xml).", valueName: "FILE"))
    var faceCascade = FaceDetector.systemCascadePath

    @OptionGroup var sourceOptions: SourceOptions

    struct Info: Encodable {
        struct Colour: Encodable {
            /// rgb, gray, cmyk or other; nil when the file states no colour (sRGB assumed).
            var kind: String?
            var profile: String?
            var profileBytes: Int?
        }
        struct Metadata: Encodable {
            var exif: Bool
            var xmp: Bool
            var gps: Bool
        }
        struct Decode: Encodable {
            var box: String
            var width: Int
            var height: Int
            /// The decoded size over the stored size: "1" for full size, eighths for JPEG ("7/8",
            /// "1/4"), else a decimal.
            var scale: String
        }
        var input: String
        var status: String
        var error: String?
        var format: String?
        var width: Int?
        var height: Int?
        var frames: Int?
        var durationsMilliseconds: [Int]?
        var loopCount: Int?
        var orientation: Int?
        var bitsPerSample: Int?
        var alpha: Bool?
        var colour: Colour?
        var metadata: Metadata?
        var decode: Decode?
        /// The HDR gain map the file carries, if any.
        var gainMap: StoredGainMap.Facts?
        var thumbhash: String?
        var blurhash: String?
        /// With `--faces`: the faces found, largest first, in the upright full-size image's pixels.
        var faces: [FaceDetector.Face]?
        /// A video source's streams, duration and rate; its frame is the one `--video-second` names.
        var video: VideoInfo?
        /// A camera RAW source's camera, shot and sensor, and which of its pictures was decoded.
        var raw: RAWInfo?
        /// A PDF source's page count and the pages rendered (`--page`, `--pages`).
        var pdf: PDFInfo?
    }

    mutating func run() async throws {
        let target = try PixelSize(parsing: box, option: "--for")
        let items = try InputList.expand(inputs)
        var configuration = try ImagePipeline.Configuration.commandLine()
        sourceOptions.apply(to: &configuration)
        let pipeline = ImagePipeline(configuration: configuration, loaders: .commandLine(), decoders: .commandLine())
        var detector: FaceDetector?
        if faces {
            do {
                detector = try FaceDetector(contentsOf: URL(fileURLWithPath: faceCascade))
            } catch {
                throw ValidationError("--face-cascade \(faceCascade): \(error.description) (Debian's opencv-data installs the cascades)")
            }
        }
        var infos: [Info] = []
        for item in items {
            switch item {
            case .failure(let invalid): infos.append(Info(input: invalid.text, status: "error", error: invalid.reason))
            case .success(let url): infos.append(await Self.info(url, box: target, pipeline: pipeline, faces: detector))
            }
        }
        if json {
            try printJSON(infos)
        } else {
            for info in infos { say(Self.describe(info)) }
        }
        if infos.contains(where: { $0.status == "error" }) { throw ExitCode(1) }
    }

    /// The facts of the image at `url`, from one decode reduced for `box`, its colour and
    /// metadata kept so they can be told; with `faces`, a second decode reduced for the detector
    /// finds the faces.
    static func info(_ url: URL, box: PixelSize, pipeline: ImagePipeline, faces detector: FaceDetector? = nil) async -> Info {
        let input = url.isFileURL ? url.path : url.redactedString
        do {
            let data = try await pipeline.data(for: ImageRequest(url: url)).data
            var options = DecodingOptions()
            options.videoFrame = pipeline.configuration.decodingOptions.videoFrame
            options.pages = pipeline.configuration.decodingOptions.pages
            options.pdfTransparentBackground = pipeline.configuration.decodingOptions.pdfTransparentBackground
            options.colorProfileHandling = .keep
            options.metadataHandling = .all
            options.targetSize = box
            let image = try DecoderRegistry.commandLine().decode(data, options: options)
            let metadata = image.metadata
            let profile = metadata.sourceColorProfile
            // The reduced decode's size before orientation, over the stored size.
            let turned = metadata.orientationApplied.swapsDimensions
            let decodedWidth = turned ? image.height : image.width
            let scale = Self.fraction(decodedWidth, of: metadata.originalWidth)
            // The placeholders in sRGB, as any decode that does not keep the profile gives them.
            let placeholders = try PlaceholderCommand.placeholders(of: image.convertedToSRGB(), kind: .both, components: (4, 3))
            var faces: [FaceDetector.Face]?
            if let detector {
                var faceOptions = DecodingOptions()
                faceOptions.videoFrame = options.videoFrame
                faceOptions.targetSize = PixelSize(width: detector.maxSide, height: detector.maxSide)
                let picture = try DecoderRegistry.commandLine().decode(data, options: faceOptions)
                faces = Self.upright(detector.faces(in: picture), from: picture, metadata: metadata)
            }
            return Info(
                input: input, status: "ok", format: metadata.format.rawValue, width: metadata.originalWidth, height: metadata.originalHeight,
                frames: image.frames.count,
                durationsMilliseconds: image.isAnimated ? image.frames.map { Int($0.duration / .milliseconds(1)) } : nil,
                loopCount: image.isAnimated ? image.loopCount : nil, orientation: metadata.orientationApplied.rawValue,
                bitsPerSample: metadata.bitsPerSample, alpha: metadata.hasAlpha,
                colour: Info.Colour(kind: profile?.kind.rawValue, profile: profile?.description, profileBytes: profile?.data.count),
                metadata: Info.Metadata(exif: metadata.exif != nil, xmp: metadata.xmp != nil, gps: metadata.exifHasGPS),
                decode: Info.Decode(box: "\(box.width)x\(box.height)", width: image.width, height: image.height, scale: scale),
                gainMap: metadata.sourceGainMap?.facts,
                thumbhash: placeholders.thumbhash, blurhash: placeholders.blurhash, faces: faces, video: metadata.video, raw: metadata.raw, pdf: metadata.pdf)
        } catch {
            return Info(input: input, status: "error", error: "\(error)")
        }
    }

    /// `found` in `picture`, a reduced upright decode, as boxes in the upright full-size image.
    static func upright(_ found: [FaceDetector.Face], from picture: Image, metadata: ImageMetadata) -> [FaceDetector.Face] {
        let turned = metadata.orientationApplied.swapsDimensions
        let full = turned ? (metadata.originalHeight, metadata.originalWidth) : (metadata.originalWidth, metadata.originalHeight)
        let scaleX = Double(full.0) / Double(max(picture.width, 1)), scaleY = Double(full.1) / Double(max(picture.height, 1))
        return found.map { $0.scaled(by: (scaleX, scaleY), within: full) }
    }

    /// `part / whole` as eighths in lowest terms when it is one (JPEG's DCT scales), else to 3 places.
    static func fraction(_ part: Int, of whole: Int) -> String {
        let ratio = Double(part) / Double(max(whole, 1))
        let eighths = (ratio * 8).rounded()
        guard eighths >= 1, abs(ratio * 8 - eighths) < 0.05 else { return String(format: "%.3f", ratio) }
        var (numerator, denominator) = (Int(eighths), 8)
        while numerator % 2 == 0, denominator > 1 {
            numerator /= 2
            denominator /= 2
        }
        return denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
    }

    static func describe(_ info: Info) -> String {
        guard info.status == "ok", let format = info.format, let width = info.width, let height = info.height else {
            return "\(info.input): error: \(info.error ?? "")"
        }
        var lines = ["\(info.input): \(format.uppercased()) \(width)×\(height)"]
        var facts: [String] = []
        if let frames = info.frames {
            var text = frames == 1 ? "1 frame" : "\(frames) frames"
            if let durations = info.durationsMilliseconds { text += " (" + durations.map { "\($0) ms" }.joined(separator: ", ") + ")" }
            if let loops = info.loopCount { text += loops == 0 ? ", loops forever" : ", plays \(loops) times" }
            facts.append(text)
        }
        if let bits = info.bitsPerSample { facts.append("\(bits)-bit") }
        facts.append(info.alpha == true ? "alpha" : "no alpha")
        if let orientation = info.orientation, orientation != 1 { facts.append("EXIF orientation \(orientation)") }
        lines[0] += ", " + facts.joined(separator: ", ")
        if let colour = info.colour, let kind = colour.kind {
            let name = colour.profile.map { $0.isEmpty ? "an unnamed profile" : "\"\($0)\"" } ?? "a profile"
            lines.append("  colour: \(kind.uppercased()), \(name) (\(colour.profileBytes ?? 0) bytes); Imago converts it to sRGB")
        } else {
            lines.append("  colour: no profile (sRGB)")
        }
        if let metadata = info.metadata {
            func yes(_ flag: Bool) -> String { flag ? "yes" : "no" }
            lines.append("  metadata: EXIF \(yes(metadata.exif)), XMP \(yes(metadata.xmp)), GPS \(yes(metadata.gps))")
        }
        if let decode = info.decode {
            let how = decode.scale == "1" ? "at full size" : "at \(decode.scale)"
            lines.append("  decode for a \(decode.box.replacingOccurrences(of: "x", with: "×")) thumbnail: \(how), \(decode.width)×\(decode.height)")
        }
        if let map = info.gainMap {
            let kind = map.channels == 1 ? "grey" : "colour"
            let source = ["iso21496": "ISO 21496-1", "hdrgm": "hdrgm XMP", "apple": "Apple HDRGainMap XMP"][map.metadata] ?? map.metadata
            lines.append(
                "  HDR gain map: \(map.width)×\(map.height) \(kind) \(map.format.uppercased()) (\(source)), boosts up to \(String(format: "%.2f", map.maxBoost))×, "
                    + "full on a display with \(String(format: "%.2f", map.headroom))× headroom (\(String(format: "%.2f", map.hdrCapacityMax)) stops)")
        }
        if let video = info.video { lines.append("  video: \(video.summary)") }
        if let raw = info.raw { lines.append("  camera: \(raw.summary)") }
        if let pdf = info.pdf { lines.append("  document: \(pdf.summary)") }
        if let thumbhash = info.thumbhash, let blurhash = info.blurhash { lines.append("  placeholders: thumbhash \(thumbhash), blurhash \(blurhash)") }
        if let faces = info.faces {
            let boxes = faces.map { "\($0.width)×\($0.height) at \($0.x),\($0.y)" }
            lines.append(faces.isEmpty ? "  faces: none found" : "  faces: " + boxes.joined(separator: "; "))
        }
        return lines.joined(separator: "\n")
    }
}
