extension ImageProcessors {
    /// Places an image on a canvas of a colour: padding, letterboxing, a frame. The part of the
    /// image that falls outside the canvas is cut.
    public struct Extend: ImageProcessing, Hashable {
        /// The canvas's width.
        public let width: Int
        /// The canvas's height.
        public let height: Int
        /// Where the image's left edge falls on the canvas.
        public let x: Int
        /// Where the image's top edge falls on the canvas.
        public let y: Int
        /// What the canvas shows where the image does not cover it.
        public let background: RGBAColor

        /// Makes an extension. Throws unless the canvas is at least 1 × 1 and within
        /// ``Resize/maxSide`` a side and ``Resize/maxPixels`` in all, and the offsets within it.
        public init(width: Int, height: Int, x: Int, y: Int, background: RGBAColor) throws(ImagoError) {
            guard width > 0, height > 0, width <= Resize.maxSide, height <= Resize.maxSide, width * height <= Resize.maxPixels,
                abs(x) <= Resize.maxSide, abs(y) <= Resize.maxSide
            else {
                throw .processing("extend to \(width)×\(height) at (\(x), \(y)): the canvas must be 1…\(Resize.maxSide) a side, \(Resize.maxPixels) pixels")
            }
            self.width = width
            self.height = height
            self.x = x
            self.y = y
            self.background = background
        }

        public var identifier: String { "imago.extend(\(width)x\(height),\(x),\(y),\(background.hex))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            if width == image.width, height == image.height, x == 0, y == 0 { return image }
            let left = max(0, x), top = max(0, y)
            let right = min(width, x + image.width), bottom = min(height, y + image.height)
            let covers = left == 0 && top == 0 && right == width && bottom == height
            let hasAlpha = image.metadata.hasAlpha || (!covers && background.alpha < 255)
            let fill = background.pixel
            return image.mapFrames(
                width: width, height: height, hasAlpha: hasAlpha, gainMap: .region(x: Double(-x), y: Double(-y), width: Double(width), height: Double(height))
            ) { pixels in
                PixelRows.map32(pixels, count: width * height) { source, target in
                    target.update(repeating: fill)
                    guard right > left, bottom > top else { return }
                    for row in top..<bottom {
                        let sourceStart = (row - y) * image.width + (left - x)
                        let targetStart = row * width + left
                        for column in 0..<(right - left) { target[targetStart + column] = source[sourceStart + column] }
                    }
                }
            }
        }
    }

    /// Composites an image with transparency onto an opaque colour, leaving no alpha: what a JPEG
    /// of a transparent image shows.
    public struct Flatten: ImageProcessing, Hashable {
        /// The colour behind the image; its alpha is ignored.
        public let background: RGBAColor

        /// Makes a flatten onto `background`.
        public init(background: RGBAColor) {
            self.background = background
        }

        public var identifier: String { "imago.flatten(\(background.hex))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            guard image.metadata.hasAlpha else { return image }
            let back = [Int(background.red), Int(background.green), Int(background.blue)]
            var flattened = image.mapFrames(width: image.width, height: image.height, hasAlpha: false, gainMap: .unchanged) { pixels in
                var result = pixels
                result.withUnsafeMutableBufferPointer { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let alpha = Int(buffer[offset + 3])
                        for channel in 0..<3 {
                            let value = Int(buffer[offset + channel]) * alpha + back[channel] * (255 - alpha)
                            buffer[offset + channel] = UInt8((value + 127) / 255)
                        }
                        buffer[offset + 3] = 255
                        offset += 4
                    }
                }
                return result
            }
            // Where the background now shows, the gain map has nothing to boost.
            if let map = flattened.gainMap {
                let coverage = image.pixels.withUnsafeBufferPointer { pixels in
                    (0..<(image.width * image.height)).map { 1 - Float(pixels[$0 * 4 + 3]) / 255 }
                }
                flattened.gainMap = map.covered(by: coverage, baseWidth: image.width, baseHeight: image.height)
            }
            return flattened
        }
    }
}
