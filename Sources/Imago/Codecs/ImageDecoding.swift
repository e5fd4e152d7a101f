import Foundation

/// Decodes one encoded format into an ``Image``.
///
/// A decoder is chosen by sniffing the bytes (``canDecode(_:)``), never by URL or Content-Type.
/// It must read the declared size first and refuse, with ``ImagoError/Code/imageTooLarge(width:height:limit:)``,
/// anything over the limits before allocating pixels (``DecodingOptions/check(width:height:)``,
/// ``DecodingOptions/checkMemory(_:width:height:)``); bad data is an error, never a crash.
public protocol ImageDecoding: Sendable {
    /// The format this decoder reads.
    var format: ImageFormat { get }
    /// Whether the bytes start like this format.
    func canDecode(_ data: Data) -> Bool
    /// Decodes the bytes.
    func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image
    /// What decoding the bytes with `options` will hold, from their header alone, so the
    /// pipeline can reserve it in its ``DecodeMemoryBudget`` before decoding; nil when the decoder
    /// cannot tell (the pipeline then reserves ``DecodingOptions/maxDecodedBytes``).
    func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate?
    /// A preview of an image whose bytes are still arriving, for requests with `.previews`:
    /// `data` is every byte so far, `shown` how far the last preview reached (0 before the first).
    /// Nil when nothing beyond `shown` can be shown yet. Implement it to give previews; JPEG
    /// (complete progressive scans, or baseline rows), PNG (non-interlaced rows) and WebP (still
    /// rows) do.
    func preview(of data: Data, after shown: Int, options: DecodingOptions) -> PartialImage?
}

extension ImageDecoding {
    /// No estimate: the pipeline reserves ``DecodingOptions/maxDecodedBytes`` for the decode.
    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? { nil }
    /// No previews: the image is shown when its bytes are complete.
    public func preview(of data: Data, after shown: Int, options: DecodingOptions) -> PartialImage? { nil }
}

/// What a decoder shows of an image whose bytes are still arriving.
public struct PartialImage: Sendable {
    /// The picture so far, the missing part transparent (or coarse, for a progressive scan).
    public var image: Image
    /// How far it reaches, in the decoder's own measure (rows, scans, bytes); it grows as more
    /// is shown, and a later preview is asked to go beyond it.
    public var reached: Int

    /// A preview that reaches `reached`.
    public init(image: Image, reached: Int) {
        self.image = image
        self.reached = reached
    }
}

/// What a decode will hold, read from an image's header.
public struct DecodeEstimate: Sendable, Hashable {
    /// The size the header declares.
    public var width: Int
    /// The height the header declares.
    public var height: Int
    /// Bytes of pixels the decode will hold at most (canvas, frames, working copies).
    public var bytes: Int
    /// The size the decode delivers when it reduces (a JPEG's DCT scale, WebP's scaled decode),
    /// the way up the header declares; nil when it delivers the declared size.
    public var decodedSize: PixelSize?
    /// The format of the decoder that made the estimate (``DecoderRegistry`` sets it).
    public var format: ImageFormat?

