import Foundation

extension ImageProcessors {
    /// Turns colours to grey by luma (ITU-R BT.601: 0.299 R + 0.587 G + 0.114 B, as Pillow's
    /// `convert("L")`), keeping alpha.
    public struct Grayscale: ImageProcessing, Hashable {
        /// Makes the processor.
        public init() {}

        public var identifier: String { "imago.grayscale" }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            image.mapFrames(width: image.width, height: image.height, gainMap: .unchanged) { pixels in
                var result = pixels
                result.withUnsafeMutableBufferPointer { buffer in
                    var index = 0
                    while index < buffer.count {
                        // Weights in 1/65536: 19595 + 38470 + 7471 = 65536, so white stays white.
                        let luma = (19595 * UInt32(buffer[index]) + 38470 * UInt32(buffer[index + 1]) + 7471 * UInt32(buffer[index + 2]) + 32768) >> 16
                        buffer[index] = UInt8(luma)
                        buffer[index + 1] = UInt8(luma)
                        buffer[index + 2] = UInt8(luma)
                        index += 4
                    }
                }
                return result
            }
        }
    }
}
