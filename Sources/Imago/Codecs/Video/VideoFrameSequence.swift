/// Several frames of a video instead of one (``VideoFrameSelection/sequence``): a sprite of tiles
/// or an animation, imgproxy Pro's `video_thumbnail_tile` and `video_thumbnail_animation`. The
/// frames start at the selection's second and are ``step`` seconds apart.
public struct VideoFrameSequence: Sendable, Hashable {
    /// How the frames are laid out.
    public enum Layout: Sendable, Hashable {
        /// One still image of `columns × rows` tiles, left to right, then top to bottom.
        case sprite(columns: Int, rows: Int)
        /// An animation of `frames` frames, each shown for `delay`.
        case animation(frames: Int, delay: Duration)
    }

    /// The layout.
    public var layout: Layout
    /// Seconds between frames; a negative step spreads the frames over the whole video (its
    /// duration over the frame count), as imgproxy's.
    public var step: Double
    /// A tile's or frame's size: each frame is fitted inside it (a 0 side follows the other by the
    /// picture's aspect; both 0: the picture's own size).
    public var frameSize: PixelSize
    /// Extend each fitted frame to ``frameSize`` with black.
    public var extends = false
    /// Leave out what the video's length leaves unused: tiles past its end (the sprite shrinks to
    /// the rows, and the columns of a single row, that were used), or frames past its end. Without
    /// it, unused tiles stay transparent and unused frames repeat the last one.
    public var trims = false
    /// Fill ``frameSize`` (cover and crop) instead of fitting inside it.
    public var fills = false
    /// The point of the picture kept in the middle when filling, 0…1 each way (0.5, 0.5: the centre).
    public var focusX = 0.5
    /// See ``focusX``.
    public var focusY = 0.5
    /// A sprite whose ``step`` is longer than the video's keyframe interval
    /// (``VideoInfo/keyframeInterval``) takes each tile's keyframe at or before its second, as
    /// ``VideoFrameSelection/keyframesOnly`` does: fast for long steps, exact for short ones
    /// (imgproxy Pro's `IMGPROXY_VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES`). Default false.
    public var autoKeyframes = false

    /// A sequence.
    public init(layout: Layout, step: Double, frameSize: PixelSize) {
        self.layout = layout
        self.step = step
        self.frameSize = frameSize
    }

    /// Frames the layout holds.
    public var count: Int {
        switch layout {
        case .sprite(let columns, let rows): max(0, columns) * max(0, rows)
        case .animation(let frames, _): max(0, frames)
        }
    }

    /// What tells this sequence's output from another's in keys.
    var identifier: String {
        let shape: String =
            switch layout {
            case .sprite(let columns, let rows): "sprite:\(columns)x\(rows)"
            case .animation(let frames, let delay): "animation:\(frames)@\(delay)"
            }
        return "\(shape),step:\(step),\(frameSize.width)x\(frameSize.height)" + (extends ? ",extend" : "") + (trims ? ",trim" : "")
            + (fills ? ",fill:\(focusX):\(focusY)" : "") + (autoKeyframes ? ",auto-keyframes" : "")
    }
}
