import Imago

/// A URL's own limits on its source (as imgproxy's `max_src_file_size`, `max_src_resolution`,
/// `max_animation_frames` and `max_animation_frame_resolution` set them), each 0 for the server's:
/// a URL can only lower them. The first three are applied before the work they limit, by the pipeline
/// (``Imago/ImageRequest/Limits``): the download is refused on its `Content-Length` or stopped at
/// the byte limit, and the image's header is refused at the pixel limit before anything is
/// decoded (frames as the decoder counts them). The frame resolution, which needs the frame count,
/// is checked after the decode. A source over one is a 422 "Invalid source image", as imgproxy answers.
struct SourceLimits: Sendable, Hashable {
    var maxBytes = 0
    var maxPixels = 0
    var maxFrames = 0
    var maxFramePixels = 0

    /// No limits of the URL's own.
    init() {}

    /// The limits the pipeline applies for this URL.
    var request: ImageRequest.Limits {
        ImageRequest.Limits(
            maxResponseSize: maxBytes > 0 ? Int64(maxBytes) : nil, maxPixels: maxPixels > 0 ? maxPixels : nil, maxFrames: maxFrames > 0 ? maxFrames : nil)
    }

    /// The 422 a pipeline failure means when it was one of these limits that was passed; nil
    /// when it was not (the server's own limits answer as usual).
    func explain(_ error: ImagoError) -> ServerError? {
        if let limit = error.code.sizeLimit, maxBytes > 0, limit == Int64(maxBytes) { return Self.overBytes }
        switch error.code.limit {
        case .pixels(let limit) where maxPixels > 0 && limit == maxPixels:
            return ServerError(status: 422, ServerError.invalidSource)
        case .frames(let limit) where maxFrames > 0 && limit == maxFrames:
            return ServerError(status: 422, ServerError.invalidSource)
        default: return nil
        }
    }

    /// The limits that need the decoded image: the frame resolution of an animation.
    func check(_ response: ImageResponse) throws(ServerError) {
        let metadata = response.image.metadata
        let pixels = metadata.originalWidth * metadata.originalHeight
        if maxFramePixels > 0, response.image.frames.count > 1, pixels > maxFramePixels {
            throw ServerError(status: 422, ServerError.invalidSource)
        }
    }

    /// The byte limit, for sources answered without a decode (`raw`, `skip_processing`, SVG).
    func check(bytes: Int) throws(ServerError) {
        if maxBytes > 0, bytes > maxBytes { throw Self.overBytes }
    }

    private static let overBytes = ServerError(status: 422, ServerError.invalidSource)
}
