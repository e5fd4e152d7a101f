import Foundation

/// Chooses an encoder's quality per image instead of one number for all: the smallest quality
/// whose output still looks like the original to SSIMULACRA2 (``Method/ssimulacra2(target:)``), or
/// the largest whose output fits a byte budget (``Method/size(bytes:)``), in the spirit of imgproxy
/// Pro's `autoquality`.
///
/// The search encodes at the output size: it starts from a prediction for the format and the
/// target, steps to the second candidate from the first score, then interpolates between the two
/// qualities around the target and halves the interval when interpolation stalls, so an image
/// takes a few encodes (at most ``maximumEncodes``). A candidate scoring within
/// ``allowedError`` of the target is taken at once.
public struct AutoQuality: Sendable, Hashable {
    /// What the chosen quality must achieve.
    public enum Method: Sendable, Hashable {
        /// The smallest quality whose output scores at least `target` SSIMULACRA2 points (minus
        /// the allowed error) against the image it was encoded from: 90 is visually lossless, 70
        /// high quality, 50 medium.
        case ssimulacra2(target: Double)
        /// The largest quality whose output takes at most `bytes`; the minimum quality's output
        /// when none does.
        case size(bytes: Int)
    }

    /// What the quality must achieve.
    public var method: Method
    /// The lowest quality tried (1…100).
    public var minQuality: Int
    /// The highest quality tried (1…100).
    public var maxQuality: Int
    /// How far from the SSIMULACRA2 target a score may be and still be taken: a candidate within
    /// it on either side ends the search, and one below the target by no more than it passes.
    public var allowedError: Double

    /// The most encodes one image takes.
    public static let maximumEncodes = 8

    /// A search for `method` between `minQuality` and `maxQuality` (clamped to 1…100).
    public init(_ method: Method, minQuality: Int = 20, maxQuality: Int = 95, allowedError: Double = 0.5) {
        self.method = method
        self.minQuality = max(1, min(100, minQuality))
        self.maxQuality = max(self.minQuality, min(100, maxQuality))
        self.allowedError = max(0, allowedError)
    }

    /// What a search chose.
    public struct Choice: Sendable {
        /// The encoded bytes.
        public let data: Data
        /// The quality they were encoded at.
        public let quality: Int
        /// Their SSIMULACRA2 score against the image (nil for ``Method/size(bytes:)``).
        public let score: Double?
        /// How many encodes the search took.
        public let encodes: Int
    }

    /// Encodes `image` with the encoder `encoder(quality)` makes, at the quality this search
    /// chooses. `format` is what that encoder writes; for SSIMULACRA2 each candidate is decoded
    /// again with `decoders` and scored against `image` as the format shows it (an image with
    /// alpha composited over white for JPEG). Throws the encoder's, the decoder's or the
    /// metric's error (an image under 8×8 or over ``SSIMULACRA2/maximumPixelCount`` pixels).
    public func encode(
        _ image: Image, format: ImageFormat, decoders: DecoderRegistry = .standard(),
        encoder: (Int) -> any ImageEncoding
    ) throws(ImagoError) -> Choice {
        switch method {
        case .ssimulacra2(let target):
            var reference = image
            if format == .jpeg, image.metadata.hasAlpha {
                reference.frames = [Image.Frame(pixels: image.pixelsOverWhite)]
                reference.metadata.hasAlpha = false
            }
            let prepared = try SSIMULACRA2.Reference(reference.convertedToSRGB())
            return try search(target: target, prediction: Self.prediction(format: format, target: target)) {
                (quality) throws(ImagoError) -> (Data, Double) in
                let data = try encoder(quality).encode(image)
                let decoded = try decoders.decode(data)
                return (data, try prepared.score(decoded))
            }
        case .size(let bytes):
            return try searchSize(bytes: bytes, encoder: encoder, image: image)
        }
    }

