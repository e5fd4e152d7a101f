import Foundation

extension ImageProcessors {
    /// Crops to the most interesting `width × height` window, as libvips' `smartcrop` with
    /// `attention` looks for it: a saliency map of the image shrunk to at most 128 pixels a side
    /// (edges of the lightness, skin tones, saturated colour), blurred at a tenth of the window's
    /// size and weighted gently toward the centre; then the window with the highest sum. An image
    /// already within the size is left as it is.
    ///
    /// With a ``FaceDetector``, faces come first: when it finds any, the window is the one that
    /// holds the most of their area, as near to centring them as that allows
    /// (``FaceDetector/window(width:height:in:around:)``); the saliency decides only a picture
    /// without faces.
    public struct SmartCrop: ImageProcessing, Hashable {
        /// The window's width.
        public let width: Int
        /// The window's height.
        public let height: Int
        /// What finds the faces to keep, if anything does.
        public let faces: FaceDetector?

        /// Makes a smart crop, keeping the faces `faces` finds when it is given. Throws unless the
        /// window is at least 1 × 1.
        public init(width: Int, height: Int, faces: FaceDetector? = nil) throws(ImagoError) {
            guard width > 0, height > 0, width <= Resize.maxSide, height <= Resize.maxSide else {
                throw .processing("smart crop to \(width)×\(height): sides must be 1…\(Resize.maxSide)")
            }
            self.width = width
            self.height = height
            self.faces = faces
        }

        public var identifier: String { "imago.smartcrop(\(width)x\(height)\(faces.map { "," + $0.identifier } ?? ""))" }

        /// The window's top left corner in `image`; its size is this crop's, less any side the
        /// image does not have.
        public func origin(in image: Image) -> (x: Int, y: Int) {
            let cropWidth = min(width, image.width), cropHeight = min(height, image.height)
            guard cropWidth < image.width || cropHeight < image.height else { return (0, 0) }
            if let faces,
                let window = FaceDetector.window(width: cropWidth, height: cropHeight, in: (image.width, image.height), around: faces.faces(in: image))
            {
                return window
            }
            return salientOrigin(in: image, width: cropWidth, height: cropHeight)
        }

        /// The most salient `cropWidth × cropHeight` window's corner.
        private func salientOrigin(in image: Image, width cropWidth: Int, height cropHeight: Int) -> (x: Int, y: Int) {
            let map = Self.saliency(of: image)
            let scaleX = Double(map.width) / Double(image.width), scaleY = Double(map.height) / Double(image.height)
            let windowWidth = max(1, min(map.width, Int((Double(cropWidth) * scaleX).rounded())))
            let windowHeight = max(1, min(map.height, Int((Double(cropHeight) * scaleY).rounded())))
            let sigma = max(1, (Double(windowWidth * windowWidth + windowHeight * windowHeight)).squareRoot() / 10)
            let blurred = map.blurred(sigma: sigma)
            // Summed-area table: any window's sum in four reads.
            let stride = map.width + 1
            var table = [Double](repeating: 0, count: stride * (map.height + 1))
            for y in 0..<map.height {
                var row = 0.0
                for x in 0..<map.width {
                    row += Double(blurred.values[y * map.width + x])
                    table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + row
                }
            }
            var best = (score: -Double.infinity, x: 0, y: 0)
            let freeX = map.width - windowWidth, freeY = map.height - windowHeight
            for y in 0...freeY {
                for x in 0...freeX {
                    let sum =
                        table[(y + windowHeight) * stride + x + windowWidth] - table[y * stride + x + windowWidth]
                        - table[(y + windowHeight) * stride + x] + table[y * stride + x]
                    // Up to 2% off at the far edge: ties and near-ties go to the centre.
                    let offCentreX = freeX == 0 ? 0 : abs(Double(x) / Double(freeX) - 0.5) * 2
                    let offCentreY = freeY == 0 ? 0 : abs(Double(y) / Double(freeY) - 0.5) * 2
                    let score = sum * (1 - 0.02 * max(offCentreX, offCentreY))
                    if score > best.score { best = (score, x, y) }
                }
            }
            let x = Int((Double(best.x) / scaleX).rounded()), y = Int((Double(best.y) / scaleY).rounded())
            return (min(max(x, 0), image.width - cropWidth), min(max(y, 0), image.height - cropHeight))
        }

