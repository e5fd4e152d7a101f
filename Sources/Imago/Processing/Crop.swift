import Foundation

extension ImageProcessors {
    /// Cuts out a rectangle of pixels. The part of the rectangle outside the image is ignored; a
    /// rectangle that misses the image entirely is an error.
    public struct Crop: ImageProcessing, Hashable {
        /// The left edge of the kept rectangle.
        public var x: Int
        /// The top edge of the kept rectangle.
        public var y: Int
        /// The kept rectangle's width.
        public var width: Int
        /// The kept rectangle's height.
        public var height: Int

        /// Makes a crop of the rectangle at (`x`, `y`) from the top left, `width × height` pixels.
        /// Throws unless the sides are at least 1 and every value is within ±2^31.
        public init(x: Int, y: Int, width: Int, height: Int) throws(ImagoError) {
            try Self.validate(x: x, y: y, width: width, height: height)
            self.init(checkedX: x, y: y, width: width, height: height)
        }

        private init(checkedX x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// The `width × height` rectangle at the centre of `image`.
        public static func centered(width: Int, height: Int, in image: Image) -> Crop {
            Crop(checkedX: (image.width - width) / 2, y: (image.height - height) / 2, width: width, height: height)
        }

        public var identifier: String { "imago.crop(\(x),\(y),\(width)x\(height))" }

        private static func validate(x: Int, y: Int, width: Int, height: Int) throws(ImagoError) {
            let bound = Int(Int32.max)
            guard width > 0, height > 0, width <= bound, height <= bound, (-bound...bound).contains(x), (-bound...bound).contains(y) else {
                throw .processing("crop \(width)×\(height) at (\(x), \(y)): sides must be at least 1 and values within ±\(bound)")
            }
        }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            try Self.validate(x: x, y: y, width: width, height: height)
            let left = max(0, x), top = max(0, y)
            let right = min(image.width, x + width), bottom = min(image.height, y + height)
            guard right > left, bottom > top else {
                throw .processing("crop \(width)×\(height) at (\(x), \(y)) lies outside the \(image.width)×\(image.height) image")
            }
            if left == 0, top == 0, right == image.width, bottom == image.height { return image }
            let outWidth = right - left, outHeight = bottom - top
            return image.mapFrames(
                width: outWidth, height: outHeight, gainMap: .region(x: Double(left), y: Double(top), width: Double(outWidth), height: Double(outHeight))
            ) { pixels in
                var result = [UInt8]()
                result.reserveCapacity(outWidth * outHeight * 4)
                for row in top..<bottom {
                    let start = (row * image.width + left) * 4
                    result.append(contentsOf: pixels[start..<start + outWidth * 4])
                }
                return result
            }
        }
    }
}
