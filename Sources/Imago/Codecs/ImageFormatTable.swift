import Foundation

/// One row of Imago's format table: what the library, the CLI and the server's dialects and
/// gallery all know of a format, so that none keeps a list of its own. A format is told from
/// bytes by the registered decoders (``ImageFormat/sniff(_:decoders:)``), never by its extension.
public struct ImageFormatInfo: Sendable, Hashable {
    /// Makes the format's encoder set up by the settings; nil when Imago does not write it.
    public typealias EncoderMaker = @Sendable (ImageFormat.EncoderSettings) -> any ImageEncoding
    /// Makes the format's decoder.
    public typealias DecoderMaker = @Sendable () -> any ImageDecoding

    /// The format.
    public let format: ImageFormat
    /// The file name extensions it goes by, lower case; the first is the one Imago writes.
    public let extensions: [String]
    /// Its media type.
    public let mimeType: String
    /// Whether a lossy quality (1…100) changes what its encoder writes.
    public let takesQuality: Bool
    /// Whether it keeps transparency.
    public let carriesAlpha: Bool
    /// Whether it keeps every frame of an animation.
    public let carriesAnimation: Bool
    /// The largest side its encoder writes (ICO's 256, HEIC's 16,384); nil when the format sets none.
    public let maxSide: Int?
    /// Imago's encoder for it (nil when Imago does not write it, or was built without its library):
    /// the one place encoders are chosen, for the library, the CLI and the server.
    public let makeEncoder: EncoderMaker?

    /// Imago's decoder for it (nil when Imago was built without its library): what
    /// ``DecoderRegistry/standard(families:)`` registers.
    public let makeDecoder: DecoderMaker?

    /// What kind of source it is: a still image (or animation) format, read by default, or a
    /// video, read only when asked for (``DecoderRegistry/standard(families:)``).
    public let family: Family

    /// Whether Imago writes this format.
    public var isWritten: Bool { makeEncoder != nil }

    /// Kinds of source, each with its own switch where a large C library reads it.
    public enum Family: String, Sendable, Hashable, CaseIterable {
        /// Image formats: read by default.
        case still
        /// Video containers, read for one frame (FFmpeg): off by default, as in imgproxy.
        case video
        /// Camera RAW files (LibRaw): off by default, as in imgproxy (`IMGPROXY_ENABLE_RAW_FORMATS`).
        case raw
        /// Paged documents rendered to pixels (PDF, by Poppler in a child process): off by default.
        case document
    }

    init(
        format: ImageFormat, extensions: [String], mimeType: String, takesQuality: Bool, carriesAlpha: Bool, carriesAnimation: Bool,
        maxSide: Int? = nil, family: Family = .still, decoder: DecoderMaker?, encoder: EncoderMaker? = nil
    ) {
        self.family = family
        (self.format, self.extensions, self.mimeType) = (format, extensions, mimeType)
        (self.takesQuality, self.carriesAlpha, self.carriesAnimation, self.maxSide) = (takesQuality, carriesAlpha, carriesAnimation, maxSide)
        makeEncoder = encoder
        makeDecoder = decoder
    }

    /// Rows are the same when they describe the same format.
    public static func == (left: ImageFormatInfo, right: ImageFormatInfo) -> Bool { left.format == right.format }

    /// Hashes the format.
    public func hash(into hasher: inout Hasher) { hasher.combine(format) }
}