    /// Makes an estimate.
    public init(width: Int, height: Int, bytes: Int) {
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// `buffers` RGBA buffers of `width × height`; nothing (the decode will refuse the header at
    /// once) when the size is empty or over `options`' limits.
    static func buffers(_ buffers: Int, width: Int, height: Int, options: DecodingOptions) -> DecodeEstimate {
        guard (try? options.check(width: width, height: height)) != nil else { return DecodeEstimate(width: width, height: height, bytes: 0) }
        let (bytes, overflow) = buffers.multipliedReportingOverflow(by: width * height * 4)
        return DecodeEstimate(width: width, height: height, bytes: overflow ? Int.max : bytes)
    }
}

/// Limits and choices for decoding.
public struct DecodingOptions: Sendable, Hashable {
    /// Most pixels an image (one frame) may declare. Default 100 megapixels.
    public var maxPixels = 100_000_000
    /// Longest side an image may declare. Default 65,535.
    public var maxSide = 65_535
    /// Most frames an animation may have. Default 1,000.
    public var maxFrames = 1_000
    /// Most pixels all frames of an animation may add up to. Default 500 megapixels.
    public var maxTotalFramePixels = 500_000_000
    /// Most bytes of pixels one decode may hold at once: the canvas, every composited frame and a
    /// codec's own working copies. Default 512 MiB, which admits a still image of ``maxPixels``
    /// (400 MB of RGBA) but not a 10000×10000 animation.
    public var maxDecodedBytes = 512 << 20
    /// What the caller reserved for this decode (the pipeline sets its estimate, ``ImageDecoding/estimate(_:options:)``):
    /// a decoder that finds it must take a path its estimate did not count (a damaged progressive
    /// JPEG that Imago's DC decoder hands to libjpeg-turbo, which holds every coefficient) refuses
    /// rather than allocate past it (``DecodingLimit/reservedBytes(reserved:needed:)``). Nil (the
    /// default): not bounded beyond ``maxDecodedBytes``.
    public var reservedBytes: Int?
    /// When set, a decoder that can decode at a reduced scale (JPEG, WebP) picks the smallest scale
    /// whose result still covers this size (after orientation); see ``targetMode``.
    public var targetSize: PixelSize?
    /// What covering ``targetSize`` means. Default `.fill`.
    public var targetMode: TargetMode = .fill
    /// Without a target size: an image of more pixels than this is decoded at the smallest
    /// reduced scale that still has this many (the caller resamples the rest of the way).
    public var scaleDownPixelLimit: Int?
    /// Turn pixels upright by the EXIF orientation. Default true.
    public var appliesOrientation = true
    /// What a decode does with the colour profile a file states. Default ``ColorProfileHandling/convertToSRGB``.
    public var colorProfileHandling = ColorProfileHandling.convertToSRGB
    /// The largest colour profile Imago hands to Little CMS; a larger one is ignored (the pixels
    /// taken as sRGB). Default 4 MiB: real profiles are a few KB, CMYK ones up to ~2 MB.
    public var maxColorProfileSize = 4 << 20
    /// Most bytes Little CMS may allocate to read one profile and make its transform (a hostile
    /// profile's lookup tables); past it the profile is ignored. Default 64 MiB.
    public var maxColorTransformMemory = 64 << 20
    /// Which EXIF and XMP a decode keeps in ``ImageMetadata/exif`` and ``ImageMetadata/xmp``, for
    /// encoders to write. Default ``MetadataHandling/strip``: none.
    public var metadataHandling = MetadataHandling.strip
    /// Whether a decode keeps a file's HDR gain map (Ultra HDR JPEG) in ``Image/gainMap``, decoded
    /// at the base's reduced scale. Default ``GainMapHandling/drop``: the SDR base alone, and the
    /// gain map never decoded.
    public var gainMapHandling = GainMapHandling.drop
    /// JPEG: upsample subsampled chroma with libjpeg's smooth ("fancy") filter, as libjpeg's
    /// default and Pillow, libvips and browsers decode, instead of by replication. Default false:
    /// replication is faster, and a resize after the decode smooths it anyway.
    public var smoothsChroma = false
    /// Decode the file's largest embedded thumbnail instead of its primary image when it has one
    /// (HEIF's, through libheif; imgproxy's `enforce_thumbnail`). Default false.
    public var usesEmbeddedThumbnail = false
    /// Which frame of a video is decoded. Default: the first at or past second 1.
    public var videoFrame = VideoFrameSelection()
    /// Which pages of a paged document (PDF) are rendered. Default: the first.
    public var pages = PageSelection()
    /// A PDF page rendered with no background: transparent where the page paints nothing
    /// (imgproxy Pro's `IMGPROXY_PDF_NO_BACKGROUND`). Default false: on white, as viewers show it.
    public var pdfTransparentBackground = false
    /// The longest a decode may run where its library can be stopped from inside (FFmpeg's
    /// demuxers and decoders); past it the decode fails with ``ImagoError/Code/timedOut``. Nil
    /// (the default): not bounded.
    public var maxDecodeDuration: Duration?
    /// Bytes FFmpeg reads to find a video's streams (its `probesize`); nil for FFmpeg's 5,000,000.
    public var videoProbeBytes: Int?
    /// How much of a video's streams FFmpeg analyses to describe them (its `max_analyze_duration`);
    /// nil for FFmpeg's heuristic.
    public var videoMaxAnalyzeDuration: Duration?
    /// Set by the pipeline when it converts to sRGB itself after a reducing resize: 8-bit RGB and
    /// gray pixels are then delivered in their own profile's space, as with `.keep`.
    var defersColorConversion = false
    /// Set by the pipeline for a first processor that finishes from a reduced decode: the size it
    /// needs, which takes the place of ``targetSize``.
    var sizeRequirement: DecodeSizeRequirement?
    /// Set by the pipeline when the source is read by ranges (a large video): the decoded bytes
    /// are only its first ones, and a decoder that reads ranges reads the rest through it.
    var rangedSource: RangedSource?

