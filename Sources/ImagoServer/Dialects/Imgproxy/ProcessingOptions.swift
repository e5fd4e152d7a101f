import Foundation
import Imago

/// imgproxy's processing options (every one of its open-source build), parsed from a path's
/// option segments by their full or short names (see ``init(parsing:presets:)``). Later options
/// override earlier ones and empty arguments keep their value, as in imgproxy.
///
/// Everything that changes the picture is part of ``key``, derived from the whole value: a new
/// field is keyed unless it is put in ``delivery``, which holds what changes only the answer's
/// headers and whether it is given.
public struct ProcessingOptions: Sendable, Hashable, Codable {
    /// How the image meets the box (imgproxy's `resizing_type`).
    public enum ResizingType: String, Sendable, Hashable, Codable {
        /// Inside the box, aspect kept.
        case fit
        /// Covering the box, aspect kept, the overflow cropped at the gravity.
        case fill
        /// As `fill`, but never enlarging: a smaller image is cropped to the box's shape instead.
        case fillDown = "fill-down"
        /// Exactly the box, aspect not kept.
        case force
        /// `fill` when the image and the box are both portrait or both landscape, else `fit`.
        case auto
    }

    /// `extend` and `extend_aspect_ratio`: whether the canvas grows to the box (or its aspect
    /// ratio), and where the image sits on it.
    public struct Extension: Sendable, Hashable, Codable {
        /// Whether the canvas is extended.
        public var enabled = false
        /// Where the image sits on the larger canvas.
        public var gravity = Gravity()
    }

    /// `crop`: the area kept before the resize.
    public struct CropArea: Sendable, Hashable, Codable {
        /// Pixels when 1 or more, a fraction of the width below 1, the whole width at 0.
        public var width = 0.0
        /// As ``width``, for the height.
        public var height = 0.0
        /// Where the area is taken; nil takes ``ProcessingOptions/gravity``.
        public var gravity: Gravity?
    }

    /// `trim`: a border of background cut away first.
    public struct TrimSettings: Sendable, Hashable, Codable {
        /// How far a channel may differ from the background (0…255).
        public var threshold = 10.0
        /// The background's colour; nil takes the top left pixel's.
        public var color: RGBAColor?
        /// Cut the same from left and right.
        public var equalHorizontal = false
        /// Cut the same from top and bottom.
        public var equalVertical = false
    }

    /// `padding`, in points (scaled by ``dpr``).
    public struct Padding: Sendable, Hashable, Codable {
        /// Above the image.
        public var top = 0
        /// Right of the image.
        public var right = 0
        /// Below the image.
        public var bottom = 0
        /// Left of the image.
        public var left = 0
        /// Whether any side is padded.
        public var isEnabled: Bool { top > 0 || right > 0 || bottom > 0 || left > 0 }
    }

    /// `watermark`: the server's watermark image placed on the result.
    public struct WatermarkPlacement: Sendable, Hashable, Codable {
        /// Multiplies the watermark's own opacity, 0…1; 0 places none.
        public var opacity = 0.0
        /// Where it sits (compass points, centre, or ``Gravity/Kind/replicate`` to tile), with
        /// its offsets (the spacing between tiles for `re`).
        public var position = Gravity()
        /// The watermark's width as a fraction of the result's; 0 keeps its own size.
        public var scale = 0.0
    }

    /// `zoom`: factors of the result's width and height.
    public struct Zoom: Sendable, Hashable, Codable {
        /// The width's factor, above 0.
        public var x = 1.0
        /// The height's factor, above 0.
        public var y = 1.0
    }

    /// What changes only the answer's headers or whether it is given, not the picture.
    public struct Delivery: Sendable, Hashable, Codable {
        /// `expires`: the unix time after which the URL answers 404.
        public var expires: Int?
        /// `filename`: the name in `Content-Disposition`; nil takes it from the source URL.
        public var filename: String?
        /// `return_attachment`: `attachment` instead of `inline`; nil takes the server's setting.
        public var returnsAttachment: Bool?
    }