extension ImageFormat {
    /// Every format Imago reads or writes, in the order a decoder is asked whether it reads the
    /// bytes (TGA, with no magic number, last).
    public static let table: [ImageFormatInfo] = [
        ImageFormatInfo(
            format: .jpeg, extensions: ["jpg", "jpeg"], mimeType: "image/jpeg", takesQuality: true, carriesAlpha: false, carriesAnimation: false,
            decoder: { JPEGDecoder() }, encoder: { JPEGEncoder(quality: $0.quality, progressive: $0.progressive, optimizesCoding: $0.optimizesCoding) }),
        ImageFormatInfo(
            format: .png, extensions: ["png"], mimeType: "image/png", takesQuality: false, carriesAlpha: true, carriesAnimation: false,
            decoder: { PNGDecoder() },
            encoder: { PNGEncoder(compressionLevel: $0.compressionLevel, interlaced: $0.interlaced, paletteColors: $0.paletteColors) }),
        ImageFormatInfo(
            format: .webp, extensions: ["webp"], mimeType: "image/webp", takesQuality: true, carriesAlpha: true, carriesAnimation: true,
            decoder: { WebPDecoder() },
            encoder: {
                WebPEncoder(
                    quality: Float($0.quality), lossless: $0.lossless, nearLossless: $0.nearLossless, smartSubsample: $0.smartSubsample,
                    effort: $0.webpEffort, preset: $0.webpPreset)
            }),
        ImageFormatInfo(
            format: .gif, extensions: ["gif"], mimeType: "image/gif", takesQuality: false, carriesAlpha: true, carriesAnimation: true,
            decoder: { GIFDecoder() }, encoder: { _ in GIFEncoder() }),
        ImageFormatInfo(
            format: .svg, extensions: ["svg"], mimeType: "image/svg+xml", takesQuality: false, carriesAlpha: true, carriesAnimation: false, decoder: svgDecoder),
        ImageFormatInfo(
            format: .jxl, extensions: ["jxl"], mimeType: "image/jxl", takesQuality: true, carriesAlpha: true, carriesAnimation: true, decoder: jxlDecoder,
            encoder: jxlEncoder),
        ImageFormatInfo(
            format: .heif, extensions: ["heic", "heif"], mimeType: "image/heif", takesQuality: true, carriesAlpha: true, carriesAnimation: false,
            maxSide: 16_384, decoder: heifDecoder, encoder: heifEncoder),
        ImageFormatInfo(
            format: .avif, extensions: ["avif"], mimeType: "image/avif", takesQuality: true, carriesAlpha: true, carriesAnimation: false, decoder: avifDecoder,
            encoder: avifEncoder),
        raw(.dng, extensions: ["dng"], mimeType: "image/x-adobe-dng"),
        raw(.cr2, extensions: ["cr2"], mimeType: "image/x-canon-cr2"),
        raw(.cr3, extensions: ["cr3"], mimeType: "image/x-canon-cr3"),
        raw(.nef, extensions: ["nef", "nrw"], mimeType: "image/x-nikon-nef"),
        raw(.arw, extensions: ["arw", "srf", "sr2"], mimeType: "image/x-sony-arw"),
        raw(.orf, extensions: ["orf"], mimeType: "image/x-olympus-orf"),
        raw(.raf, extensions: ["raf"], mimeType: "image/x-fuji-raf"),
        raw(.rw2, extensions: ["rw2", "rwl"], mimeType: "image/x-panasonic-rw2"),
        raw(.pef, extensions: ["pef"], mimeType: "image/x-pentax-pef"),
        raw(.srw, extensions: ["srw"], mimeType: "image/x-samsung-srw"),
        ImageFormatInfo(
            format: .tiff, extensions: ["tiff", "tif"], mimeType: "image/tiff", takesQuality: false, carriesAlpha: true, carriesAnimation: false,
            decoder: tiffDecoder, encoder: tiffEncoder),
        ImageFormatInfo(
            format: .pnm, extensions: ["pnm", "pbm", "pgm", "ppm", "pam"], mimeType: "image/x-portable-anymap", takesQuality: false, carriesAlpha: true,
            carriesAnimation: false, decoder: { PNMDecoder() }, encoder: { _ in PNMEncoder() }),
        ImageFormatInfo(
            format: .bmp, extensions: ["bmp"], mimeType: "image/bmp", takesQuality: false, carriesAlpha: true, carriesAnimation: false,
            decoder: { BMPDecoder() }, encoder: { _ in BMPEncoder() }),
        ImageFormatInfo(
            format: .ico, extensions: ["ico", "cur"], mimeType: "image/x-icon", takesQuality: false, carriesAlpha: true, carriesAnimation: false,
            maxSide: 256, decoder: { ICODecoder() }, encoder: { _ in ICOEncoder() }),
        ImageFormatInfo(
            format: .tga, extensions: ["tga"], mimeType: "image/x-tga", takesQuality: false, carriesAlpha: true, carriesAnimation: false,
            decoder: { TGADecoder() }),
        ImageFormatInfo(
            format: .pdf, extensions: ["pdf"], mimeType: "application/pdf", takesQuality: false, carriesAlpha: false, carriesAnimation: false,
            family: .document, decoder: pdfDecoder),
        video(.mp4, extensions: ["mp4", "m4v", "3gp"], mimeType: "video/mp4"),
        video(.mov, extensions: ["mov", "qt"], mimeType: "video/quicktime"),
        video(.webm, extensions: ["webm"], mimeType: "video/webm"),
        video(.mkv, extensions: ["mkv"], mimeType: "video/x-matroska"),
        video(.avi, extensions: ["avi"], mimeType: "video/x-msvideo"),
    ]