    /// Which of a file's EXIF and XMP a decode keeps. JPEG, PNG, WebP, AVIF and HEIC blocks are
    /// read; JPEG XL and TIFF metadata are not yet.
    public enum MetadataHandling: Sendable, Hashable {
        /// None (the default): outputs carry no metadata.
        case strip
        /// Only the copyright and author: EXIF `Copyright` and `Artist`, XMP `dc:rights` and
        /// `dc:creator`, as imgproxy's `keep_copyright` keeps them. No GPS, no camera data.
        case copyright
        /// All EXIF and XMP, GPS included, with the orientation set to 1 when the pixels were
        /// turned upright.
        case all
    }

    /// What a decode does with the colour profile a file states (an ICC profile, PNG
    /// `gAMA`/`cHRM`, CICP).
    public enum ColorProfileHandling: Sendable, Hashable {
        /// Pixels delivered in sRGB, converted from the file's profile by Little CMS (relative
        /// colorimetric, black-point compensation), as ImageIO and Android deliver display-ready
        /// pixels. ``ImageMetadata/colorProfile`` is nil.
        case convertToSRGB
        /// Pixels delivered as the file stores them, its profile in ``ImageMetadata/colorProfile``
        /// for encoders to embed. CMYK images are converted to sRGB all the same (an ``Image`` is RGBA).
        case keep
    }

    /// How a reduced-scale decode must cover ``targetSize``.
    public enum TargetMode: Sendable, Hashable {
        /// Both sides at least the target's: the image will be cropped or stretched to it.
        case fill
        /// At least the image's size fitted inside the target: the image will be shown whole in it.
        case fit
    }

    /// The default options.
    public init() {}

    /// The size a decode of an upright `width × height` image must cover, or nil for full size.
    public func requiredSize(width: Int, height: Int) -> PixelSize? {
        if let sizeRequirement {
            guard let size = sizeRequirement.size(width, height), size.width < width || size.height < height else { return nil }
            return size
        }
        guard let targetSize else {
            guard let limit = scaleDownPixelLimit, width * height > limit else { return nil }
            let scale = (Double(limit) / Double(width * height)).squareRoot()
            return PixelSize(width: Int((Double(width) * scale).rounded(.down)), height: Int((Double(height) * scale).rounded(.down)))
        }
        switch targetMode {
        case .fill:
            return targetSize.width < width || targetSize.height < height ? targetSize : nil
        case .fit:
            let scale = min(Double(targetSize.width) / Double(width), Double(targetSize.height) / Double(height))
            guard scale < 1 else { return nil }
            return PixelSize(width: Int((Double(width) * scale).rounded(.up)), height: Int((Double(height) * scale).rounded(.up)))
        }
    }

    /// The size a vector image of nominal size `width × height` is rendered at: what the first
    /// processor asks for, else ``targetSize`` covered (``TargetMode/fill``) or fitted
    /// (``TargetMode/fit``), up or down, else the nominal size.
    public func renderSize(width: Int, height: Int) -> PixelSize {
        if let sizeRequirement, let size = sizeRequirement.vectorSize(width, height) { return size }
        guard let targetSize, width > 0, height > 0 else { return PixelSize(width: width, height: height) }
        let scaleX = Double(targetSize.width) / Double(width), scaleY = Double(targetSize.height) / Double(height)
        let scale = targetMode == .fill ? max(scaleX, scaleY) : min(scaleX, scaleY)
        return PixelSize(width: max(1, Int((Double(width) * scale).rounded())), height: max(1, Int((Double(height) * scale).rounded())))
    }

