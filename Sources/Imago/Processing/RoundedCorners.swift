import Foundation

extension ImageProcessors {
    /// A line drawn along the inside of a shape's edge.
    public struct Border: Sendable, Hashable {
        /// Width in pixels.
        public var width: Double
        /// Straight-alpha RGBA colour.
        public var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8

        /// Makes a border; the colour defaults to opaque white.
        public init(width: Double, red: UInt8 = 255, green: UInt8 = 255, blue: UInt8 = 255, alpha: UInt8 = 255) {
            self.width = width
            self.red = red
            self.green = green
            self.blue = blue
            self.alpha = alpha
        }

        var identifier: String { "\(width),\(red),\(green),\(blue),\(alpha)" }
    }

    /// Rounds the corners to `radius` pixels, antialiased: outside the shape becomes transparent.
    /// With a border, the line is drawn inside the rounded edge.
    public struct RoundedCorners: ImageProcessing, Hashable {
        /// The corners' radius in pixels.
        public var radius: Double
        /// A border drawn along the edge, if any.
        public var border: Border?

        /// Makes the processor; the radius is capped at half the shorter side. Throws for a radius
        /// or border width that is not a finite number of 0 or more.
        public init(radius: Double, border: Border? = nil) throws(ImagoError) {
            try Self.validate(radius: radius, border: border)
            self.init(checkedRadius: radius, border: border)
        }

        init(checkedRadius radius: Double, border: Border?) {
            self.radius = radius
            self.border = border
        }

        static func validate(radius: Double, border: Border?) throws(ImagoError) {
            guard radius.isFinite, radius >= 0 else { throw .processing("corner radius \(radius) must be a finite number of 0 or more") }
            if let border, !(border.width.isFinite && border.width >= 0) {
                throw .processing("border width \(border.width) must be a finite number of 0 or more")
            }
        }

        public var identifier: String { "imago.rounded(\(radius)\(border.map { ",border:" + $0.identifier } ?? ""))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            try Self.validate(radius: radius, border: border)  // the properties may have changed since init
            let width = image.width, height = image.height
            let radius = min(radius, Double(min(width, height)) / 2)
            let border = border
            return image.mapFrames(width: width, height: height, hasAlpha: true, gainMap: .unchanged) { pixels in
                var result = pixels
                result.withUnsafeMutableBufferPointer { buffer in
                    let halfWidth = Double(width) / 2, halfHeight = Double(height) / 2
                    for y in 0..<height {
                        for x in 0..<width {
                            // Signed distance from the pixel centre to the rounded rectangle's
                            // edge: negative inside.
                            let qx = abs(Double(x) + 0.5 - halfWidth) - (halfWidth - radius)
                            let qy = abs(Double(y) + 0.5 - halfHeight) - (halfHeight - radius)
                            let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
                            let distance = outside + min(max(qx, qy), 0) - radius
                            let coverage = min(max(0.5 - distance, 0), 1)
                            guard coverage < 1 || border != nil else { continue }
                            let index = (y * width + x) * 4
                            if let border, border.width > 0 {
                                // The part of this pixel inside the band [−width, 0] from the edge.
                                let band = coverage - min(max(0.5 - (distance + border.width), 0), 1)
                                let amount = band * Double(border.alpha) / 255
                                if amount > 0 { blend(buffer, at: index, red: border.red, green: border.green, blue: border.blue, amount: amount) }
                            }
                            buffer[index + 3] = UInt8((Double(buffer[index + 3]) * coverage).rounded())
                        }
                    }
                }
                return result
            }
        }

        /// Paints an opaque colour over the straight-alpha pixel at `index` with weight `amount`.
        private func blend(_ buffer: UnsafeMutableBufferPointer<UInt8>, at index: Int, red: UInt8, green: UInt8, blue: UInt8, amount: Double) {
            let alpha = Double(buffer[index + 3]) / 255
            let outAlpha = amount + alpha * (1 - amount)
            guard outAlpha > 0 else { return }
            for (channel, color) in [red, green, blue].enumerated() {
                let value = (Double(color) * amount + Double(buffer[index + channel]) * alpha * (1 - amount)) / outAlpha
                buffer[index + channel] = UInt8(min(255, value.rounded()))
            }
            buffer[index + 3] = UInt8(min(255, (outAlpha * 255).rounded()))
        }
    }

    /// Crops the centred square and makes it a circle, antialiased, with an optional border.
    public struct Circle: ImageProcessing, Hashable {
        /// A border drawn along the circle, if any.
        public var border: Border?

        /// Makes the processor. Throws for a border width that is not a finite number of 0 or more.
        public init(border: Border? = nil) throws(ImagoError) {
            try RoundedCorners.validate(radius: 0, border: border)
            self.border = border
        }

        public var identifier: String { "imago.circle\(border.map { "(border:" + $0.identifier + ")" } ?? "")" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            let side = min(image.width, image.height)
            let square = try Crop.centered(width: side, height: side, in: image).process(image)
            return try RoundedCorners(checkedRadius: Double(side) / 2, border: border).process(square)
        }
    }
}