    /// A camera RAW format's row: read, never written. RAW rows come before TIFF's, whose
    /// signature most of them share.
    private static func raw(_ format: ImageFormat, extensions: [String], mimeType: String) -> ImageFormatInfo {
        #if RAW
            let decoder: ImageFormatInfo.DecoderMaker? = { RAWDecoder(format: format)! }
        #else
            let decoder: ImageFormatInfo.DecoderMaker? = nil
        #endif
        return ImageFormatInfo(
            format: format, extensions: extensions, mimeType: mimeType, takesQuality: false, carriesAlpha: false, carriesAnimation: false, family: .raw,
            decoder: decoder)
    }

    /// A video container's row: read for a frame, never written.
    private static func video(_ format: ImageFormat, extensions: [String], mimeType: String) -> ImageFormatInfo {
        #if Video
            let decoder: ImageFormatInfo.DecoderMaker? = { VideoDecoder(format: format)! }
        #else
            let decoder: ImageFormatInfo.DecoderMaker? = nil
        #endif
        return ImageFormatInfo(
            format: format, extensions: extensions, mimeType: mimeType, takesQuality: false, carriesAlpha: false, carriesAnimation: false, family: .video,
            decoder: decoder)
    }

    // The decoders and encoders of formats behind a trait: nil when Imago was built without their library.
    #if AVIF
        private static let avifDecoder: ImageFormatInfo.DecoderMaker? = { AVIFDecoder() }
        private static let avifEncoder: ImageFormatInfo.EncoderMaker? = { AVIFEncoder(quality: $0.quality, speed: $0.speed) }
    #else
        private static let avifDecoder: ImageFormatInfo.DecoderMaker? = nil
        private static let avifEncoder: ImageFormatInfo.EncoderMaker? = nil
    #endif
    #if HEIF
        private static let heifDecoder: ImageFormatInfo.DecoderMaker? = { HEIFDecoder() }
        private static let heifEncoder: ImageFormatInfo.EncoderMaker? = { HEIFEncoder(quality: $0.quality, lossless: $0.lossless) }
    #else
        private static let heifDecoder: ImageFormatInfo.DecoderMaker? = nil
        private static let heifEncoder: ImageFormatInfo.EncoderMaker? = nil
    #endif
    #if JXL
        private static let jxlDecoder: ImageFormatInfo.DecoderMaker? = { JXLDecoder() }
        private static let jxlEncoder: ImageFormatInfo.EncoderMaker? = { JXLEncoder(quality: $0.quality, effort: $0.effort, lossless: $0.lossless) }
    #else
        private static let jxlDecoder: ImageFormatInfo.DecoderMaker? = nil
        private static let jxlEncoder: ImageFormatInfo.EncoderMaker? = nil
    #endif
    #if TIFF
        private static let tiffDecoder: ImageFormatInfo.DecoderMaker? = { TIFFDecoder() }
        private static let tiffEncoder: ImageFormatInfo.EncoderMaker? = { _ in TIFFEncoder() }
    #else
        private static let tiffDecoder: ImageFormatInfo.DecoderMaker? = nil
        private static let tiffEncoder: ImageFormatInfo.EncoderMaker? = nil
    #endif
    #if PDF
        private static let pdfDecoder: ImageFormatInfo.DecoderMaker? = { PDFDecoder() }
    #else
        private static let pdfDecoder: ImageFormatInfo.DecoderMaker? = nil
    #endif
    #if SVG
        private static let svgDecoder: ImageFormatInfo.DecoderMaker? = { SVGDecoder() }
    #else
        private static let svgDecoder: ImageFormatInfo.DecoderMaker? = nil
    #endif