    /// The quality a typical photo needs for `target` in `format`, where the search starts:
    /// piecewise linear through figures measured on the benchmark photos.
    static func prediction(format: ImageFormat, target: Double) -> Int {
        // (score, quality) pairs, scores rising.
        let table: [(Double, Double)] =
            switch format {
            case .avif: [(30, 10), (50, 28), (70, 50), (75, 57), (80, 66), (85, 76), (90, 88)]
            case .webp: [(30, 10), (50, 35), (70, 72), (75, 80), (80, 86), (85, 92), (90, 97)]
            default: [(30, 15), (50, 35), (70, 68), (75, 76), (80, 84), (85, 90), (90, 95)]
            }
        guard target > table[0].0 else { return Int(table[0].1) }
        for (low, high) in zip(table, table.dropFirst()) where target <= high.0 {
            let fraction = (target - low.0) / (high.0 - low.0)
            return Int((low.1 + fraction * (high.1 - low.1)).rounded())
        }
        return Int(table[table.count - 1].1)
    }

    /// The smallest quality whose score passes, by prediction, interpolation and bisection.
    func search(
        target: Double, prediction: Int, trial: (Int) throws(ImagoError) -> (Data, Double)
    ) throws(ImagoError) -> Choice {
        var tried = [Int: (data: Data, score: Double)]()
        // Below `failing` nothing passes (or it is under the range); `passing` passes (or is
        // above the range, meaning nothing passed yet).
        var failing = minQuality - 1, passing = maxQuality + 1
        var quality = max(minQuality, min(maxQuality, prediction))
        func pass(_ score: Double) -> Bool { score >= target - allowedError }
        while tried.count < Self.maximumEncodes {
            let (data, score) = try trial(quality)
            tried[quality] = (data, score)
            if pass(score) {
                passing = quality
                if score <= target + allowedError { break }
            } else {
                failing = quality
            }
            if passing - failing <= 1 { break }
            quality = next(target: target, failing: failing, passing: passing, tried: tried, last: (quality, score))
            // Nothing has passed and one encode is left: the range's best is the answer either way.
            if passing > maxQuality, tried.count == Self.maximumEncodes - 1 { quality = maxQuality }
        }
        if passing > maxQuality {
            // Nothing in the range passes: the best the range allows.
            if tried[maxQuality] == nil { tried[maxQuality] = try trial(maxQuality) }
            passing = maxQuality
        }
        // Only tried qualities become `passing`, so this finds it.
        if let chosen = tried[passing] { return Choice(data: chosen.data, quality: passing, score: chosen.score, encodes: tried.count) }
        let (data, score) = try trial(passing)
        return Choice(data: data, quality: passing, score: score, encodes: tried.count + 1)
    }

    /// The next quality to try strictly between the bounds: interpolated between the scores
    /// on either side when both are known, else a step from the last score at a typical slope
    /// (a point of score per point of quality); bisection when that would not shrink the
    /// interval by at least a quarter.
    private func next(
        target: Double, failing: Int, passing: Int, tried: [Int: (data: Data, score: Double)], last: (Int, Double)
    ) -> Int {
        var estimate: Double
        if let low = tried[failing]?.score, let high = tried[passing]?.score, high > low {
            estimate = Double(failing) + (target - low) / (high - low) * Double(passing - failing)
        } else {
            let step = (target - last.1) * 1.0
            estimate = Double(last.0) + (step >= 0 ? max(step, 2) : min(step, -2))
        }
        var quality = Int(estimate.rounded(.up))
        quality = max(failing + 1, min(passing - 1, quality))
        let width = passing - failing
        let shrink = min(quality - failing, passing - quality)
        if width > 8, shrink * 4 < width / 2 { quality = (failing + passing) / 2 }
        return quality
    }

    /// The largest quality in range whose bytes fit, by bisection from the top.
    private func searchSize(
        bytes: Int, encoder: (Int) -> any ImageEncoding, image: Image
    ) throws(ImagoError) -> Choice {
        var low = minQuality, high = maxQuality
        var best: (data: Data, quality: Int)?
        var smallest: (data: Data, quality: Int)?
        var encodes = 0
        var quality = maxQuality
        while low <= high, encodes < Self.maximumEncodes {
            let data = try encoder(quality).encode(image)
            encodes += 1
            if smallest == nil || data.count < smallest!.data.count { smallest = (data, quality) }
            if data.count <= bytes {
                best = (data, quality)
                low = quality + 1
            } else {
                high = quality - 1
            }
            quality = (low + high + 1) / 2
        }
        let chosen = best ?? smallest!
        return Choice(data: chosen.data, quality: chosen.quality, score: nil, encodes: encodes)
    }
}
