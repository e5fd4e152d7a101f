import Imago

/// Work on every frame's RGBA pixels at once, shared by the executor's answer policy and the
/// dialects' filters.
enum FramePixels {
    /// `transform` on each frame's pixels; `alpha` sets whether the result has an alpha channel. A
    /// tone change: the gain map stays as it is.
    static func eachFrame<E: Error>(_ image: Image, alpha: Bool? = nil, _ transform: (inout [UInt8]) throws(E) -> Void) throws(E) -> Image {
        var frames = image.frames
        for index in frames.indices { try transform(&frames[index].pixels) }
        var metadata = image.metadata
        if let alpha { metadata.hasAlpha = alpha }
        return Image(width: image.width, height: image.height, frames: frames, loopCount: image.loopCount, metadata: metadata).carryingGainMap(
            of: image, .unchanged)
    }

    /// `width × height` RGBA pixels of `color`.
    static func canvas(_ width: Int, _ height: Int, _ color: RGBAColor) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        var index = 0
        while index < pixels.count {
            pixels[index] = color.red
            pixels[index + 1] = color.green
            pixels[index + 2] = color.blue
            pixels[index + 3] = color.alpha
            index += 4
        }
        return pixels
    }

    /// Every pixel's alpha set to 255, the colours kept (Pillow's `convert("RGB")`).
    static func makeOpaque(_ pixels: inout [UInt8]) {
        var index = 3
        while index < pixels.count {
            pixels[index] = 255
            index += 4
        }
    }
}
