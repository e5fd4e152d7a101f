import Foundation

extension ImageProcessors {
    /// Sharpens edges as libvips' `sharpen` does with its defaults (what imgproxy's `sharpen`
    /// runs): the lightness minus its Gaussian blur, through a curve that leaves flat areas alone
    /// (differences under 2 L*), boosts the rest threefold, and brightens by at most 10 L* and
    /// darkens by at most 20; the change is added to each channel, so hue and alpha are kept.
    public struct Sharpen: ImageProcessing, Hashable {
        /// The Gaussian's standard deviation in pixels: 0.5 suits screens, 1–1.5 print.
        public let sigma: Double

        /// The largest sigma accepted (as ``GaussianBlur/maxRadius``).
        public static let maxSigma = GaussianBlur.maxRadius

        /// Makes a sharpen. Throws unless `sigma` is a finite number above 0 and at most ``maxSigma``.
        public init(sigma: Double) throws(ImagoError) {
            guard sigma.isFinite, sigma > 0, sigma <= Self.maxSigma else {
                throw .processing("sharpen sigma \(sigma) must be a number above 0 and at most \(Self.maxSigma)")
            }
            self.sigma = sigma
        }

        public var identifier: String { "imago.sharpen(\(sigma))" }

        /// libvips' curve with x1 = 2, m1 = 0, m2 = 3, y2 = 10, y3 = 20, in L* units.
        static func boost(_ difference: Float) -> Float {
            let (x1, m2, brightening, darkening): (Float, Float, Float, Float) = (2, 3, 10, 20)
            let y: Float =
                if difference < -x1 { (difference + x1) * m2 } else if difference < x1 { 0 } else { (difference - x1) * m2 }
            return min(max(y, -darkening), brightening)
        }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            image.mapFrames(width: image.width, height: image.height, gainMap: .unchanged) { pixels in
                let lightness = FloatPlane.lightness(of: pixels, width: image.width, height: image.height)
                let blurred = lightness.blurred(sigma: sigma)
                var result = pixels
                result.withUnsafeMutableBufferPointer { buffer in
                    for index in 0..<lightness.values.count {
                        let change = Self.boost(lightness.values[index] - blurred.values[index]) * 2.55
                        guard change != 0 else { continue }
                        for channel in 0..<3 {
                            let value = Float(buffer[index * 4 + channel]) + change
                            buffer[index * 4 + channel] = UInt8(min(max(value.rounded(), 0), 255))
                        }
                    }
                }
                return result
            }
        }
    }

    /// Replaces each square of `size × size` pixels by its average colour (transparent pixels
    /// weigh nothing), the squares counted from the top left.
    public struct Pixelate: ImageProcessing, Hashable {
        /// The side of a square in pixels.
        public let size: Int

        /// Makes a pixelation; a size of 1 leaves the image as it is. Throws unless `size` is 1…65,535.
        public init(size: Int) throws(ImagoError) {
            guard (1...Resize.maxSide).contains(size) else { throw .processing("pixelate size \(size) must be from 1 to \(Resize.maxSide)") }
            self.size = size
        }

        public var identifier: String { "imago.pixelate(\(size))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            guard size > 1 else { return image }
            let (width, height) = (image.width, image.height)
            return image.mapFrames(width: width, height: height, gainMap: .unchanged) { pixels in
                var result = pixels
                result.withUnsafeMutableBufferPointer { buffer in
                    for top in stride(from: 0, to: height, by: size) {
                        for left in stride(from: 0, to: width, by: size) {
                            let bottom = min(top + size, height), right = min(left + size, width)
                            var sums = (r: 0, g: 0, b: 0, a: 0)
                            for y in top..<bottom {
                                for x in left..<right {
                                    let o = (y * width + x) * 4, a = Int(buffer[o + 3])
                                    sums.r += Int(buffer[o]) * a
                                    sums.g += Int(buffer[o + 1]) * a
                                    sums.b += Int(buffer[o + 2]) * a
                                    sums.a += a
                                }
                            }
                            let count = (bottom - top) * (right - left)
                            let alpha = UInt8((sums.a + count / 2) / count)
                            let color: (UInt8, UInt8, UInt8) =
                                sums.a == 0
                                ? (0, 0, 0)
                                : (UInt8((sums.r + sums.a / 2) / sums.a), UInt8((sums.g + sums.a / 2) / sums.a), UInt8((sums.b + sums.a / 2) / sums.a))
                            for y in top..<bottom {
                                for x in left..<right {
                                    let o = (y * width + x) * 4
                                    (buffer[o], buffer[o + 1], buffer[o + 2], buffer[o + 3]) = (color.0, color.1, color.2, alpha)
                                }
                            }
                        }
                    }
                }
                return result
            }
        }
    }
}
