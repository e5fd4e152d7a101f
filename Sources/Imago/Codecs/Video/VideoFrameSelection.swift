/// Which frame of a video a decode shows (``DecodingOptions/videoFrame``): imgproxy Pro's
/// `video_thumbnail_second` and `video_thumbnail_keyframes`.
public struct VideoFrameSelection: Sendable, Hashable {
    /// The second from the start whose frame is shown: the first frame at or past it, or the last
    /// frame when the video is shorter. Default 1, as imgproxy's.
    public var second: Double
    /// Show the keyframe at or before ``second`` instead: faster (one frame decoded after the
    /// seek), up to a GOP earlier.
    public var keyframesOnly: Bool
    /// Most packets of the video stream decoded after the seek to reach the frame: a bound on the
    /// work a file whose keyframes are far apart (or missing) can cause. Default 1,000.
    public var maxPackets: Int
    /// Several frames from ``second`` on, as a sprite or an animation; nil (the default) for one.
    public var sequence: VideoFrameSequence?
    /// Instead of ``second``'s frame, the most telling of eight keyframes spread over the first
    /// five minutes: each is decoded small, and the one whose luma varies most wins, frames
    /// mostly black or white (a fade, a title card's ground) scoring nothing. Imago's own choice;
    /// imgproxy has none. Ignored by a ``sequence``.
    public var representative = false

    /// A selection.
    public init(second: Double = 1, keyframesOnly: Bool = false, maxPackets: Int = 1_000, sequence: VideoFrameSequence? = nil) {
        self.second = second
        self.keyframesOnly = keyframesOnly
        self.maxPackets = maxPackets
        self.sequence = sequence
    }

    /// What tells this selection's frames from another's in keys.
    var identifier: String {
        "video:" + (representative ? "representative" : "\(second)") + (keyframesOnly ? ",keyframes" : "") + (sequence.map { "," + $0.identifier } ?? "")
    }
}
