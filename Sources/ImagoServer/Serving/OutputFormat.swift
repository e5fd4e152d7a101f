import Foundation
import Imago

/// What the server answers with: a format of the library's table that Imago writes
/// (``Imago/ImageFormat/table``, which says everything about it), or one of the two answers that
/// are not encoded images, `svg` (an SVG source passed through, sanitised) and `json`. Chosen by
/// the path's extension or `format` option, else by the client's `Accept` and the image.
public struct OutputFormat: RawRepresentable, Sendable, Hashable, Codable, CodingKeyRepresentable {
    /// The format's name: the library's ``Imago/ImageFormat`` raw value, `svg` or `json`.
    public let rawValue: String

    /// The format named `rawValue` (`jpeg`, `heif`, …, `svg`, `json`), or nil when Imago does not
    /// write it.
    public init?(rawValue: String) {
        if rawValue == "svg" || rawValue == "json" {
            self.rawValue = rawValue
            return
        }
        guard let format = ImageFormat.table.first(where: { $0.format.rawValue == rawValue }), format.isWritten else { return nil }
        self.rawValue = rawValue
    }

    /// `format`, when Imago writes it.
    public init?(_ format: ImageFormat) { self.init(rawValue: format.rawValue) }

    private init(named rawValue: String) { self.rawValue = rawValue }

    /// JPEG (TurboJPEG).
    public static let jpeg = OutputFormat(named: ImageFormat.jpeg.rawValue)
    /// PNG.
    public static let png = OutputFormat(named: ImageFormat.png.rawValue)
    /// WebP (libwebp).
    public static let webp = OutputFormat(named: ImageFormat.webp.rawValue)
    /// GIF (giflib, one palette of at most 256 colours; animations kept).
    public static let gif = OutputFormat(named: ImageFormat.gif.rawValue)
    /// AVIF (libavif), when Imago was built with it.
    public static let avif = OutputFormat(named: ImageFormat.avif.rawValue)
    /// BMP (24-bit, or 32-bit with alpha).
    public static let bmp = OutputFormat(named: ImageFormat.bmp.rawValue)
    /// ICO: one PNG entry of at most 256×256 (a larger result is fitted into it).
    public static let ico = OutputFormat(named: ImageFormat.ico.rawValue)
    /// TIFF (libtiff, deflate), when Imago was built with it.
    public static let tiff = OutputFormat(named: ImageFormat.tiff.rawValue)
    /// JPEG XL (libjxl), when Imago was built with it.
    public static let jxl = OutputFormat(named: ImageFormat.jxl.rawValue)
    /// HEIC (libheif with x265), when Imago was built with it.
    public static let heif = OutputFormat(named: ImageFormat.heif.rawValue)
    /// SVG: an SVG source passed through, sanitised (``Imago/SVGSanitizer``); never encoded.
    public static let svg = OutputFormat(named: "svg")
    /// JSON: thumbor's `meta/` and `/info`'s answers about an image; never an image.
    public static let json = OutputFormat(named: "json")

    /// The format an extension names: `svg`, or any extension of a format the library's table
    /// says Imago writes (`jpg`, `heic`, `tif`, …).
    public init?(extension text: String) {
        if text.lowercased() == "svg" {
            self = .svg
            return
        }
        guard let format = ImageFormat(fileExtension: text) else { return nil }
        self.init(format)
    }

    /// The media type (`image/jpeg`, …, `image/svg+xml`), for `Content-Type`.
    public var mimeType: String { self == .json ? "application/json" : ImageFormat(rawValue: rawValue).mimeType }

    /// The media types an `Accept` header names explicitly, without those it gives `q=0`.
    public static func acceptedTypes(_ accept: String?) -> Set<String> {
        var types = Set<String>()
        for range in (accept ?? "").prefix(4096).split(separator: ",") {
            let parts = range.split(separator: ";")
            guard let type = parts.first?.trimmingCharacters(in: .whitespaces).lowercased(), !type.isEmpty else { continue }
            if !parts.dropFirst().contains(where: isZeroQuality) { types.insert(type) }
        }
        return types
    }

