import Foundation
import Imago

/// Auto quality, with SSIMULACRA2 (as imgproxy Pro's autoquality, which measures DSSIM): the
/// server's `IMAGO_AUTOQUALITY_*` settings, which a dialect's URL option may redefine in part or
/// whole.
public struct AutoQualitySettings: Sendable, Hashable, Codable {
    /// How quality is chosen.
    public enum Method: String, Sendable, Hashable, Codable {
        /// A fixed quality (the URL's, the format's or the server's): autoquality off.
        case none
        /// The highest quality whose answer fits ``target`` bytes.
        case size
        /// The lowest quality whose answer scores ``target`` in SSIMULACRA2 (default 75).
        case ssimulacra2
    }

    /// `IMAGO_AUTOQUALITY_METHOD`. Default `none`.
    public var method = Method.none
    /// `IMAGO_AUTOQUALITY_TARGET`: a SSIMULACRA2 score, or bytes for `size`; nil takes 75 for
    /// `ssimulacra2` (and leaves `size` without a target: quality stays fixed).
    public var target: Double?
    /// `IMAGO_AUTOQUALITY_MIN`. Default 70, as imgproxy's.
    public var minQuality = 70
    /// `IMAGO_AUTOQUALITY_MAX`. Default 80, as imgproxy's.
    public var maxQuality = 80
    /// `IMAGO_AUTOQUALITY_FORMAT_MIN`: the minimum per format. Default `avif=60`, as imgproxy's.
    public var formatMin: [String: Int] = ["avif": 60]
    /// `IMAGO_AUTOQUALITY_FORMAT_MAX`: the maximum per format. Default `avif=65`, as imgproxy's.
    public var formatMax: [String: Int] = ["avif": 65]
    /// `IMAGO_AUTOQUALITY_ALLOWED_ERROR`, in SSIMULACRA2 points. Default 0.5.
    public var allowedError = 0.5
    /// `IMAGO_AUTOQUALITY_MAX_RESOLUTION`: above this many pixels an answer gets a fixed quality;
    /// 0 for the metric's own limit only.
    public var maxResolution = 0

    /// The SSIMULACRA2 target when none is set.
    public static let defaultTarget = 75.0

    /// The defaults: off.
    public init() {}

    /// The search for an answer of `format` with `pixels` pixels, or nil when its quality is fixed:
    /// autoquality off, a format without a quality, an animation, an image too small or too large
    /// for the metric, or `size` without a target.
    func search(format: OutputFormat, width: Int, height: Int, animated: Bool) -> AutoQuality? {
        guard format.takesQuality, !animated, maxResolution <= 0 || width * height <= maxResolution else { return nil }
        let minimum = formatMin[format.rawValue] ?? minQuality
        let maximum = formatMax[format.rawValue] ?? maxQuality
        switch method {
        case .none:
            return nil
        case .size:
            guard let target, target >= 1 else { return nil }
            return AutoQuality(.size(bytes: Int(min(target, Double(Int32.max)))), minQuality: minimum, maxQuality: maximum)
        case .ssimulacra2:
            let pixels = width * height
            guard width >= 8, height >= 8, pixels <= SSIMULACRA2.maximumPixelCount else { return nil }
            return AutoQuality(
                .ssimulacra2(target: target ?? Self.defaultTarget), minQuality: minimum, maxQuality: maximum,
                allowedError: allowedError)
        }
    }
}
