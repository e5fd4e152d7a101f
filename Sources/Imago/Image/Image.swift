import Foundation

/// A decoded image: 8-bit RGBA pixels with straight (not premultiplied) alpha, row by row from the
/// top, 4 bytes per pixel and no row padding; one frame, or several for an animation.
public struct Image: Sendable {
    /// One frame of pixels and how long it shows.
    public struct Frame: Sendable {
        /// RGBA8 pixels, straight alpha, `width × height × 4` bytes.
        public var pixels: [UInt8]
        /// How long the frame shows; zero for a still image.
        public var duration: Duration

        /// Makes a frame.
        public init(pixels: [UInt8], duration: Duration = .zero) {
            self.pixels = pixels
            self.duration = duration
        }
    }

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The frames; at least one.
    public var frames: [Frame]
    /// How many times an animation plays; 0 means forever.
    public var loopCount: Int
    /// Where the pixels came from.
    public var metadata: ImageMetadata
    /// Pixels per point: 2 or 3 for a URL named `…@2x.png` / `…@3x.png`, a thumbnail's scale, else 1.
    public var scale: Double = 1
    /// The HDR gain map kept from the file (``DecodingOptions/gainMapHandling``), at its own scale;
    /// nil for an SDR picture or when the decode dropped it.
    public var gainMap: GainMap?

    /// Makes an image; `frames` must hold at least one frame of `width × height × 4` bytes.
    public init(width: Int, height: Int, frames: [Frame], loopCount: Int = 0, metadata: ImageMetadata) {
        precondition(!frames.isEmpty && frames.allSatisfy { $0.pixels.count == width * height * 4 }, "frames must match the size")
        self.width = width
        self.height = height
        self.frames = frames
        self.loopCount = loopCount
        self.metadata = metadata
    }

    /// The first frame's pixels.
    public var pixels: [UInt8] { frames[0].pixels }

    /// Whether there is more than one frame.
    public var isAnimated: Bool { frames.count > 1 }

    /// Bytes held by the pixels of all frames: what a memory cache should count.
    public var cost: Int { frames.reduce(0) { $0 + $1.pixels.count } + (gainMap?.cost ?? 0) }

    /// The RGBA value at (x, y) of the first frame.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let offset = (y * width + x) * 4
        let pixels = frames[0].pixels
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3])
    }
}

/// Facts about a decoded image that its pixels do not say.
public struct ImageMetadata: Sendable, Hashable {
    /// The encoded format.
    public var format: ImageFormat
    /// The pixel size stored in the file, before any scaled decode or orientation.
    public var originalWidth: Int
    /// The height stored in the file, before any scaled decode or orientation.
    public var originalHeight: Int
    /// The EXIF orientation the pixels were turned by (`.up` when none was applied).
    public var orientationApplied: ImageOrientation
    /// Whether any pixel may be transparent.
    public var hasAlpha: Bool
    /// The colour profile the pixels are in, which encoders embed; nil for sRGB. Set when the
    /// decode kept the file's profile (``DecodingOptions/ColorProfileHandling/keep``).
    public var colorProfile: ColorProfile?
    /// The colour profile the file stated (embedded, or built from PNG `gAMA`/`cHRM` or CICP),
    /// whether or not the pixels were converted from it; nil when it stated none.
    public var sourceColorProfile: ColorProfile?
    /// Bits per sample the file stores (8 for most; 16 for deep PNG and TIFF; 10 or 12 for HDR
    /// AVIF and HEIC), or nil when the decoder does not say. Decoded pixels are 8-bit whatever it is.
    public var bitsPerSample: Int?
    /// The EXIF block (a TIFF structure) the decode kept, which encoders write; see
    /// ``DecodingOptions/metadataHandling``. Nil by default.
    public var exif: Data?
    /// The XMP packet the decode kept, which encoders write. Nil by default.
    public var xmp: Data?

    /// The HDR gain map the file carries, as stored, whether or not the decode kept it
    /// (``Image/gainMap``); nil for an SDR file.
    public var sourceGainMap: StoredGainMap?