    /// Throws `emptyImage` or `imageTooLarge` when a declared `width × height` is empty or over the
    /// limits. Decoders call it with the header's size before allocating pixels.
    public func check(width: Int, height: Int) throws(ImagoError) {
        guard width > 0, height > 0 else { throw ImagoError(.emptyImage(width: width, height: height), url: nil, stage: .decoding) }
        guard width <= maxSide, height <= maxSide else { throw Self.tooLarge(width, height, .side(maxSide)) }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maxPixels else { throw Self.tooLarge(width, height, .pixels(maxPixels)) }
    }

    /// Throws `imageTooLarge` naming ``maxFrames`` or ``maxTotalFramePixels`` when an animation of
    /// `frames` frames of `width × height` (already checked) would pass them.
    public func checkFrames(_ frames: Int, width: Int, height: Int) throws(ImagoError) {
        guard frames <= maxFrames else { throw Self.tooLarge(width, height, .frames(maxFrames)) }
        // width × height passed check(width:height:), so it is at most maxPixels.
        let (total, overflow) = frames.multipliedReportingOverflow(by: width * height)
        guard !overflow, total <= maxTotalFramePixels else { throw Self.tooLarge(width, height, .totalFramePixels(maxTotalFramePixels)) }
    }

    /// Throws `imageTooLarge` naming ``maxDecodedBytes`` when holding `buffers` RGBA buffers of
    /// `width × height` (already checked by ``check(width:height:)``, so the product fits) at once
    /// would pass it.
    public func checkMemory(_ buffers: Int, width: Int, height: Int) throws(ImagoError) {
        let (pixels, overflow) = buffers.multipliedReportingOverflow(by: width * height)
        let (bytes, overflow4) = pixels.multipliedReportingOverflow(by: 4)
        guard !overflow, !overflow4, bytes <= maxDecodedBytes else { throw Self.tooLarge(width, height, .decodedBytes(maxDecodedBytes)) }
    }

    private static func tooLarge(_ width: Int, _ height: Int, _ limit: DecodingLimit) -> ImagoError {
        ImagoError(.imageTooLarge(width: width, height: height, limit: limit), url: nil, stage: .decoding)
    }
}

/// A decoding limit an image went over, with the limit's value.
public enum DecodingLimit: Sendable, Hashable, CustomStringConvertible {
    /// ``DecodingOptions/maxPixels``.
    case pixels(Int)
    /// ``DecodingOptions/maxSide``.
    case side(Int)
    /// ``DecodingOptions/maxFrames``.
    case frames(Int)
    /// ``DecodingOptions/maxTotalFramePixels``.
    case totalFramePixels(Int)
    /// ``DecodingOptions/maxDecodedBytes``.
    case decodedBytes(Int)
    /// The pipeline's process-wide budget for concurrent decodes
    /// (``ImagePipeline/Configuration/decodeMemoryBudget``).
    case decodeMemoryBudget(Int)
    /// ``DecodingOptions/reservedBytes``: the decode found it needs `needed` bytes in all, past
    /// the `reserved` its estimate counted (the pipeline tries once to reserve the difference).
    case reservedBytes(reserved: Int, needed: Int)

    public var description: String {
        switch self {
        case .pixels(let value): "the limit of \(value) pixels (maxPixels)"
        case .side(let value): "the limit of \(value) pixels per side (maxSide)"
        case .frames(let value): "the limit of \(value) frames (maxFrames)"
        case .totalFramePixels(let value): "the limit of \(value) pixels over all frames (maxTotalFramePixels)"
        case .decodedBytes(let value): "the limit of \(value) bytes of pixels per decode (maxDecodedBytes)"
        case .decodeMemoryBudget(let value): "the pipeline's budget of \(value) bytes for concurrent decodes (decodeMemoryBudget)"
        case .reservedBytes(let reserved, let needed): "the \(reserved) bytes reserved for the decode, which needs \(needed) (reservedBytes)"
        }
    }
}
