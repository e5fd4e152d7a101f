import Foundation

/// SSIMULACRA 2.1, the perceptual metric Cloudinary and libjxl publish: how close a distorted
/// image looks to its original, from 100 (identical) down (90 ≈ visually lossless, 70 high
/// quality, 50 medium, 30 low; negative for very strong distortion).
///
/// Written here from reading cloudinary/ssimulacra2; it follows the reference step by step (linear
/// sRGB, XYB rescaled to 0…1, six scales halved in linear light, SSIM without the gamma term and
/// the two edge maps, their 1- and 4-norms, the 108 published weights and the final polynomial),
/// and its scores stay within a few hundredths of the reference's. Images with alpha are compared
/// over a dark and a bright background and the worse score is kept, as the reference's tool does.
///
/// A ``Reference`` prepares the original once and then scores many candidates against it, which
/// is how auto quality uses it.
public enum SSIMULACRA2 {
    /// The largest image, in pixels, a score is computed for: the metric keeps about 100 bytes of
    /// float planes per pixel.
    public static let maximumPixelCount = 16_777_216

    /// The score of `distorted` against `original` (first frames, both in sRGB after any profile
    /// conversion). Both must have the same size, at least 8×8 and at most ``maximumPixelCount``.
    public static func score(original: Image, distorted: Image) throws(ImagoError) -> Double {
        try Reference(original).score(distorted)
    }

    /// An original prepared for scoring: its XYB planes and their blurred moments at every scale,
    /// kept so each candidate costs only its own half of the work.
    public struct Reference: Sendable {
        /// The original's width.
        public let width: Int
        /// The original's height.
        public let height: Int
        private let backgrounds: [PreparedBackground]

        /// Prepares `original` (its first frame, converted to sRGB when it carries a profile).
        /// Throws `processingFailed` when it is smaller than 8×8 or larger than
        /// ``SSIMULACRA2/maximumPixelCount``.
        public init(_ original: Image) throws(ImagoError) {
            try SSIMULACRA2.checkSize(width: original.width, height: original.height)
            width = original.width
            height = original.height
            let image = original.convertedToSRGB()
            let hasAlpha = SSIMULACRA2.hasAlpha(image)
            backgrounds = (hasAlpha ? [Float(0.1), 0.9] : [nil]).map { background in
                PreparedBackground(
                    background: background,
                    scales: SSIMULACRA2.scales(of: image, background: background).map(PreparedScale.init))
            }
        }

        /// The score of `distorted` (first frame, sRGB after conversion) against the original.
        /// Throws `processingFailed` when its size differs from the original's.
        public func score(_ distorted: Image) throws(ImagoError) -> Double {
            guard distorted.width == width, distorted.height == height else {
                throw SSIMULACRA2.failure(
                    "SSIMULACRA2 compares images of one size: \(width)×\(height) and \(distorted.width)×\(distorted.height)")
            }
            let image = distorted.convertedToSRGB()
            // The reference blends only images that have alpha; an opaque candidate of an image
            // with alpha is compared against both backgrounds as it is.
            let candidateHasAlpha = SSIMULACRA2.hasAlpha(image)
            var worst = Double.infinity
            for prepared in backgrounds {
                let scales = SSIMULACRA2.scales(of: image, background: candidateHasAlpha ? prepared.background : nil)
                var norms = [ScaleNorms]()
                for (original, candidate) in zip(prepared.scales, scales) {
                    norms.append(original.compare(with: candidate))
                }
                worst = min(worst, SSIMULACRA2.combine(norms))
            }
            return worst
        }
    }

    struct PreparedBackground: Sendable {
        let background: Float?
        let scales: [PreparedScale]
    }

    static func checkSize(width: Int, height: Int) throws(ImagoError) {
        guard width >= 8, height >= 8 else {
            throw failure("SSIMULACRA2 needs at least 8×8 pixels, not \(width)×\(height)")
        }
        guard width.multipliedReportingOverflow(by: height).partialValue <= maximumPixelCount,
            width <= maximumPixelCount, height <= maximumPixelCount
        else {
            throw failure("SSIMULACRA2 scores at most \(maximumPixelCount) pixels, not \(width)×\(height)")
        }
    }

    static func failure(_ message: String) -> ImagoError {
        ImagoError(.processingFailed(message), url: nil, stage: .processing)
    }

    static func hasAlpha(_ image: Image) -> Bool {
        guard image.metadata.hasAlpha else { return false }
        return image.pixels.withUnsafeBufferPointer { pixels in
            stride(from: 3, to: pixels.count, by: 4).contains { pixels[$0] != 255 }
        }
    }
}
