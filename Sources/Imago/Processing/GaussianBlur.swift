import Foundation

extension ImageProcessors {
    /// Blurs with a Gaussian whose standard deviation is `radius` pixels (CSS `blur()` has the
    /// same meaning); edges are not darkened.
    public struct GaussianBlur: ImageProcessing, Hashable {
        public var radius: Double

        /// Makes a blur; a radius of 0 leaves the image as it is.
        public init(radius: Double) {
            self.radius = radius
        }

        public var identifier: String { "imago.blur(\(radius))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            guard radius.isFinite, radius >= 0 else { throw .processing("blur radius \(radius) is not a length") }
            let hasAlpha = image.metadata.hasAlpha
            return image.mapFrames(width: image.width, height: image.height) {
                Resampler.blur($0, width: image.width, height: image.height, sigma: radius, hasAlpha: hasAlpha)
            }
        }
    }
}