    /// Whether a media range's parameter is `q=0` (`q=0.000` too, spaces allowed): a type refused.
    private static func isZeroQuality(_ parameter: Substring) -> Bool {
        let text = parameter.filter { $0 != " " && $0 != "\t" }.lowercased()
        guard text.hasPrefix("q=0") else { return false }
        let rest = text.dropFirst(3)
        return rest.isEmpty || (rest.first == "." && rest.dropFirst().allSatisfy { $0 == "0" })
    }

    /// The formats a client's `Accept` can bring, in imgproxy 4's order of preference: JPEG XL,
    /// AVIF, WebP (those Imago was built to write).
    public static let negotiable: [OutputFormat] = [.jxl, .avif, .webp].filter { $0.imageFormat?.encoder(.init()) != nil }

    /// imgproxy 4's choice (`determineOutputFormat`): with a format `named` by the URL, the first
    /// of `enforced` that suits the result, else the named one; without, the first of `offered`
    /// that suits it, else the source's own format when it is one of `preferred`
    /// (`IMGPROXY_PREFERRED_FORMATS`), else the first preferred format that keeps the result's
    /// animation and transparency, else the first preferred one. JPEG XL and AVIF are not chosen
    /// for an animated result (imgproxy writes neither animated).
    public static func negotiate(
        named: OutputFormat? = nil, offered: [OutputFormat], enforced: [OutputFormat] = [], source: ImageFormat? = nil, hasAlpha: Bool,
        animated: Bool = false, preferred: [OutputFormat] = defaultPreferred
    ) -> OutputFormat {
        let suits = { (format: OutputFormat) in !animated || format == .webp }
        if let named { return enforced.first(where: suits) ?? named }
        if let format = offered.first(where: suits) { return format }
        let encoded = preferred.filter { $0.isEncoded }
        let preferred = encoded.isEmpty ? defaultPreferred : encoded
        if let source, let kept = OutputFormat(extension: source.rawValue), preferred.contains(kept) { return kept }
        let fits = { (format: OutputFormat) in (!hasAlpha || format.hasAlpha) && (!animated || format.imageFormat?.info?.carriesAnimation == true) }
        return preferred.first(where: fits) ?? preferred[0]
    }

    /// The formats a source keeps by default: the web's (a WebP source gives WebP and a GIF one
    /// GIF; a BMP or ICO source gives PNG or JPEG). (imgproxy's own default is `jpeg,png,gif`; `IMAGO_PREFERRED_FORMATS=jpeg,png,gif`
    /// gives its answers.)
    public static var defaultPreferred: [OutputFormat] {
        #if AVIF
            [.jpeg, .png, .webp, .gif, .avif]
        #else
            [.jpeg, .png, .webp, .gif]
        #endif
    }

    /// Whether Imago encodes pixels to this format (every one but SVG, passed through, and JSON).
    var isEncoded: Bool { self != .svg && self != .json }

    /// The format of a media type this enum's ``mimeType`` gives, or nil.
    public init?(mimeType: String) {
        if mimeType == "application/json" {
            self = .json
            return
        }
        guard let row = ImageFormat.table.first(where: { $0.mimeType == mimeType }), let format = OutputFormat(row.format) else {
            return nil
        }
        self = format
    }

    /// Whether the format keeps transparency (JPEG does not: a transparent image is flattened).
    public var hasAlpha: Bool { imageFormat?.info?.carriesAlpha ?? true }

    /// The file name extension for `Content-Disposition`.
    public var fileExtension: String { ImageFormat(rawValue: rawValue).preferredExtension }

    /// The library's name for this format (nil for SVG and JSON, which are not encoded).
    var imageFormat: ImageFormat? { isEncoded ? ImageFormat(rawValue: rawValue) : nil }

    /// Whether its encoder takes a quality (the table's ``Imago/ImageFormatInfo/takesQuality``):
    /// auto quality and `max_bytes` search only these; others are encoded once.
    var takesQuality: Bool { imageFormat?.info?.takesQuality ?? false }

    /// The library's encoder at `quality` (1…100), otherwise as `settings` say (the server's
    /// ``ServerConfiguration/encoding``).
    func encoder(quality: Int, settings: ImageFormat.EncoderSettings) -> any ImageEncoding {
        var settings = settings
        settings.quality = quality
        // SVG and JSON are never encoded (written as they are); every other case is one Imago writes.
        return imageFormat?.encoder(settings) ?? PNGEncoder()
    }
}
