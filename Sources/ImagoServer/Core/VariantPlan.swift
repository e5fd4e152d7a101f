import Foundation
import Imago

/// What one URL asks the server for, whichever dialect it came in. Each dialect compiles its URL
/// to a plan (imgproxy's in `ImageService+Imgproxy`, thumbor's in `ImageService+Thumbor`, `/info`'s
/// in `ImageService+Info`); ``ImageService/serve(_:to:negotiation:)`` answers every plan the same
/// way: kept bytes, else one task making the key (others join it), the variant stored on disk,
/// else the pipeline with the plan's limits, the product made, encoded on the CPU stage, kept.
struct VariantPlan: Sendable {
    /// The source, resolved under the server's rules (address policy, allow-list, ``LocalRoot``).
    var source: URL
    /// Everything that changes the answer's bytes: the kept and stored variant's key.
    var key: String
    /// The URL's own limits on its source, applied while fetching and at the image's header.
    var limits = SourceLimits()
    /// Expiry and `Content-Disposition` of the answer.
    var delivery: DeliveryHeaders
    /// Whether the answer varies with `Accept`.
    var varies: Bool
    /// Whose statuses a failure is told in.
    var errors: ErrorStyle
    /// What is made from the source.
    var product: Product

    enum Product: Sendable {
        /// A processed, encoded image.
        case image(ImageRecipe)
        /// thumbor's `meta/` JSON: the transformation (with the overlay images it places) run on
        /// the full decode, its operations reported; `image` is the URL's image part.
        case thumborMeta(ThumborTransformation, overlays: [String], image: String, requestOptions: ImageRequest.Options)
        /// `/info`'s JSON facts about the source.
        case facts(InfoOptions)
        /// The source's bytes as they came (imgproxy's `raw`).
        case passThrough
    }

    /// The statuses a dialect's clients expect for a source that cannot be had.
    enum ErrorStyle: Sendable {
        /// By the error's kind (``ServerError/init(loading:)``); a URL's own limit is a 422.
        case imgproxy
        /// thumbor's handler's (``ServerError/init(thumborLoading:)``).
        case thumbor
    }

    /// What a failure of this plan's work tells the client.
    func explain(_ error: any Error) -> any Error {
        guard let error = error as? ImagoError else { return error }
        switch errors {
        case .imgproxy: return limits.explain(error) ?? error
        case .thumbor: return ServerError(thumborLoading: error)
        }
    }
}

/// How an image variant is made: its pixel steps as its dialect wrote them, what the decode
/// keeps, and how the answer is encoded.
struct ImageRecipe: Sendable {
    /// The pixel work.
    var steps: Steps
    /// What the decode keeps (colour profile, metadata).
    var requestOptions: ImageRequest.Options
    /// How the encoding is chosen.
    var answer: AnswerPolicy
    /// What besides the source and the format made the bytes: part of the ETag.
    var identity: String
    /// Source formats answered as they came instead of processed (imgproxy's `skip_processing`
    /// and `IMGPROXY_SKIP_PROCESSING_FORMATS`, only the URL's format when it names one).
    var passesThrough: Set<String> = []

    /// The pixel work: the dialect geometry that plans its ``PixelStep``s, run by the one
    /// executor (``PlanProcessor``) on a decode reduced to what they need.
    enum Steps: Sendable {
        /// imgproxy's geometry (``ImgproxySteps``) for these options; the server's watermark is
        /// loaded when they place it.
        case imgproxy(ProcessingOptions)
        /// thumbor's geometry and filters (``ThumborTransformation``) with the overlay images its
        /// filters place, loaded first.
        case thumbor(ThumborTransformation, overlays: [String])
    }
}

/// How a variant's encoding is chosen: the format, what happens to alpha when the format has
/// none, the quality (fixed, per format, or searched), and a bound on the bytes.
struct AnswerPolicy: Sendable {
    /// Which format the answer is in.
    var format: FormatChoice
    /// What becomes of alpha in a format without it.
    var alpha: AlphaRule
    /// The quality the URL fixes, if it does.
    var quality: Int?
    /// The quality the URL fixes per format.
    var formatQuality: [String: Int] = [:]
    /// The URL's auto-quality choice; with ``usesServerAutoQuality``, the server's applies when
    /// the URL fixes no quality.
    var autoQuality: ProcessingOptions.AutoQualityOption?
    /// Whether the server's auto-quality settings apply.
    var usesServerAutoQuality = false
    /// The most bytes the answer may have (0: any); the quality is lowered to fit.
    var maxBytes = 0
    /// An SVG source with no format named is passed through, sanitised, instead of rasterised.
    var passesSVGThrough = false

    /// The ways a format is chosen.
    enum FormatChoice: Sendable {
        /// Named by the URL.
        case named(OutputFormat)
        /// imgproxy 4's choice (``OutputFormat/negotiate(named:offered:enforced:source:hasAlpha:animated:preferred:)``):
        /// the format the URL names unless an enforced one the client takes replaces it; without
        /// one, what the client takes of the offered formats, else the source's own when preferred.
        case negotiated(named: OutputFormat?, offered: [OutputFormat], enforced: [OutputFormat])
        /// thumbor's handler: its filters' format, `AUTO_WEBP`, the source's format, `autojpg`;
        /// a GIF source drops the filters' format, quality and size bound, as thumbor does.
        case thumbor(ThumborPlan, acceptsWebP: Bool)
    }

    /// What becomes of alpha when the chosen format has none.
    enum AlphaRule: Sendable {
        /// Composed over a colour (imgproxy's `background`, white by default).
        case flatten(RGBAColor)
        /// Dropped, the colours kept (Pillow's `convert("RGB")`, as thumbor).
        case drop
    }
}
