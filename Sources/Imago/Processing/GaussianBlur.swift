import Foundation

extension ImageProcessors {
    /// Blurs with a Gaussian whose standard deviation is `radius` pixels (CSS `blur()` has the
    /// same meaning); edges are not darkened.
    public struct GaussianBlur: ImageProcessing, Hashable {
        /// The Gaussian's standard deviation in pixels.
        public var radius: Double

        /// The largest radius accepted. A kernel spans six radii: at 250 its weights for a
        /// 10,000-pixel row take 60 MB, and a wider blur of a thumbnail-sized image is a flat colour.
        public static let maxRadius = 250.0

        /// Makes a blur; a radius of 0 leaves the image as it is. Throws for a radius that is not
        /// a finite number from 0 to ``maxRadius``.
        public init(radius: Double) throws(ImagoError) {
            try Self.validate(radius)
            self.radius = radius
        }

        private static func validate(_ radius: Double) throws(ImagoError) {
            guard radius.isFinite, radius >= 0, radius <= maxRadius else {
                throw .processing("blur radius \(radius) must be a number from 0 to \(maxRadius)")
            }
        }

        public var identifier: String { "imago.blur(\(radius))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            try Self.validate(radius)  // the property may have changed since init
            let hasAlpha = image.metadata.hasAlpha
            return image.mapFrames(width: image.width, height: image.height, gainMap: .unchanged) {
                Resampler.blur($0, width: image.width, height: image.height, sigma: radius, hasAlpha: hasAlpha)
            }
        }
    }
}
