import Crypto
import Foundation
import Imago

/// The settings besides a URL that change an answer's bytes, as one value (the output group of
/// ``ServerConfiguration``): every stored variant's disk key and every ETag carry ``identity``,
/// which is derived from the whole value, as ``ProcessingOptions/key`` is from a URL's options.
/// A restart with any of them changed makes its images anew; a setting added here is in the key
/// without anything else to remember. (`OutputIdentityTests` flips every server setting and
/// fails when one that changes bytes is not here or in a URL's plan.)
public struct OutputSettings: Sendable, Hashable, Codable {
    /// Quality when the URL sets none.
    public var defaultQuality = 80
    /// imgproxy Pro's autoquality (`IMAGO_AUTOQUALITY_*`), measured with SSIMULACRA2. Default off.
    public var autoQuality = AutoQualitySettings()
    /// Formats given to clients whose `Accept` names them when a URL names no format (imgproxy 4's
    /// `IMGPROXY_AUTO_WEBP`, `_AVIF`, `_JXL`), preferred JPEG XL, then AVIF, then WebP. Default
    /// WebP alone (imgproxy's default is none).
    public var autoFormats: [OutputFormat] = [.webp]
    /// Formats given to clients whose `Accept` names them even over the format a URL names
    /// (imgproxy 4's `IMGPROXY_ENFORCE_WEBP`, `_AVIF`, `_JXL`). Default none.
    public var enforcedFormats: [OutputFormat] = []
    /// Whether AVIF is one of ``autoFormats`` (`--avif`).
    public var negotiatesAVIF: Bool {
        get { autoFormats.contains(.avif) }
        set { autoFormats = autoFormats.filter { $0 != .avif } + (newValue ? [.avif] : []) }
    }
    /// The quality per format when a URL sets none (imgproxy's `IMGPROXY_FORMAT_QUALITY`), before
    /// ``defaultQuality``. Default imgproxy 4's: WebP 79, AVIF 63, JPEG XL 77.
    public var formatQuality: [String: Int] = ["webp": 79, "avif": 63, "jxl": 77]
    /// How each format is written (quality aside): progressive JPEG, interlaced or quantised PNG,
    /// WebP's compression, AVIF's speed (8 by default, as imgproxy), JPEG XL's effort.
    public var encoding: ImageFormat.EncoderSettings = {
        var settings = ImageFormat.EncoderSettings(quality: 80)
        settings.speed = 8
        return settings
    }()
    /// Whether images are converted to sRGB and carry no colour profile unless a URL says
    /// `strip_color_profile:false` (imgproxy's `IMGPROXY_STRIP_COLOR_PROFILE`). Default true.
    public var stripsColorProfile = true
    /// Whether an HDR photo's gain map (Ultra HDR JPEG) stays in JPEG answers, which then stay HDR,
    /// unless a URL says `preserve_hdr:false`. Default true.
    public var keepsGainMap = true
    /// Whether images carry no EXIF or XMP unless a URL says `strip_metadata:false`
    /// (`IMGPROXY_STRIP_METADATA`). Default true.
    public var stripsMetadata = true
    /// Whether stripped metadata keeps the copyright and author (`IMGPROXY_KEEP_COPYRIGHT`). Default true.
    public var keepsCopyright = true
    /// The watermark `watermark`/`wm` options place; nil for none (the options then place nothing).
    public var watermark: ServerConfiguration.AuxiliaryImage?
    /// The watermark's own opacity, multiplied by each URL's (`IMGPROXY_WATERMARK_OPACITY`). Default 1.
    public var watermarkOpacity = 1.0
    /// The longest side a result may have; a larger one is scaled down (`IMGPROXY_MAX_RESULT_DIMENSION`).
    /// 0, the default, for no limit beyond the pixel limit.
    public var maxResultDimension = 0
    /// Whether every source is decoded whole (`IMGPROXY_DISABLE_SHRINK_ON_LOAD`). Default false: a
    /// JPEG or WebP source is decoded reduced when the result is small enough (its shrink-on-load:
    /// the same pixels within the parity tolerance, far less time and memory).
    public var decodesWhole = false
    /// Whether resizes average in linear light (`IMGPROXY_USE_LINEAR_COLORSPACE`): a fine pattern
    /// keeps the brightness it looks. Default false: in the encoded values, as imgproxy's default.
    public var resizesInLinearLight = false
    /// Text mixed into every answer's ETag and stored variant's key (imgproxy's
    /// `IMGPROXY_ETAG_BUSTER`): change it to make every ETag new. Default none.
    public var etagBuster = ""
    /// Source formats given as they came when the answer's format is theirs
    /// (`IMGPROXY_SKIP_PROCESSING_FORMATS`), as `skip_processing` asks per URL. Default none.
    public var skipProcessingFormats: [String] = []
    /// The formats an answer keeps from its source when the URL and `Accept` choose none, the
    /// first one that fits taken otherwise (imgproxy's `IMGPROXY_PREFERRED_FORMATS`). Default:
    /// every format Imago writes.
    public var preferredFormats = OutputFormat.defaultPreferred
    /// Whether an SVG source is rasterised when the URL names no format (imgproxy's
    /// `IMGPROXY_ALWAYS_RASTERIZE_SVG`); by default it is passed through, sanitised, as imgproxy does.
    public var alwaysRasterizesSVG = false
    /// Whether an SVG passed through is sanitised: scripts, event handlers and outside references
    /// removed (`IMGPROXY_SANITIZE_SVG`). Default true; false passes it as it came, which lets
    /// its scripts run wherever a browser opens it.
    public var sanitizesSVG = true
    /// Whether a HEIF's largest embedded thumbnail is the source when it has one, unless the URL's
    /// `enforce_thumbnail` says otherwise (`IMGPROXY_ENFORCE_THUMBNAIL`). Default false.
    public var enforcesThumbnail = false
    /// How video sources are read: off by default (``VideoSettings``).
    public var video = VideoSettings()
    /// Whether camera RAW sources (DNG, CR2, CR3, NEF, ARW, ORF, RAF, RW2, PEF, SRW) are read
    /// through LibRaw (imgproxy Pro's `IMGPROXY_ENABLE_RAW_FORMATS`). Default false, as imgproxy's:
    /// a RAW URL is then a 422.
    public var readsRAW = false
    /// Whether PDF sources are read, their pages rendered by Poppler in a child process
    /// (imgproxy Pro reads PDFs; its open-source edition does not). Default false: a PDF URL is
    /// then a 422.
    public var readsPDF = false
    /// Whether a PDF page is rendered with no background, transparent where it paints nothing
    /// (imgproxy Pro's `IMGPROXY_PDF_NO_BACKGROUND`). Default false: on white.
    public var pdfTransparentBackground = false

