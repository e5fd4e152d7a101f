import Crypto
import Foundation
import Imago

extension ImageService {
    /// The plan for an `/info/%signature/%options/%source` URL, as imgproxy Pro's `/info`: JSON facts about
    /// the source (size, format, dimensions and orientation by default; colour space, sample
    /// format, frames, alpha, average colour, BlurHash, ThumbHash and digests when asked). The
    /// signature covers the path after it, as for images; the answer is kept and cached like a
    /// variant, and repeats of the path come from memory.
    func infoPlan(_ requestPath: String) throws -> VariantPlan {
        let presetsOnly = configuration.infoOnlyPresets ?? configuration.onlyPresets
        let path = try ProcessingPath(
            parsing: String(requestPath.dropFirst("/info".count)), presetsOnly: presetsOnly,
            base64IncludesFilename: configuration.base64URLIncludesFilename, argumentsSeparator: configuration.argumentsSeparator)
        try verifyImgproxySignature(path)
        if !presetsOnly { try path.checkOptions(allowed: configuration.allowedInfoOptions, kind: "info") }
        let options = try InfoOptions(parsing: path.options, presets: configuration.infoPresets, argumentsSeparator: configuration.argumentsSeparator)
        let url = try imgproxy.source(path.source)
        var plan = VariantPlan(
            source: url, key: "info\n" + url.absoluteString + "\n" + options.key, delivery: .facts, varies: false, failures: ImgproxyDialect.Failures(),
            product: .report(InfoReport(options: options)))
        // A PDF's page is rendered as asked; an animation's frame is picked from the decode.
        if options.page > 0 { plan.pages = PageSelection(first: options.page) }
        return plan
    }
}

/// `/info`'s facts as a plan's report: the profile kept so its kind can be told (the pixel facts
/// are taken in sRGB).
struct InfoReport: SourceReporting {
    let options: InfoOptions
    var requestOptions: ImageRequest.Options { .keepsColorProfile }
    var identity: String { "info\n" + options.key }

    func report(_ response: ImageResponse, pipeline: ImagePipeline) async throws -> Data {
        try await pipeline.runOnCPUStage { try ImageFacts.json(of: response.image, data: response.data, options: options) }
    }
}

/// The JSON `/info` answers, its keys as imgproxy's.
enum ImageFacts {
    /// The facts `options` ask for, of `image` decoded from `data`.
    static func json(of image: Image, data: Data, options: InfoOptions) throws(ImagoError) -> Data {
        let metadata = image.metadata
        var facts: [String: Any] = [:]
        if options.size { facts["size"] = data.count }
        if options.format {
            // The decoder that read it named it (the format table's names are imgproxy's).
            facts["format"] = metadata.format.rawValue
            facts["mime_type"] = metadata.format.mimeType
        }
        if options.dimensions {
            facts["width"] = image.width
            facts["height"] = image.height
            facts["orientation"] = metadata.orientationApplied.rawValue
        }
        if options.colorspace {
            switch metadata.sourceColorProfile?.kind {
            case .cmyk: facts["colorspace"] = "cmyk"
            case .gray: facts["colorspace"] = "b-w"
            default: facts["colorspace"] = "srgb"
            }
        }
        if let map = metadata.sourceGainMap {
            // Imago's own key: an HDR photo's gain map, as `imago info --json` reports it, in snake case.
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            facts["gain_map"] = (try? encoder.encode(map.facts)).flatMap { try? JSONSerialization.jsonObject(with: $0) }
        }
        if let video = metadata.video {
            // imgproxy Pro's `video_meta` key, with Imago's own fields (`imago info --json`'s, in snake case).
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            facts["video_meta"] = (try? encoder.encode(video)).flatMap { try? JSONSerialization.jsonObject(with: $0) }
        }
        if options.sampleFormat { facts["sample_format"] = (metadata.bitsPerSample ?? 8) > 8 ? "ushort" : "uchar" }
        if options.pagesNumber { facts["pages_number"] = image.metadata.pdf?.pageCount ?? image.frames.count }
        // The pixel facts come from one frame in sRGB.
        var frame = image.convertedToSRGB()
        frame.frames = [frame.frames[min(options.page, frame.frames.count - 1)]]
        if options.alpha {
            facts["alpha"] = metadata.hasAlpha
            if options.checkTransparency {
                facts["transparent"] = metadata.hasAlpha && frame.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element < 255 }
            }
        }
        if options.average { facts["average"] = averageColor(frame.pixels, ignoresTransparent: options.averageIgnoresTransparent) }
        if options.blurhash.x > 0 { facts["blurhash"] = try BlurHash(image: frame, components: options.blurhash).string }
        if options.thumbHash { facts["thumb_hash"] = try ThumbHash(image: frame).bytes.map { String(format: "%02X", $0) }.joined() }
        if !options.hashsums.isEmpty {
            var sums: [String: String] = [:]
            func hex<D: Digest>(_ digest: D) -> String { digest.map { String(format: "%02x", $0) }.joined() }
            for name in options.hashsums {
                switch name {
                case "md5": sums[name] = hex(Insecure.MD5.hash(data: data))
                case "sha1": sums[name] = hex(Insecure.SHA1.hash(data: data))
                case "sha256": sums[name] = hex(SHA256.hash(data: data))
                default: sums[name] = hex(SHA512.hash(data: data))
                }
            }
            facts["hashsums"] = sums
        }
        guard let data = try? JSONSerialization.data(withJSONObject: facts, options: [.sortedKeys]) else {
            throw ImagoError(.processingFailed("the facts could not be written as JSON"), url: nil, stage: .processing)
        }
        return data
    }

    /// The mean of each channel, rounded, as `{"R", "G", "B", "A"}`; fully transparent pixels left
    /// out when asked (all of them counted when every pixel is).
    static func averageColor(_ pixels: [UInt8], ignoresTransparent: Bool) -> [String: Int] {
        let all = Array(stride(from: 0, to: pixels.count, by: 4))
        let visible = ignoresTransparent ? all.filter { pixels[$0 + 3] > 0 } : all
        let counted = visible.isEmpty ? all : visible
        let mean = (0..<4).map { channel in
            counted.isEmpty ? 0 : (counted.reduce(0) { $0 + Int(pixels[$1 + channel]) } + counted.count / 2) / counted.count
        }
        return ["R": mean[0], "G": mean[1], "B": mean[2], "A": mean[3]]
    }
}
