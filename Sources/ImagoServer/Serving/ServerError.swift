import Imago

/// An answer other than an image: a status and a short text that names no path, host or internal.
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status.
    public var status: Int
    /// The body: one line for the client.
    public var message: String
    /// Seconds for a `Retry-After` header (429 and 503 only).
    public var retryAfter: Int?

    /// An error with `status` and `message`.
    public init(status: Int, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status) \(message)" }

    static func badRequest(_ message: String) -> ServerError { ServerError(status: 400, message) }
    static func forbidden(_ message: String) -> ServerError { ServerError(status: 403, message) }
    /// The work for a new image passed ``ServerConfiguration/workTimeout``.
    static let workTimedOut = ServerError(status: 504, "the image took too long")
    /// The server takes no more work now: the container's memory is nearly used up, or (thumbor's
    /// URLs, which have no 429) every worker is busy and the queue full.
    static let overloaded = ServerError(status: 503, "too busy, try again", retryAfter: 1)
    /// Every worker busy and the queue full, as imgproxy answers it (`TooManyRequestsError`).
    static let queueFull = ServerError(status: 429, "Too many requests", retryAfter: 1)
    /// imgproxy's public message for a source over a limit.
    static let invalidSource = "Invalid source image"

    /// What a failed load or decode of the source tells the client, as imgproxy (3.31 on) answers
    /// it: a source's 4xx passed on (404 "source not found", others "source answered N"), its 5xx
    /// a 502.
    init(loading error: ImagoError) {
        switch error.code.kind {
        case .httpStatus where error.code.httpStatus == 404 || error.code.httpStatus == 410, .fileNotFound:
            self.init(status: 404, "source not found")
        case .httpStatus where (400..<500).contains(error.code.httpStatus ?? 0):
            self.init(status: error.code.httpStatus ?? 404, "source answered \(error.code.httpStatus ?? 404)")
        case .addressRefused, .redirectToUnsupportedScheme, .insecureRedirect, .sourceRefused:
            self.init(status: 403, "source not allowed")
        case .imageTooLarge where error.code.limit?.isMemory == true:
            // Not the source's declared size but this server's memory: another server may make it.
            self.init(status: 422, "the image is too large for this server's memory")
        case .tooLarge, .imageTooLarge:
            // As imgproxy answers a source over its limits (newFileSizeError, newImageResolutionError).
            self.init(status: 422, Self.invalidSource)
        case .unsupportedFormat, .invalidImage, .emptyImage, .emptyResponse:
            self.init(status: 422, "source is not an image Imago reads")
        case .timedOut, .tooSlow:
            self.init(status: 504, "source took too long")
        case .processingFailed:
            self.init(status: 400, "the options cannot be applied to this image")
        case .codecUnavailable where error.stage == .decoding:
            // A codec library missing on this machine: the source's format is one Imago cannot read here.
            self.init(status: 422, "source is not an image Imago reads here (\(error.code.message ?? ""))")
        case .codecUnavailable:
            // The answer's format cannot be written here: as a format Imago does not write.
            self.init(status: 400, "Imago cannot write this format here (\(error.code.message ?? ""))")
        default:
            self.init(status: 502, "source failed")
        }
    }
}

extension DecodingLimit {
    /// Whether this limit is the memory a decode may take (the per-decode bytes, the shared
    /// budget) rather than a size the source declares.
    var isMemory: Bool {
        switch self {
        case .decodedBytes, .decodeMemoryBudget, .reservedBytes: true
        case .pixels, .side, .frames, .totalFramePixels: false
        }
    }
}