    /// The scale a reduced decode applied to every side when its last column and row cover only
    /// part of a pixel (a JPEG's DCT scaling: 1,100 rows at 3/8 are 413 rows covering 412.5), so
    /// that a resize maps the picture, not its rounded size; nil when the pixels cover exactly
    /// their own size (a full decode, or one resampled to its size, as WebP's).
    public var decodeScale: Double?
    /// What a video source declares, when the image is one of its frames (``VideoInfo``).
    public var video: VideoInfo?
    /// What a camera RAW source declares, and which of its pictures the decode delivered (``RAWInfo``).
    public var raw: RAWInfo?
    /// What a PDF source's document held and which of its pages were rendered; nil for other formats.
    public var pdf: PDFInfo?

    /// Whether the kept EXIF block has GPS data (a GPS IFD).
    public var exifHasGPS: Bool { exif.flatMap(EXIF.init)?.has(.gpsInfo) ?? false }

    /// Makes metadata.
    public init(
        format: ImageFormat, originalWidth: Int, originalHeight: Int, orientationApplied: ImageOrientation = .up, hasAlpha: Bool, bitsPerSample: Int? = nil
    ) {
        self.format = format
        self.originalWidth = originalWidth
        self.originalHeight = originalHeight
        self.orientationApplied = orientationApplied
        self.hasAlpha = hasAlpha
        self.bitsPerSample = bitsPerSample
    }
}

/// A gain map as a file stores it: what `imago info` and the server's `/info` report.
public struct StoredGainMap: Sendable, Hashable {
    /// Its width in pixels, as stored.
    public var width: Int
    /// Its height in pixels, as stored.
    public var height: Int
    /// 1 (grey) or 3 (a gain per channel).
    public var channelCount: Int
    /// The format of its picture (`jpeg` in an Ultra HDR JPEG).
    public var format: ImageFormat
    /// Where its metadata came from: `iso21496`, `hdrgm` (Adobe's XMP) or `apple` (Apple's
    /// `HDRGainMapHeadroom` XMP, iOS 17 and earlier).
    public var metadataSource: String
    /// How its values become gains.
    public var metadata: GainMapMetadata

    /// Makes a description.
    public init(width: Int, height: Int, channelCount: Int, format: ImageFormat, metadataSource: String, metadata: GainMapMetadata) {
        self.width = width
        self.height = height
        self.channelCount = channelCount
        self.format = format
        self.metadataSource = metadataSource
        self.metadata = metadata
    }
}

