import Foundation
import Imago

/// thumbor's handler's choice of an answer's encoding: its filters' format, `AUTO_WEBP`, the
/// source's format, `autojpg`; the filters' quality, else the format's (`WEBP_QUALITY`,
/// `AVIF_QUALITY`), else `QUALITY`; a GIF source drops the filters' format, quality and size
/// bound, as thumbor does.
struct ThumborEncoding: EncodingChoosing {
    let rules: ThumborPlan
    /// Whether `AUTO_WEBP` applies and the client accepts WebP.
    let acceptsWebP: Bool

    func possibleFormats(source: ImageFormat?, settings: OutputSettings) -> Set<OutputFormat> {
        let rules = source == .gif ? rules.forGIFSource : rules
        return Set(
            [(false, false), (true, false), (false, true), (true, true)].map { transparent, animated in
                rules.outputFormat(
                    source: source ?? .jpeg, transparent: transparent, animated: animated, autoWebP: settings.thumborAutoWebP, acceptsWebP: acceptsWebP,
                    autoPNGToJPG: settings.thumborAutoPNGToJPG)
            })
    }

    func choose(for image: Image, settings: OutputSettings) -> EncodingChoice {
        let rules = image.metadata.format == .gif ? rules.forGIFSource : rules
        let chosen = rules.outputFormat(
            source: image.metadata.format, transparent: image.metadata.hasAlpha && Self.isTransparent(image), animated: image.isAnimated,
            autoWebP: settings.thumborAutoWebP, acceptsWebP: acceptsWebP, autoPNGToJPG: settings.thumborAutoPNGToJPG)
        let quality = rules.quality.map { max(1, min(100, $0)) } ?? settings.thumborFormatQuality[chosen] ?? settings.defaultQuality
        return EncodingChoice(format: chosen, quality: quality, search: nil, maxBytes: rules.maxBytes ?? 0)
    }

    /// Whether any pixel is less than opaque (thumbor's `has_transparency`).
    private static func isTransparent(_ image: Image) -> Bool {
        let pixels = image.frames[0].pixels
        var index = 3
        while index < pixels.count {
            if pixels[index] < 255 { return true }
            index += 4
        }
        return false
    }
}