    /// The formats Imago writes, in ``table``'s order.
    public static var written: [ImageFormat] { table.filter(\.isWritten).map(\.format) }

    /// The extensions Imago writes as a help text lists them: `jpg, png, …, heic or ico`.
    public static func writtenExtensions(separator: String = ", ", last: String = " or ") -> String {
        let names = written.map(\.preferredExtension)
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: separator) + last + names[names.count - 1]
    }

    /// This format's row of ``table``, nil for a custom decoder's format.
    public var info: ImageFormatInfo? { Self.table.first { $0.format == self } }

    /// The format an extension names (any of ``table``'s, any case), read or written, or nil.
    public static func named(_ name: String) -> ImageFormat? {
        let name = name.lowercased()
        return table.first { $0.extensions.contains(name) || $0.format.rawValue == name }?.format
    }

    /// Every extension of ``table``: the files Imago reads.
    public static var readableExtensions: Set<String> { Set(table.flatMap(\.extensions)) }

    /// The format of `data`, told by the decoder in `decoders` that recognises it; nil when none does.
    public static func sniff(_ data: Data, decoders: DecoderRegistry) -> ImageFormat? {
        decoders.decoder(for: data)?.format
    }

    /// The media type (``ImageFormatInfo/mimeType``), `application/octet-stream` for a format not in the table.
    public var mimeType: String { info?.mimeType ?? "application/octet-stream" }

    /// The extension Imago gives a file of this format (`jpg` for JPEG, `heic` for HEIF).
    public var preferredExtension: String { info?.extensions.first ?? rawValue }

    /// How an encoder is set up beyond the format: the quality and each encoder's own choices,
    /// each ignored by encoders it does not concern.
    public struct EncoderSettings: Sendable, Hashable, Codable {
        /// Quality 1…100 for lossy formats.
        public var quality: Int
        /// Progressive JPEG.
        public var progressive = false
        /// JPEG's Huffman tables computed for the image (smaller, an extra pass); on by default,
        /// as imgproxy has libvips write.
        public var optimizesCoding = true
        /// Lossless WebP, JPEG XL or HEIC.
        public var lossless = false
        /// WebP lossless with colours nudged as far as the quality allows.
        public var nearLossless = false
        /// WebP's sharper RGB→YUV conversion.
        public var smartSubsample = false
        /// WebP's method 0…6 (slower, smaller); imgproxy's default, 4.
        public var webpEffort = 4
        /// WebP's tuning for the kind of picture.
        public var webpPreset = WebPEncoder.Preset.default
        /// PNG's compression level 0…12 (``PNGEncoder/compressionLevel``).
        public var compressionLevel = PNGEncoder().compressionLevel
        /// Adam7-interlaced PNG.
        public var interlaced = false
        /// PNG reduced to a palette of at most this many colours (2…256); nil keeps every colour.
        public var paletteColors: Int?
        /// AVIF's encoder speed 0…10 (faster, larger).
        public var speed = 6
        /// JPEG XL's effort 1…9 (slower, smaller); imgproxy's default, 4.
        public var effort = 4

        /// Settings at `quality` with the encoders' defaults.
        public init(quality: Int = 85) {
            self.quality = quality
        }
    }

    /// Imago's encoder for this format set up by `settings` (its row's ``ImageFormatInfo/makeEncoder``),
    /// or nil when Imago does not write it.
    public func encoder(_ settings: EncoderSettings) -> (any ImageEncoding)? {
        info?.makeEncoder?(settings)
    }
}
