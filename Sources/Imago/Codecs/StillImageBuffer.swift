/// What Imago's decoders in Swift (PNM, BMP, TGA) share: the limits checked before the one pixel
/// buffer is allocated, and the still image made from it.
extension DecodingOptions {
    /// An RGBA buffer for one `width × height` image, every byte `fill`, allocated only after the
    /// size and memory limits pass.
    func stillImageBuffer(width: Int, height: Int, fill: UInt8) throws(ImagoError) -> [UInt8] {
        try check(width: width, height: height)
        try checkMemory(1, width: width, height: height)
        // check(width:height:) bounds width × height by maxPixels, so × 4 cannot overflow.
        return [UInt8](repeating: fill, count: width * height * 4)
    }
}

extension Image {
    /// A still image decoded from `format`, upright as stored.
    init(still pixels: [UInt8], width: Int, height: Int, format: ImageFormat, hasAlpha: Bool) {
        let metadata = ImageMetadata(format: format, originalWidth: width, originalHeight: height, hasAlpha: hasAlpha)
        self.init(width: width, height: height, frames: [Frame(pixels: pixels)], metadata: metadata)
    }
}
