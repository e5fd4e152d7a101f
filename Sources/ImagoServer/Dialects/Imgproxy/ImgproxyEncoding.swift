import Foundation
import Imago

/// imgproxy's choice of an answer's encoding: the format (named by the URL, or imgproxy 4's
/// negotiation), the quality (the URL's, per format, the server's per format, the server's), the
/// server's or the URL's auto quality, and `max_bytes`.
struct ImgproxyEncoding: EncodingChoosing {
    /// The ways a format is chosen.
    enum FormatChoice: Sendable {
        /// Named by the URL.
        case named(OutputFormat)
        /// imgproxy 4's choice (``OutputFormat/negotiate(named:offered:enforced:source:hasAlpha:animated:preferred:)``):
        /// the format the URL names unless an enforced one the client takes replaces it; without
        /// one, what the client takes of the offered formats, else the source's own when preferred.
        case negotiated(named: OutputFormat?, offered: [OutputFormat], enforced: [OutputFormat])
    }

    var format: FormatChoice
    /// The quality the URL fixes, if it does.
    var quality: Int?
    /// The quality the URL fixes per format.
    var formatQuality: [String: Int] = [:]
    /// The URL's auto-quality choice; the server's applies when the URL fixes no quality.
    var autoQuality: ProcessingOptions.AutoQualityOption?
    /// The most bytes the answer may have (0: any).
    var maxBytes = 0

    func possibleFormats(source: ImageFormat?, settings: OutputSettings) -> Set<OutputFormat> {
        switch format {
        case .named(let named): return [named]
        case .negotiated(let named, let offered, let enforced):
            return Set(
                [(false, false), (true, false), (false, true), (true, true)].map { alpha, animated in
                    OutputFormat.negotiate(
                        named: named, offered: offered, enforced: enforced, source: source, hasAlpha: alpha, animated: animated,
                        preferred: settings.preferredFormats)
                })
        }
    }

    func choose(for image: Image, settings: OutputSettings) -> EncodingChoice {
        let chosen: OutputFormat
        switch format {
        case .named(let named): chosen = named
        case .negotiated(let named, let offered, let enforced):
            chosen = OutputFormat.negotiate(
                named: named, offered: offered, enforced: enforced, source: image.metadata.format, hasAlpha: image.metadata.hasAlpha,
                animated: image.isAnimated, preferred: settings.preferredFormats)
        }
        let fixed = quality ?? formatQuality[chosen.rawValue]
        let quality = fixed ?? settings.formatQuality[chosen.rawValue] ?? settings.defaultQuality
        // An auto quality the URL asks for wins; the server's applies when the URL fixes no quality.
        let search =
            autoQuality == nil && fixed != nil
            ? nil
            : settings.autoQuality.applying(autoQuality).search(format: chosen, width: image.width, height: image.height, animated: image.isAnimated)
        return EncodingChoice(format: chosen, quality: quality, search: search, maxBytes: maxBytes)
    }
}

extension AutoQualitySettings {
    /// These settings with what a URL's `aq` option sets.
    func applying(_ option: ProcessingOptions.AutoQualityOption?) -> AutoQualitySettings {
        guard let option else { return self }
        var settings = self
        if let method = option.method {
            if method != settings.method { settings.target = nil }
            settings.method = method
        }
        if let target = option.target { settings.target = target }
        if let minimum = option.minQuality {
            settings.minQuality = minimum
            settings.formatMin = [:]
        }
        if let maximum = option.maxQuality {
            settings.maxQuality = maximum
            settings.formatMax = [:]
        }
        if let error = option.allowedError { settings.allowedError = error }
        return settings
    }
}
