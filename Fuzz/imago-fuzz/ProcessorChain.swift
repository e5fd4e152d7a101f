import Imago

/// The `process` harness's input read as an image and a chain of processors: a small image (sides
/// 1…64, its pixels from the bytes) through up to four processors whose kinds and parameters the
/// bytes choose, so the resampler's C and Swift passes meet every reduction, enlargement, one-pixel
/// side and crop, and blurs and corners meet odd sizes. Every chain must end in an image or an
/// ImagoError.
enum ProcessorChain {
    static func run(_ data: [UInt8]) {
        var stream = ByteStream(data)
        let width = 1 + Int(stream.byte() % 64), height = 1 + Int(stream.byte() % 64)
        let pixels = (0..<width * height * 4).map { _ in stream.byte() }
        let metadata = ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: true)
        var image = Image(width: width, height: height, frames: [Image.Frame(pixels: pixels)], metadata: metadata)
        for _ in 0..<(1 + Int(stream.byte() % 4)) {
            guard let processor = processor(&stream), let processed = try? processor.process(image) else { continue }
            guard processed.frames.allSatisfy({ $0.pixels.count == processed.width * processed.height * 4 }) else {
                fatalError("\(processor.identifier) made frames that do not match \(processed.width)×\(processed.height)")
            }
            image = processed
        }
    }

    /// The next processor the bytes ask for, or nil when its parameters are refused.
    private static func processor(_ stream: inout ByteStream) -> (any ImageProcessing)? {
        let kind = stream.byte() % 13
        switch kind {
        case 0:
            // Up to 512 on a side: enlargements of up to 512× from one pixel.
            let size = PixelSize(width: stream.uint16() % 513, height: stream.uint16() % 513)
            let modes = ImageProcessors.Resize.ContentMode.allCases
            let flags = stream.byte()
            return try? ImageProcessors.Resize(
                size: size, contentMode: modes[Int(flags) % modes.count], upscale: flags & 8 != 0, crop: flags & 16 != 0)
        case 1:
            // Radii up to 8: a wider kernel runs the same passes longer (a radius of 32 on a
            // 512-pixel enlargement took 26 s in this sanitized debug build), which is no finding.
            return try? ImageProcessors.GaussianBlur(radius: Double(stream.byte()) / 32)
        case 2:
            return try? ImageProcessors.Crop(
                x: Int(stream.byte()) - 8, y: Int(stream.byte()) - 8, width: Int(stream.byte()), height: Int(stream.byte()))
        case 3:
            return try? ImageProcessors.RoundedCorners(radius: Double(stream.byte()) / 2)
        case 4:
            return ImageProcessors.Rotate(degrees: Int(stream.byte() % 8) * 90 - 360)
        case 5:
            let flags = stream.byte()
            return ImageProcessors.Flip(horizontal: flags & 1 != 0, vertical: flags & 2 != 0)
        case 6:
            let color = RGBAColor(red: stream.byte(), green: stream.byte(), blue: stream.byte(), alpha: stream.byte())
            return try? ImageProcessors.Extend(
                width: Int(stream.byte()), height: Int(stream.byte()), x: Int(stream.byte()) - 128, y: Int(stream.byte()) - 128, background: color)
        case 7:
            return ImageProcessors.Flatten(background: RGBAColor(red: stream.byte(), green: stream.byte(), blue: stream.byte()))
        case 8:
            return try? ImageProcessors.Sharpen(sigma: Double(stream.byte()) / 32)
        case 9:
            return try? ImageProcessors.Pixelate(size: Int(stream.byte()))
        case 10:
            let flags = stream.byte()
            let color = flags & 1 != 0 ? RGBAColor(red: stream.byte(), green: stream.byte(), blue: stream.byte()) : nil
            return try? ImageProcessors.Trim(threshold: Double(stream.byte()), color: color, equalHorizontal: flags & 2 != 0, equalVertical: flags & 4 != 0)
        case 11:
            return try? ImageProcessors.SmartCrop(width: Int(stream.byte()), height: Int(stream.byte()))
        default:
            return ImageProcessors.Grayscale()
        }
    }
}
