// Short names for Imago's processors where a processor is expected, as Nuke spells them:
// `processors: [try .resize(width: 300, height: 300, contentMode: .aspectFill, crop: true)]`.
// Each throws what its processor's initializer throws.

extension ImageProcessing where Self == ImageProcessors.Resize {
    /// A resize to `width × height` pixels (``ImageProcessors/Resize``).
    public static func resize(
        width: Int, height: Int, contentMode: ImageProcessors.Resize.ContentMode = .aspectFit, upscale: Bool = false, crop: Bool = false
    ) throws(ImagoError) -> Self {
        try ImageProcessors.Resize(size: PixelSize(width: width, height: height), contentMode: contentMode, upscale: upscale, crop: crop)
    }

    /// A resize to `size` (``ImageProcessors/Resize``).
    public static func resize(
        size: PixelSize, contentMode: ImageProcessors.Resize.ContentMode = .aspectFit, upscale: Bool = false, crop: Bool = false
    ) throws(ImagoError) -> Self {
        try ImageProcessors.Resize(size: size, contentMode: contentMode, upscale: upscale, crop: crop)
    }
}

extension ImageProcessing where Self == ImageProcessors.Crop {
    /// The rectangle at `x`, `y` of `width × height` pixels (``ImageProcessors/Crop``).
    public static func crop(x: Int, y: Int, width: Int, height: Int) throws(ImagoError) -> Self {
        try ImageProcessors.Crop(x: x, y: y, width: width, height: height)
    }
}

extension ImageProcessing where Self == ImageProcessors.GaussianBlur {
    /// A Gaussian blur of `radius` pixels (``ImageProcessors/GaussianBlur``).
    public static func gaussianBlur(radius: Double) throws(ImagoError) -> Self {
        try ImageProcessors.GaussianBlur(radius: radius)
    }
}

extension ImageProcessing where Self == ImageProcessors.Grayscale {
    /// Gray by luminance (``ImageProcessors/Grayscale``).
    public static var grayscale: Self { ImageProcessors.Grayscale() }
}

extension ImageProcessing where Self == ImageProcessors.RoundedCorners {
    /// Corners rounded to `radius` pixels, with an optional border (``ImageProcessors/RoundedCorners``).
    public static func roundedCorners(radius: Double, border: ImageProcessors.Border? = nil) throws(ImagoError) -> Self {
        try ImageProcessors.RoundedCorners(radius: radius, border: border)
    }
}

extension ImageProcessing where Self == ImageProcessors.Circle {
    /// The largest centred circle, with an optional border (``ImageProcessors/Circle``).
    public static func circle(border: ImageProcessors.Border? = nil) throws(ImagoError) -> Self {
        try ImageProcessors.Circle(border: border)
    }
}
