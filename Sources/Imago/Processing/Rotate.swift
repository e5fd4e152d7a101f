extension ImageProcessors {
    /// Turns an image clockwise by a multiple of 90°.
    public struct Rotate: ImageProcessing, Hashable {
        /// Quarter turns clockwise, 0…3.
        public let quarterTurns: Int

        /// A rotation by `degrees` clockwise; nil unless it is a multiple of 90 (negative ones
        /// turn the other way).
        public init?(degrees: Int) {
            guard degrees % 90 == 0 else { return nil }
            quarterTurns = ((degrees / 90) % 4 + 4) % 4
        }

        public var identifier: String { "imago.rotate(\(quarterTurns * 90))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            guard quarterTurns != 0 else { return image }
            let (width, height) = (image.width, image.height)
            let swaps = quarterTurns % 2 == 1
            let (newWidth, newHeight) = swaps ? (height, width) : (width, height)
            return image.mapFrames(width: newWidth, height: newHeight, gainMap: .rotate(quarterTurns: quarterTurns)) { pixels in
                PixelRows.map32(pixels, count: width * height) { source, target in
                    for y in 0..<height {
                        for x in 0..<width {
                            let (tx, ty) =
                                switch quarterTurns {
                                case 1: (height - 1 - y, x)
                                case 2: (width - 1 - x, height - 1 - y)
                                default: (y, width - 1 - x)
                                }
                            target[ty * newWidth + tx] = source[y * width + x]
                        }
                    }
                }
            }
        }
    }

    /// Mirrors an image left to right, top to bottom, or both.
    public struct Flip: ImageProcessing, Hashable {
        /// Whether left and right swap.
        public let horizontal: Bool
        /// Whether top and bottom swap.
        public let vertical: Bool

        /// Makes a flip.
        public init(horizontal: Bool, vertical: Bool) {
            self.horizontal = horizontal
            self.vertical = vertical
        }

        public var identifier: String { "imago.flip(\(horizontal ? "h" : "")\(vertical ? "v" : ""))" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            guard horizontal || vertical else { return image }
            let (width, height) = (image.width, image.height)
            return image.mapFrames(width: width, height: height, gainMap: .flip(horizontal: horizontal, vertical: vertical)) { pixels in
                PixelRows.map32(pixels, count: width * height) { source, target in
                    for y in 0..<height {
                        let sourceRow = vertical ? height - 1 - y : y
                        for x in 0..<width {
                            target[y * width + x] = source[sourceRow * width + (horizontal ? width - 1 - x : x)]
                        }
                    }
                }
            }
        }
    }
}

/// Pixel-at-a-time access to RGBA8 buffers as 32-bit words.
enum PixelRows {
    /// A new buffer of `count` pixels that `body` fills from `pixels`.
    static func map32(
        _ pixels: [UInt8], count: Int, _ body: (UnsafeBufferPointer<UInt32>, UnsafeMutableBufferPointer<UInt32>) -> Void
    ) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count * 4)
        pixels.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { target in
                body(source.bindMemory(to: UInt32.self), target.bindMemory(to: UInt32.self))
            }
        }
        return result
    }
}