    /// How the image meets the box (`rt`); `fit` by default.
    public var resizingType = ResizingType.fit
    /// The box's width in points; 0 takes it from the height and the image's aspect.
    public var width = 0
    /// The box's height in points; 0 takes it from the width and the image's aspect.
    public var height = 0
    /// The smallest width of the result (`mw`).
    public var minWidth = 0
    /// The smallest height of the result (`mh`).
    public var minHeight = 0
    /// Factors multiplying the result's size (`z`), but not offsets or paddings.
    public var zoom = Zoom()
    /// Pixels per point, multiplying sizes, offsets and paddings.
    public var dpr = 1.0
    /// Whether an image smaller than the box is scaled up.
    public var enlarge = false
    /// `extend`: the canvas grown to the box.
    public var extend = Extension()
    /// `extend_aspect_ratio`: the canvas grown to the box's aspect ratio.
    public var extendAspectRatio = Extension()
    /// Where a crop keeps the image (`g`); the centre by default.
    public var gravity = Gravity()
    /// `crop`: an area cut before the resize.
    public var crop: CropArea?
    /// `trim`: background cut away before anything else.
    public var trim: TrimSettings?
    /// `padding`, added after the resize.
    public var padding = Padding()
    /// `auto_rotate`: whether the EXIF orientation is applied; nil takes the server's (yes).
    public var autoRotate: Bool?
    /// `rotate`: degrees clockwise, a multiple of 90.
    public var rotate = 0
    /// `flip`: left to right.
    public var flipHorizontal = false
    /// `flip`: top to bottom.
    public var flipVertical = false
    /// `background`: what fills extensions and padding and replaces transparency where the
    /// format has none; nil for none (transparent fills, white behind a flattened image).
    public var background: RGBAColor?
    /// `enforce_thumbnail`: a HEIF's largest embedded thumbnail is the source when it has one;
    /// nil for the server's (``OutputSettings/enforcesThumbnail``).
    public var enforceThumbnail: Bool?
    /// `video_thumbnail_second`: the second of a video source whose frame is the picture; nil for
    /// the server's (``VideoSettings/second``).
    public var videoThumbnailSecond: Double?
    /// `video_thumbnail_keyframes`: the keyframe at or before that second; nil for the server's.
    public var videoThumbnailKeyframes: Bool?
    /// `video_thumbnail_representative` (Imago's own): the most telling keyframe instead of a second's frame.
    public var videoThumbnailRepresentative = false
    /// `video_thumbnail_tile`: a sprite of a video's frames; nil (or a step of 0) for none.
    public var videoThumbnailTile: VideoFrames?
    /// `video_thumbnail_animation`: an animation of a video's frames; nil (or a step of 0) for none.
    public var videoThumbnailAnimation: VideoFrames?
    /// `page`: the first page of a paged source (PDF) shown, from 0; nil for the first.
    public var page: Int?
    /// `pages`: how many pages from ``page`` on are shown, stacked top to bottom; nil for one.
    public var pages: Int?

    /// The arguments `video_thumbnail_tile` and `video_thumbnail_animation` share: the step, the
    /// layout's two numbers (columns and rows; delay and frames), the frame size, extend, trim, fill
    /// and the focus.
    public struct VideoFrames: Sendable, Hashable, Codable {
        /// Seconds between frames; negative: spread over the video.
        public var step = 0.0
        /// Columns (a sprite) or the delay in milliseconds (an animation).
        public var first = 0
        /// Rows (a sprite) or the frame count (an animation).
        public var second = 0
        /// The tile's or frame's width; 0 follows the height.
        public var width = 0
        /// The tile's or frame's height; 0 follows the width.
        public var height = 0
        /// Extend each frame to the size with black.
        public var extends = false
        /// Leave out what the video's end leaves unused.
        public var trims = false
        /// Fill the size instead of fitting inside it.
        public var fills = false
        /// The kept centre when filling, 0…1.
        public var focusX = 0.5
        /// The kept centre when filling, 0…1.
        public var focusY = 0.5
    }
    /// `max_result_dimension`: the longest side of the result; 0 for the server's limit.
    public var maxResultDimension = 0
    /// Gaussian blur's sigma; 0 for none.
    public var blur = 0.0
    /// `sharpen`'s sigma; 0 for none.
    public var sharpen = 0.0
    /// `pixelate`'s square size; 0 or 1 for none.
    public var pixelate = 0
    /// `watermark`; nil for none.
    public var watermark: WatermarkPlacement?
    /// Output quality 1…100; 0 takes ``formatQuality``, then the server's default.
    public var quality = 0
    /// `format_quality`: a quality per output format (`jpeg`, `webp`, `avif`, `png`).
    public var formatQuality: [String: Int] = [:]
    /// `max_bytes`: the largest answer; quality is lowered until it fits. 0 for none.
    public var maxBytes = 0
    /// `autoquality`/`aq`: what the URL redefines of the server's autoquality settings; nil for none.
    public var autoQuality: AutoQualityOption?

