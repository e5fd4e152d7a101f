import Foundation
import Imago

/// What one URL asks the server for, whichever dialect it came in. Each dialect compiles its URL
/// to a plan (in `Dialects/`); ``ImageService/serve(_:to:negotiation:)`` answers every plan the
/// same way: kept bytes, else one task making the key (others join it), the variant stored on
/// disk, else the pipeline with the plan's limits, the product made, encoded on the CPU stage,
/// kept. The core names no dialect: what differs between them is in the values a plan carries
/// (its steps, its report, its encoding choice, its statuses).
struct VariantPlan: Sendable {
    /// The source, resolved under the server's rules (address policy, allow-list, ``LocalRoot``).
    var source: URL
    /// Everything that changes the answer's bytes: the kept and stored variant's key.
    var key: String
    /// The URL's own limits on its source, applied while fetching and at the image's header.
    var limits = SourceLimits()
    /// Headers the source is fetched with (the client's cookies, with imgproxy's cookie
    /// passthrough): part of ``key``, and a source fetched with them is not kept on disk.
    var sourceHeaders = HeaderFields()
    /// Expiry and `Content-Disposition` of the answer.
    var delivery: DeliveryHeaders
    /// Whether the answer varies with `Accept`.
    var varies: Bool
    /// What a failure tells the client, in the dialect's statuses.
    var failures: any FailureExplaining
    /// What is made from the source.
    var product: Product
    /// Whether the variant may be read from and written to the fleet's shared result store
    /// (thumbor keeps its unsafe URLs' out unless `RESULT_STORAGE_STORES_UNSAFE`).
    var sharesResult = true
    /// The frame of a video source the URL asks for (imgproxy Pro's `video_thumbnail_second`,
    /// `video_thumbnail_keyframes`); nil for the server's (``VideoSettings``). Part of ``key``
    /// through the dialect's options.
    var videoFrame: VideoFrameSelection?
    /// The pages of a paged source (PDF) the URL asks for (imgproxy Pro's `page`, `pages`); nil
    /// for the first. Part of ``key`` through the dialect's options.
    var pages: PageSelection?

    enum Product: Sendable {
        /// A processed, encoded image.
        case image(ImageRecipe)
        /// JSON about the source (thumbor's `meta/`, imgproxy's `/info`), which the dialect writes.
        case report(any SourceReporting)
        /// The source's bytes as they came (imgproxy's `raw`).
        case passThrough
    }

    /// What a failure of this plan's work tells the client.
    func explain(_ error: any Error) -> any Error {
        guard let error = error as? ImagoError else { return error }
        return failures.explain(error, limits: limits)
    }
}

/// A dialect's statuses for a source that cannot be had.
protocol FailureExplaining: Sendable {
    /// What `error`, from loading or decoding the source under the URL's `limits`, tells the client.
    func explain(_ error: ImagoError, limits: SourceLimits) -> any Error
    /// The answer when every worker is busy and the queue is full.
    var queueFull: ServerError { get }
}

extension FailureExplaining {
    var queueFull: ServerError { .queueFull }
}

/// How an image variant is made: its pixel steps as its dialect wrote them, what the decode
/// keeps, and how the answer is encoded.
struct ImageRecipe: Sendable {
    /// The pixel work: the dialect's geometry, once its overlay images are loaded.
    var steps: any StepsLoading
    /// What the decode keeps (colour profile, metadata).
    var requestOptions: ImageRequest.Options
    /// How the encoding is chosen.
    var answer: AnswerPolicy
    /// What besides the source and the format made the bytes: part of the ETag.
    var identity: String
    /// Source formats answered as they came instead of processed (imgproxy's `skip_processing`
    /// and `IMGPROXY_SKIP_PROCESSING_FORMATS`, only the URL's format when it names one).
    var passesThrough: Set<String> = []
}

/// A dialect's pixel work before the images its steps place (watermarks, frames) are loaded:
/// loading them gives the planner ``PlanProcessor`` runs on a decode reduced to what it needs.
protocol StepsLoading: Sendable {
    /// The planner with its overlay images loaded, and what names those images (part of the ETag).
    func loaded() async throws -> (planner: any StepPlanning, overlayIdentity: String)
}

/// A dialect's JSON about a source, made from its full decode.
protocol SourceReporting: Sendable {
    /// What the decode keeps.
    var requestOptions: ImageRequest.Options { get }
    /// What besides the source made the report: part of the ETag.
    var identity: String { get }
    /// The JSON about `response`'s image, made on `pipeline`'s CPU stage.
    func report(_ response: ImageResponse, pipeline: ImagePipeline) async throws -> Data
}

/// How a variant's encoding is chosen: the format, quality and byte bound (the dialect's
/// ``EncodingChoosing``), and what happens to alpha when the format has none.
struct AnswerPolicy: Sendable {
    /// The dialect's choice of format, quality and bound for a made image.
    var encoding: any EncodingChoosing
    /// What becomes of alpha in a format without it.
    var alpha: AlphaRule
    /// The URL names SVG: an SVG source passed through, sanitised (any other source is a 422).
    var answersSanitizedSVG = false
    /// An SVG source with no format named is passed through, sanitised, instead of rasterised.
    var passesSVGThrough = false

    /// What becomes of alpha when the chosen format has none.
    enum AlphaRule: Sendable {
        /// Composed over a colour (imgproxy's `background`, white by default).
        case flatten(RGBAColor)
        /// Dropped, the colours kept (Pillow's `convert("RGB")`, as thumbor).
        case drop
    }
}

/// The format, quality (or its search) and byte bound of one answer.
struct EncodingChoice: Sendable {
    var format: OutputFormat
    var quality: Int
    /// Auto quality's search, when the quality is chosen by measuring.
    var search: AutoQuality?
    /// The most bytes the answer may have (0: any); the quality is lowered to fit.
    var maxBytes = 0
}

/// A dialect's rules for the encoding of a made image.
protocol EncodingChoosing: Sendable {
    /// The encoding of `image` under the server's output `settings`.
    func choose(for image: Image, settings: OutputSettings) -> EncodingChoice
    /// The formats the answer may take for a source of `format` whose alpha and animation are
    /// not known yet: what the decode's memory reservation counts for the encode.
    func possibleFormats(source: ImageFormat?, settings: OutputSettings) -> Set<OutputFormat>
}

extension EncodingChoosing {
    /// The most an encode of the answer holds per pixel of the result, over the formats it may
    /// take for a source of `format` (each encoder's ``Imago/ImageEncoding/workingBytes(for:)``).
    func encodeBytesPerPixel(source: ImageFormat?, settings: OutputSettings) -> Int {
        let pixels = EncodeProbe.side * EncodeProbe.side
        return possibleFormats(source: source, settings: settings).map { format in
            (format.encoder(quality: 80, settings: settings.encoding).workingBytes(for: EncodeProbe.image) + pixels - 1) / pixels
        }.max() ?? 0
    }
}

/// The image encoders are asked their working bytes for, per pixel: large enough that a
/// constant part (PNM's header) rounds away.
private enum EncodeProbe {
    static let side = 64
    static let image = Image(
        width: side, height: side, frames: [Image.Frame(pixels: [UInt8](repeating: 0, count: side * side * 4))],
        metadata: ImageMetadata(format: .png, originalWidth: side, originalHeight: side, orientationApplied: .up, hasAlpha: true))
}
