import Foundation
import Imago

/// What a thumbor URL's filters say of the answer rather than the pixels: its format, quality,
/// size bound, `Cache-Control` and metadata, and the pre-load filters' focal points and image.
struct ThumborPlan: Sendable {
    /// `format(name)`: the last one given; nil when none names a format thumbor knows.
    var format: String?
    /// Whether a `format(…)` filter appears at all (it turns `Vary: Accept` off, as in thumbor).
    var hasFormatFilter = false
    var quality: Int?
    var maxBytes: Int?
    var maxAge: Int?
    /// `autojpg(…)`; nil for the server's (thumbor's `AUTO_PNG_TO_JPG`, off).
    var autoJPG: Bool?
    var stripICC = false
    /// The image after `extract_focal()`, which takes it from a nested thumbor URL.
    var image: String
    /// Focal points from `focal()` and `extract_focal()`.
    var focalPoints: [FocalPoint] = []
    /// The URLs of the images `watermark` and `frame` place.
    var overlayURLs: [String] = []

    init(url: ThumborURL, filters: [ThumborFilter]) {
        image = url.image
        for filter in filters {
            switch filter {
            case .format(let name):
                hasFormatFilter = true
                format = name
            case .quality(let value): quality = value
            case .maxBytes(let value): maxBytes = value
            case .maxAge(let value): maxAge = value
            case .autoJPG(let enabled): autoJPG = enabled
            case .stripICC: stripICC = true
            case .focal(let left, let top, let right, let bottom):
                let (width, height) = (right - left, bottom - top)
                if width != 0, height != 0 { focalPoints.append(.square(left: left, top: top, width: width, height: height, origin: "Explicit")) }
            case .extractFocal:
                if let nested = Self.extractFocal(image) {
                    focalPoints.append(
                        .square(
                            left: nested.left, top: nested.top, width: nested.right - nested.left, height: nested.bottom - nested.top,
                            origin: "Original Extraction"))
                    image = nested.image
                }
            case .watermark(let mark): overlayURLs.append(mark.url)
            case .frame(let url): overlayURLs.append(url)
            default: break
            }
        }
    }

    /// The plan for a GIF source, which thumbor runs no post-transform filter on (see
    /// ``ThumborTransformation``): without the format, quality, size bound and `autojpg` they set.
    var forGIFSource: ThumborPlan {
        var plan = self
        (plan.format, plan.quality, plan.maxBytes, plan.autoJPG) = (nil, nil, nil, nil)
        return plan
    }

    /// `extract_focal`: the image is itself a thumbor URL (after a domain); the innermost one with
    /// a manual crop gives the crop as a focal point and its own image (at most ten levels).
    static func extractFocal(_ image: String) -> (image: String, left: Int, top: Int, right: Int, bottom: Int)? {
        var text = image
        for _ in 0..<10 {
            // thumbor's `^(https?://)?.*?/`: the scheme and everything to the first slash after it.
            var rest = Substring(text)
            if rest.hasPrefix("http://") { rest = rest.dropFirst(7) } else if rest.hasPrefix("https://") { rest = rest.dropFirst(8) }
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            rest = rest[rest.index(after: slash)...]
            guard let nested = try? ThumborURL(parsing: String(rest)), nested.unsafe || nested.signature != nil else { return nil }
            if let crop = nested.crop { return (nested.image, crop.left, crop.top, crop.right, crop.bottom) }
            text = nested.image
        }
        return nil
    }

    /// The answer's format for an image from a `source` format, as thumbor's handler chooses it:
    /// the `format` filter, else WebP when automatic and accepted (not for an animation, which
    /// thumbor keeps in its format), else JPEG for a PNG without transparency when `autojpg`
    /// says so (or, without it, `autoPNGToJPG`: thumbor's `AUTO_PNG_TO_JPG`), else the source's own (TIFF and SVG as PNG, an unknown
    /// one as JPEG). A format thumbor 7.8 writes only with a plugin (HEIF, JPEG XL), though Imago
    /// writes it, falls back as thumbor without the plugin does: to the source's.
    func outputFormat(
        source: ImageFormat, transparent: Bool, animated: Bool, autoWebP: Bool, acceptsWebP: Bool, autoPNGToJPG: Bool = false
    ) -> OutputFormat {
        if let format, let chosen = Self.writable(format) { return chosen }
        if format == nil, autoWebP, acceptsWebP, !animated { return .webp }
        if autoJPG ?? autoPNGToJPG, source == .png, !transparent { return .jpeg }
        return Self.writable(source.rawValue) ?? .jpeg
    }

    private static func writable(_ name: String) -> OutputFormat? {
        switch name {
        case "jpeg", "jpg": .jpeg
        case "png", "tiff", "svg": .png  // thumbor writes TIFF and SVG sources as PNG
        case "gif": .gif
        case "webp": .webp
        case "avif": OutputFormat(extension: "avif")
        default: nil
        }
    }
}
