import Imago

/// A URL's own source limits (`max_src_resolution`, `max_src_file_size`, `max_animation_frames`,
/// `max_animation_frame_resolution`), checked after the server's, which the pipeline already
/// enforced before it allocated anything: a URL can only lower them. A source over one is a 422,
/// as imgproxy answers.
struct SourceLimits {
    let options: ProcessingOptions

    func check(_ response: ImageResponse) throws(ServerError) {
        try check(bytes: response.data.count)
        let metadata = response.image.metadata
        let pixels = metadata.originalWidth * metadata.originalHeight
        if options.maxSourcePixels > 0, pixels > options.maxSourcePixels {
            throw ServerError(status: 422, "the source's resolution is over max_src_resolution")
        }
        let frames = response.image.frames.count
        if options.maxFrames > 0, frames > options.maxFrames { throw ServerError(status: 422, "the source has more frames than max_animation_frames") }
        if options.maxFramePixels > 0, frames > 1, pixels > options.maxFramePixels {
            throw ServerError(status: 422, "the source's frames are over max_animation_frame_resolution")
        }
    }

    func check(bytes: Int) throws(ServerError) {
        if options.maxSourceBytes > 0, bytes > options.maxSourceBytes { throw ServerError(status: 422, "the source is over max_src_file_size") }
    }
}