    /// The decoder families a pipeline reading with these settings registers: still images, and
    /// videos and RAW files when turned on.
    var decoderFamilies: Set<ImageFormatInfo.Family> {
        var families = video.families
        if readsRAW { families.insert(.raw) }
        if readsPDF { families.insert(.document) }
        return families
    }
    /// thumbor's `AUTO_WEBP` (`IMAGO_AUTO_WEBP`): WebP for clients that accept it when a thumbor
    /// URL names no format, with `Vary: Accept`. Default false, as thumbor.
    public var thumborAutoWebP = false
    /// thumbor's `RESPECT_ORIENTATION` (`IMAGO_RESPECT_ORIENTATION`): whether thumbor URLs turn
    /// images by their EXIF orientation. Default false, as thumbor.
    public var thumborRespectsOrientation = false
    /// thumbor's `MAX_WIDTH` (`IMAGO_THUMBOR_MAX_WIDTH`): thumbor URLs ask for no wider a box, and
    /// a source wider by more than it is taller than ``thumborMaxHeight`` is scaled down to it on
    /// load, as thumbor's engine normalises it. 0 (the default, as thumbor): none.
    public var thumborMaxWidth = 0
    /// thumbor's `MAX_HEIGHT` (`IMAGO_THUMBOR_MAX_HEIGHT`): as ``thumborMaxWidth``, for heights.
    public var thumborMaxHeight = 0
    /// thumbor's `FILTERS` (`IMAGO_THUMBOR_FILTERS`): the filters thumbor URLs may use, by name
    /// (a module path's last part); another is skipped as thumbor skips a filter it does not know.
    /// Default thumbor's `BUILTIN_FILTERS` (``ThumborFilter/builtinModules``), which leaves out
    /// `autojpg`.
    @SortedWhenEncoded public var thumborFilters: Set<String> = ThumborFilter.builtinNames
    /// thumbor's `AUTO_PNG_TO_JPG` (`IMAGO_THUMBOR_AUTO_PNG_TO_JPG`): a PNG without transparency
    /// is written as JPEG when a URL's `autojpg()` does not say otherwise. Default false, as thumbor.
    public var thumborAutoPNGToJPG = false
    /// thumbor's `WEBP_QUALITY` and `AVIF_QUALITY`: the quality of a thumbor answer in that
    /// format when its URL sets none, before ``defaultQuality`` (thumbor's `QUALITY`). Default none.
    public var thumborFormatQuality: [OutputFormat: Int] = [:]

