import Imago

/// How the server reads video sources (imgproxy Pro's video thumbnails): off by default, as
/// imgproxy's, so a video URL is a 422 until the operator turns them on. Part of
/// ``OutputSettings``, so of every variant's identity.
public struct VideoSettings: Sendable, Hashable, Codable {
    /// Whether video sources are read (`IMGPROXY_ENABLE_VIDEO_THUMBNAILS`). Default false.
    public var enabled = false
    /// The second whose frame is the picture when the URL names none (`IMGPROXY_VIDEO_THUMBNAIL_SECOND`). Default 1.
    public var second = 1.0
    /// The keyframe at or before that second instead (`IMGPROXY_VIDEO_THUMBNAIL_KEYFRAMES`). Default false.
    public var keyframesOnly = false
    /// A sprite (`vtt`) whose step is longer than the video's keyframe interval takes keyframes
    /// only (`IMGPROXY_VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES`). Default false.
    public var tileAutoKeyframes = false
    /// Bytes FFmpeg reads to find the streams (`IMGPROXY_VIDEO_THUMBNAIL_PROBE_SIZE`). Default 5,000,000, as imgproxy's.
    public var probeBytes = 5_000_000
    /// Milliseconds of the streams FFmpeg analyses; 0 for FFmpeg's own heuristic
    /// (`IMGPROXY_VIDEO_THUMBNAIL_MAX_ANALYZE_DURATION`). Default 0.
    public var maxAnalyzeMilliseconds = 0

    /// Settings with every default.
    public init() {}

    /// The frame a URL with `second` and `keyframes` (each nil for these settings') asks for.
    func frame(second: Double? = nil, keyframes: Bool? = nil) -> VideoFrameSelection {
        VideoFrameSelection(second: second ?? self.second, keyframesOnly: keyframes ?? keyframesOnly)
    }

    /// The decoder families a pipeline reading with these settings registers.
    var families: Set<ImageFormatInfo.Family> { enabled ? [.still, .video] : [.still] }

    /// `options` with these settings' probe limits and default frame.
    func apply(to options: inout DecodingOptions) {
        options.videoFrame = frame()
        options.videoProbeBytes = probeBytes
        options.videoMaxAnalyzeDuration = maxAnalyzeMilliseconds > 0 ? .milliseconds(maxAnalyzeMilliseconds) : nil
    }
}