        public func process(_ image: Image) throws(ImagoError) -> Image {
            let cropWidth = min(width, image.width), cropHeight = min(height, image.height)
            guard cropWidth < image.width || cropHeight < image.height else { return image }
            let (x, y) = origin(in: image)
            return try Crop(x: x, y: y, width: cropWidth, height: cropHeight).process(image)
        }

        /// The saliency of `image`'s first frame at a small scale.
        static func saliency(of image: Image) -> FloatPlane {
            let shrink = max(1, Int((Double(max(image.width, image.height)) / 128).rounded(.up)))
            let width = max(1, image.width / shrink), height = max(1, image.height / shrink)
            let small = boxShrink(image.frames[0].pixels, width: image.width, height: image.height, by: shrink, to: width, height)
            let lightness = FloatPlane.lightness(of: small, width: width, height: height)
            var values = [Float](repeating: 0, count: width * height)
            // smartcrop.js's skin colour, as a unit vector of RGB.
            let skin: (Float, Float, Float) = (0.78, 0.57, 0.44)
            let skinLength = (skin.0 * skin.0 + skin.1 * skin.1 + skin.2 * skin.2).squareRoot()
            for y in 0..<height {
                for x in 0..<width {
                    let index = y * width + x
                    let l = lightness.values[index]
                    let neighbours =
                        lightness.values[y * width + max(x - 1, 0)] + lightness.values[y * width + min(x + 1, width - 1)]
                        + lightness.values[max(y - 1, 0) * width + x] + lightness.values[min(y + 1, height - 1) * width + x]
                    let edge = abs(4 * l - neighbours)
                    let r = Float(small[index * 4]), g = Float(small[index * 4 + 1]), b = Float(small[index * 4 + 2])
                    let length = max((r * r + g * g + b * b).squareRoot(), 1)
                    let dr = r / length - skin.0 / skinLength, dg = g / length - skin.1 / skinLength, db = b / length - skin.2 / skinLength
                    let skinness = 1 - (dr * dr + dg * dg + db * db).squareRoot()
                    let isSkin = skinness > 0.8 && l > 20 && l < 95
                    let chroma = (max(r, g, b) - min(r, g, b)) * (100 / 255)
                    let saturation = l > 5 && l < 95 && chroma > 25 ? chroma : 0
                    let alpha = Float(small[index * 4 + 3]) / 255
                    values[index] = alpha * (edge + (isSkin ? 100 * skinness : 0) + saturation * 0.5)
                }
            }
            return FloatPlane(width: width, height: height, values: values)
        }

        /// RGBA `pixels` of a `width`-wide image, each `shrink × shrink` block averaged into one
        /// pixel of the `newWidth × newHeight` result (the blocks that fit). A map this coarse needs
        /// no better filter, and this reads each pixel once (a Lanczos resize cost more than all the
        /// rest of the crop).
        static func boxShrink(_ pixels: [UInt8], width: Int, height: Int, by shrink: Int, to newWidth: Int, _ newHeight: Int) -> [UInt8] {
            guard shrink > 1 else { return pixels }
            var sums = [UInt32](repeating: 0, count: newWidth * 4)
            var result = [UInt8](repeating: 0, count: newWidth * newHeight * 4)
            // A side shorter than `shrink` makes one block of what there is.
            let columns = min(newWidth * shrink, width), blockWidth = min(shrink, width)
            pixels.withUnsafeBufferPointer { source in
                for y in 0..<newHeight {
                    for i in sums.indices { sums[i] = 0 }
                    let rows = y * shrink..<min((y + 1) * shrink, height)
                    for row in rows {
                        let start = row * width * 4
                        for x in 0..<columns {
                            let target = (x / shrink) * 4, from = start + x * 4
                            sums[target] += UInt32(source[from])
                            sums[target + 1] += UInt32(source[from + 1])
                            sums[target + 2] += UInt32(source[from + 2])
                            sums[target + 3] += UInt32(source[from + 3])
                        }
                    }
                    let area = UInt32(max(1, blockWidth * rows.count))
                    for i in sums.indices { result[y * newWidth * 4 + i] = UInt8(sums[i] / area) }
                }
            }
            return result
        }
    }
}