    /// The defaults.
    public init() {}

    /// A digest of the whole value: equal settings give the same identity in every process, any
    /// change another.
    public var identity: String { SettingsDigest.of(self) }
}

/// The server's limits on the sources it reads (imgproxy's `IMGPROXY_MAX_SRC_FILE_SIZE`,
/// `_MAX_SRC_RESOLUTION`, `_MAX_ANIMATION_FRAMES`; thumbor's `MAX_PIXELS`): a group whose
/// ``identity`` is in every stored key, so a variant made under looser limits is not answered
/// after they were tightened.
public struct SourceLimitSettings: Sendable, Hashable, Codable {
    /// Largest source accepted, in bytes. Default 50 MB.
    public var maxSourceBytes: Int64 = 50_000_000
    /// Most pixels a source may declare, and an output may be asked to have. Default 50 megapixels.
    public var maxSourcePixels = 50_000_000
    /// Most frames an animated source may have. Default 200.
    public var maxFrames = 200
    /// Most pixels a frame of an animated source may have (imgproxy's
    /// `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`, checked once the frames are counted); 0 for
    /// none but ``maxSourcePixels``. Default 0.
    public var maxFramePixels = 0

    /// The defaults.
    public init() {}

    /// A digest of the whole value.
    public var identity: String { SettingsDigest.of(self) }
}

/// The digest a group of settings is known by: its JSON with sorted keys (sets sorted by
/// ``SortedWhenEncoded``), hashed, so equal settings give the same identity in every process.
enum SettingsDigest {
    static func of(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every member is plain data; a failure would be a programming error, not an input's.
        let json = (try? encoder.encode(value)) ?? Data(String(describing: value).utf8)
        return SHA256.hash(data: json).prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}

/// A set encoded as a sorted array: a `Set`'s own order differs between processes (its hashing
/// is seeded per process), which would give the same settings another ``OutputSettings/identity``
/// after a restart.
@propertyWrapper
public struct SortedWhenEncoded: Sendable, Hashable, Codable {
    /// The set.
    public var wrappedValue: Set<String>

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Set<String>) { self.wrappedValue = wrappedValue }

    /// Reads the array ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws { wrappedValue = Set(try [String](from: decoder)) }

    /// Writes the set's members in order.
    public func encode(to encoder: any Encoder) throws { try wrappedValue.sorted().encode(to: encoder) }
}
