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

    /// `image` with its gain map faded to no boost under copies of an overlay (RGBA8,
    /// `overlayWidth × overlayHeight`) drawn at `spots` with their alpha times `opacity`: a
    /// watermark is not part of the HDR photo, so it is not boosted (``GainMap/covered(by:baseWidth:baseHeight:)``).
    static func unboosted(
        _ image: Image, under overlay: [UInt8], width overlayWidth: Int, height overlayHeight: Int, at spots: [(x: Int, y: Int)], opacity: Float = 1
    ) -> Image {
        guard let map = image.gainMap else { return image }
        var coverage = [Float](repeating: 0, count: image.width * image.height)
        for spot in spots {
            for y in max(0, spot.y)..<max(max(0, spot.y), min(image.height, spot.y + overlayHeight)) {
                for x in max(0, spot.x)..<max(max(0, spot.x), min(image.width, spot.x + overlayWidth)) {
                    let alpha = Float(overlay[((y - spot.y) * overlayWidth + (x - spot.x)) * 4 + 3]) / 255 * opacity
                    coverage[y * image.width + x] = 1 - (1 - coverage[y * image.width + x]) * (1 - alpha)
                }
            }
        }
        var result = image
        result.gainMap = map.covered(by: coverage, baseWidth: image.width, baseHeight: image.height)
        return result
    }
}
