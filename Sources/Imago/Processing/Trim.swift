extension ImageProcessors {
    /// Cuts away a border of background, as libvips' `find_trim` (what imgproxy's `trim` runs)
    /// finds it: the background is `color`, or the top left pixel's colour; a pixel belongs to the
    /// picture when a channel differs from the background by more than `threshold`. Transparent
    /// pixels are taken over magenta (`ff00ff`), as imgproxy flattens them before it looks. An
    /// image that is background only is left as it is.
    public struct Trim: ImageProcessing, Hashable {
        /// How far a channel may differ from the background and still count as background, 0…255.
        public let threshold: Double
        /// The background's colour; nil takes the top left pixel's.
        public let color: RGBAColor?
        /// Whether the same width is cut from the left and the right (the smaller of the two).
        public let equalHorizontal: Bool
        /// Whether the same height is cut from the top and the bottom (the smaller of the two).
        public let equalVertical: Bool

        /// Makes a trim. Throws unless `threshold` is a finite number from 0 to 255.
        public init(threshold: Double, color: RGBAColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) throws(ImagoError) {
            guard threshold.isFinite, (0...255).contains(threshold) else { throw .processing("trim threshold \(threshold) must be a number from 0 to 255") }
            self.threshold = threshold
            self.color = color
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }

        public var identifier: String {
            "imago.trim(\(threshold),\(color?.hex ?? "auto")\(equalHorizontal ? ",h" : "")\(equalVertical ? ",v" : ""))"
        }

        /// The picture's bounds in `image`'s first frame, or nil when it is background only.
        public func bounds(in image: Image) -> (x: Int, y: Int, width: Int, height: Int)? {
            let (width, height) = (image.width, image.height)
            let pixels = image.frames[0].pixels
            func flattened(_ offset: Int) -> (Int, Int, Int) {
                let alpha = Int(pixels[offset + 3])
                let magenta = [255, 0, 255]
                func channel(_ index: Int) -> Int { (Int(pixels[offset + index]) * alpha + magenta[index] * (255 - alpha) + 127) / 255 }
                return (channel(0), channel(1), channel(2))
            }
            let background = color.map { (Int($0.red), Int($0.green), Int($0.blue)) } ?? flattened(0)
            let limit = threshold
            func isPicture(_ x: Int, _ y: Int) -> Bool {
                let (r, g, b) = flattened((y * width + x) * 4)
                return Double(abs(r - background.0)) > limit || Double(abs(g - background.1)) > limit || Double(abs(b - background.2)) > limit
            }
            guard let top = (0..<height).first(where: { y in (0..<width).contains { isPicture($0, y) } }) else { return nil }
            let bottom = (top..<height).last { y in (0..<width).contains { isPicture($0, y) } } ?? top
            let left = (0..<width).first { x in (top...bottom).contains { isPicture(x, $0) } } ?? 0
            let right = (left..<width).last { x in (top...bottom).contains { isPicture(x, $0) } } ?? left
            var box = (x: left, y: top, width: right - left + 1, height: bottom - top + 1)
            if equalHorizontal {
                let cut = min(left, width - 1 - right)
                box.x = cut
                box.width = width - 2 * cut
            }
            if equalVertical {
                let cut = min(top, height - 1 - bottom)
                box.y = cut
                box.height = height - 2 * cut
            }
            return box
        }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            guard let box = bounds(in: image) else { return image }
            return try Crop(x: box.x, y: box.y, width: box.width, height: box.height).process(image)
        }
    }
}