/// An encoded image format.
public struct ImageFormat: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The format's name, lower case: `jpeg`, `png`, `webp`, `gif`, or a custom decoder's.
    public let rawValue: String
    /// Makes a format from its name (a custom decoder's own, say).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// JPEG.
    public static let jpeg = ImageFormat(rawValue: "jpeg")
    /// PNG.
    public static let png = ImageFormat(rawValue: "png")
    /// WebP, still or animated.
    public static let webp = ImageFormat(rawValue: "webp")
    /// GIF, still or animated.
    public static let gif = ImageFormat(rawValue: "gif")
    /// Netpbm: PBM, PGM, PPM or PAM.
    public static let pnm = ImageFormat(rawValue: "pnm")
    /// Windows and OS/2 bitmap.
    public static let bmp = ImageFormat(rawValue: "bmp")
    /// Truevision TGA.
    public static let tga = ImageFormat(rawValue: "tga")
    /// JPEG XL.
    public static let jxl = ImageFormat(rawValue: "jxl")
    /// High Efficiency Image File Format (HEIC).
    public static let heif = ImageFormat(rawValue: "heif")
    /// AV1 Image File Format.
    public static let avif = ImageFormat(rawValue: "avif")
    /// Tagged Image File Format.
    public static let tiff = ImageFormat(rawValue: "tiff")
    /// Scalable Vector Graphics, rendered to pixels.
    public static let svg = ImageFormat(rawValue: "svg")
    /// Windows icon or cursor (ICO, CUR).
    public static let ico = ImageFormat(rawValue: "ico")
    /// MP4 video (ISO base media), read for a frame.
    public static let mp4 = ImageFormat(rawValue: "mp4")
    /// QuickTime video, read for a frame.
    public static let mov = ImageFormat(rawValue: "mov")
    /// WebM video, read for a frame.
    public static let webm = ImageFormat(rawValue: "webm")
    /// Matroska video, read for a frame.
    public static let mkv = ImageFormat(rawValue: "mkv")
    /// AVI video, read for a frame.
    public static let avi = ImageFormat(rawValue: "avi")
    /// Adobe Digital Negative, a camera RAW format.
    public static let dng = ImageFormat(rawValue: "dng")
    /// Canon CR2 camera RAW.
    public static let cr2 = ImageFormat(rawValue: "cr2")
    /// Canon CR3 camera RAW.
    public static let cr3 = ImageFormat(rawValue: "cr3")
    /// Nikon NEF camera RAW.
    public static let nef = ImageFormat(rawValue: "nef")
    /// Sony ARW camera RAW.
    public static let arw = ImageFormat(rawValue: "arw")
    /// Olympus ORF camera RAW.
    public static let orf = ImageFormat(rawValue: "orf")
    /// Fujifilm RAF camera RAW.
    public static let raf = ImageFormat(rawValue: "raf")
    /// Panasonic RW2 camera RAW.
    public static let rw2 = ImageFormat(rawValue: "rw2")
    /// Pentax PEF camera RAW.
    public static let pef = ImageFormat(rawValue: "pef")
    /// Samsung SRW camera RAW.
    public static let srw = ImageFormat(rawValue: "srw")
    /// Portable Document Format, a page rendered to pixels.
    public static let pdf = ImageFormat(rawValue: "pdf")

    /// The format's name.
    public var description: String { rawValue }
}

/// A size in pixels.
public struct PixelSize: Sendable, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Makes a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The size turned by a quarter.
    public var turned: PixelSize { PixelSize(width: height, height: width) }
}

extension StoredGainMap {
    /// What `imago info --json` (camel case) and the server's `/info` (snake case, by the
    /// encoder's key strategy) report of a stored gain map: one value, so the two cannot differ.
    public struct Facts: Sendable, Hashable, Codable {
        /// Its size and channels as stored.
        public var width: Int
        /// Its height in pixels, as stored.
        public var height: Int
        /// 1 (grey) or 3.
        public var channels: Int
        /// The format of its picture.
        public var format: String
        /// `iso21496`, `hdrgm` or `apple`.
        public var metadata: String
        /// The largest boost it encodes, as a linear factor over SDR white.
        public var maxBoost: Double
        /// The display headroom at which it applies fully, as a linear factor.
        public var headroom: Double
        /// log2 minimum per channel, as the metadata states it.
        public var gainMapMin: [Double]
        /// log2 maximum per channel.
        public var gainMapMax: [Double]
        /// The gamma per channel.
        public var gamma: [Double]
        /// The SDR offset per channel.
        public var offsetSDR: [Double]
        /// The HDR offset per channel.
        public var offsetHDR: [Double]
        /// log2 headroom of the base (SDR) picture.
        public var hdrCapacityMin: Double
        /// log2 headroom of the alternate (HDR) picture.
        public var hdrCapacityMax: Double
    }

    /// The facts reported of it.
    public var facts: Facts {
        let meta = metadata
        return Facts(
            width: width, height: height, channels: channelCount, format: format.rawValue, metadata: metadataSource, maxBoost: meta.maxBoost,
            headroom: meta.hdrCapacityMax, gainMapMin: meta.gainMapMin, gainMapMax: meta.gainMapMax, gamma: meta.gamma, offsetSDR: meta.baseOffset,
            offsetHDR: meta.alternateOffset, hdrCapacityMin: meta.baseHeadroom, hdrCapacityMax: meta.alternateHeadroom)
    }
}
