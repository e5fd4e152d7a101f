import Foundation
import Imago

/// A format the server writes, chosen by the path's extension or `format` option, else by the
/// client's `Accept` and the image.
public enum OutputFormat: String, Sendable, Hashable {
    /// JPEG (TurboJPEG).
    case jpeg
    /// PNG.
    case png
    /// WebP (libwebp).
    case webp
    /// GIF (giflib, one palette of at most 256 colours; animations kept).
    case gif
    /// AVIF (libavif), when Imago was built with it.
    case avif
    /// BMP (24-bit, or 32-bit with alpha).
    case bmp
    /// ICO: one PNG entry of at most 256×256 (a larger result is fitted into it).
    case ico
    /// TIFF (libtiff, deflate), when Imago was built with it.
    case tiff
    /// JPEG XL (libjxl, effort 4), when Imago was built with it.
    case jxl
    /// HEIC (libheif with x265), when Imago was built with it.
    case heif
    /// SVG: an SVG source passed through, sanitised (``Imago/SVGSanitizer``); never encoded.
    case svg
    /// JSON: thumbor's `meta/` answer about an image; never an image.
    case json

    /// The format an extension names (`jpg`, `jpeg`, `png`, `webp`, `gif`, `bmp`, `ico`, `svg`, and
    /// `tiff`, `avif`, `jxl` and `heic` when Imago was built with them): `svg` or a format the library's table says Imago writes.
    public init?(extension text: String) {
        if text.lowercased() == "svg" {
            self = .svg
            return
        }
        guard let format = ImageFormat(fileExtension: text), let output = OutputFormat(rawValue: format.rawValue) else { return nil }
        self = output
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
        guard let row = ImageFormat.table.first(where: { $0.mimeType == mimeType }), let format = OutputFormat(rawValue: row.format.rawValue) else {
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

    /// The library's encoder at `quality` (1…100), otherwise as `settings` say (the server's
    /// ``ServerConfiguration/encoding``).
    func encoder(quality: Int, settings: ImageFormat.EncoderSettings) -> any ImageEncoding {
        var settings = settings
        settings.quality = quality
        // SVG and JSON are never encoded (written as they are); every other case is one Imago writes.
        return imageFormat?.encoder(settings) ?? PNGEncoder()
    }
}
