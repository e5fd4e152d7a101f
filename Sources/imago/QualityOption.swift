import ArgumentParser
import Foundation
import Imago

/// `--quality`: a fixed quality 1…100, or `auto[:TARGET]`, the smallest quality whose output
/// scores at least TARGET (default 75) in SSIMULACRA2 against the image it was made from.
enum QualityOption: ExpressibleByArgument, Sendable {
    case fixed(Int)
    case auto(target: Double)

    static let defaultTarget = 75.0

    init?(argument: String) {
        if argument == "auto" {
            self = .auto(target: Self.defaultTarget)
        } else if argument.hasPrefix("auto:") {
            guard let target = Double(argument.dropFirst(5)), target.isFinite, (0...100).contains(target) else { return nil }
            self = .auto(target: target)
        } else {
            guard let quality = Int(argument), (1...100).contains(quality) else { return nil }
            self = .fixed(quality)
        }
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// The quality an encoder is made at before a search (the fixed one, or 85).
    var initial: Int {
        if case .fixed(let quality) = self { return quality }
        return 85
    }

    /// `image` encoded by `encoder(quality)` at this quality, or at the one auto quality
    /// chooses; with the quality used and, for auto, the output's score.
    func encode(
        _ image: Image, format: ImageFormat, encoder: (Int) -> any ImageEncoding
    ) throws -> (data: Data, quality: Int?, score: Double?) {
        switch self {
        case .fixed(let quality):
            let encoder = encoder(quality)
            return (try encoder.encode(image), format.info?.takesQuality == true ? quality : nil, nil)
        case .auto(let target):
            // A format without a quality (PNG, GIF), an animation, or an image the metric
            // cannot score is encoded once at the default.
            guard format.info?.takesQuality == true, !image.isAnimated, image.width >= 8, image.height >= 8,
                image.width * image.height <= SSIMULACRA2.maximumPixelCount
            else { return (try encoder(initial).encode(image), nil, nil) }
            let choice = try AutoQuality(.ssimulacra2(target: target)).encode(image, format: format, encoder: encoder)
            return (choice.data, choice.quality, choice.score)
        }
    }
}
