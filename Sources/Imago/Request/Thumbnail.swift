import Foundation

extension ImageRequest {
    /// Asks for an image no larger than needed: decoded at a reduced scale where the format allows
    /// (JPEG DCT scaling, WebP scaled decode), then resampled to exactly the size asked for.
    public struct Thumbnail: Sendable, Hashable {
        /// The box to fit or fill, in points; pixels are this times ``scale``.
        public var size: PixelSize
        /// How the image meets the box: `aspectFit` (whole image inside), `aspectFill` (cropped to
        /// the box), `fill` (stretched) or `center` (only shrunk).
        public var contentMode: ImageProcessors.Resize.ContentMode
        /// Pixels per point, such as 2 for a `@2x` display.
        public var scale: Double

        /// A thumbnail of `size` points at `scale` pixels per point.
        public init(size: PixelSize, contentMode: ImageProcessors.Resize.ContentMode = .aspectFit, scale: Double = 1) {
            self.size = size
            self.contentMode = contentMode
            self.scale = scale
        }

        /// A thumbnail whose longer side is at most `maxPixelSize` pixels.
        public init(maxPixelSize: Int) {
            self.init(size: PixelSize(width: maxPixelSize, height: maxPixelSize))
        }

        /// The box in pixels: size × scale, each side from 1 to 65,535 and at most 100 megapixels in
        /// all (a box the caller sets larger, or a scale that is not a finite positive number, is
        /// brought within them).
        public var pixelSize: PixelSize {
            let scale = scale.isFinite && scale > 0 ? min(scale, 16) : 1
            func side(_ points: Int) -> Int {
                Int(min(max((Double(points) * scale).rounded(), 1), Double(ImageProcessors.Resize.maxSide)))
            }
            var box = PixelSize(width: side(size.width), height: side(size.height))
            if box.width * box.height > ImageProcessors.Resize.maxPixels {
                let shrink = (Double(ImageProcessors.Resize.maxPixels) / Double(box.width * box.height)).squareRoot()
                box = PixelSize(width: max(1, Int(Double(box.width) * shrink)), height: max(1, Int(Double(box.height) * shrink)))
            }
            return box
        }

        /// The resize that finishes the thumbnail after the reduced decode.
        public var resize: ImageProcessors.Resize {
            ImageProcessors.Resize(checkedSize: pixelSize, contentMode: contentMode, crop: contentMode == .aspectFill)
        }

        var identifier: String { "thumbnail(\(resize.identifier))" }

        /// `image`, decoded at a reduced scale, resampled to the thumbnail. The size comes from
        /// the original's upright size, not from the reduced decode's (whose sides were rounded),
        /// so a thumbnail is the same whatever scale its decode used.
        func finish(_ image: Image) throws(ImagoError) -> Image {
            try resize.finishingReducedDecode(image)
        }

        /// `options` asking decoders for the smallest scale that still covers this thumbnail.
        func decodingOptions(_ options: DecodingOptions) -> DecodingOptions {
            resize.reducedDecodingOptions(options)
        }
    }
}