    /// `autoquality:%method:%target:%min_quality:%max_quality:%allowed_error`, each part optional.
    public struct AutoQualityOption: Sendable, Hashable, Codable {
        /// `none`, `size` or `ssimulacra2`.
        public var method: AutoQualitySettings.Method?
        /// A SSIMULACRA2 score, or bytes for `size`.
        public var target: Double?
        /// The lowest quality, for every format.
        public var minQuality: Int?
        /// The highest quality, for every format.
        public var maxQuality: Int?
        /// SSIMULACRA2 points a score may miss the target by.
        public var allowedError: Double?

        /// Nothing redefined.
        public init() {}
    }
    /// The format asked for (an extension imgproxy knows), or nil to negotiate.
    public var format: String?
    /// Whether the output is converted to sRGB and carries no colour profile (imgproxy's
    /// `strip_color_profile`); nil takes the server's setting.
    public var stripColorProfile: Bool?
    /// Whether the output carries no EXIF or XMP (`strip_metadata`); nil takes the server's setting.
    public var stripMetadata: Bool?
    /// Whether stripping metadata keeps the copyright and author (`keep_copyright`); nil takes the
    /// server's setting.
    public var keepCopyright: Bool?
    /// `preserve_hdr`: whether an HDR photo's gain map stays in a JPEG answer (true) or is dropped
    /// (false); nil takes the server's setting (``ServerConfiguration/keepsGainMap``). Outputs are
    /// 8-bit whatever it says.
    public var preserveHDR: Bool?
    /// `skip_processing`: source formats (canonical names: `jpeg`, `png`, …) given as they came
    /// when the answer's format is theirs.
    public var skipProcessing: [String] = []
    /// `raw`: the source's bytes as they came, unchecked.
    public var raw = false
    /// `cachebuster`: keyed, nothing else.
    public var cacheBuster = ""
    /// `max_src_resolution` in pixels (0 for the server's), never above the server's limit.
    public var maxSourcePixels = 0
    /// `max_src_file_size` in bytes (0 for the server's), never above the server's limit.
    public var maxSourceBytes = 0
    /// `max_animation_frames` (0 for the server's), never above the server's limit.
    public var maxFrames = 0
    /// `max_animation_frame_resolution` in pixels (0 for the server's limit).
    public var maxFramePixels = 0
    /// Headers and expiry: not part of ``key``.
    public var delivery = Delivery()

    /// The defaults: no resize, negotiated format, the server's quality.
    public init() {}

    /// Everything that changes the picture, as text: the variant cache's and the ETag's identity
    /// of the options. Derived from the whole value less ``delivery``, so no field can be missed.
    public var key: String {
        var keyed = self
        keyed.delivery = Delivery()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain numbers, strings and Booleans cannot fail.
        return (try? encoder.encode(keyed)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

extension ProcessingOptions.VideoFrames {
    /// The library's sequence of these frames laid out as `layout`.
    func sequence(_ layout: VideoFrameSequence.Layout) -> VideoFrameSequence {
        var sequence = VideoFrameSequence(layout: layout, step: step, frameSize: PixelSize(width: width, height: height))
        (sequence.extends, sequence.trims, sequence.fills) = (extends, trims, fills)
        (sequence.focusX, sequence.focusY) = (focusX, focusY)
        return sequence
    }
}
