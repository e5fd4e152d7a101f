import Crypto
import Foundation
import Imago

/// The server's watermark, decoded once and kept: placed on results as imgproxy's `watermark`
/// option places it (scaled to fit a fraction of the result, at a gravity with offsets that may
/// overflow the edges, or tiled with spacing), its alpha and opacity honoured.
struct Watermark: Sendable {
    /// The watermark's pixels (the first frame of an animation).
    let image: Image
    /// A digest of the watermark's bytes and opacity: part of every variant key it marks.
    let identifier: String
    /// The server's opacity (imgproxy's `IMGPROXY_WATERMARK_OPACITY`), multiplied by the URL's.
    let baseOpacity: Double

    /// A watermark from an encoded image. Throws when it does not decode.
    init(data: Data, baseOpacity: Double = 1, decoders: DecoderRegistry = .standard()) throws {
        let decoded = try decoders.decode(data, options: DecodingOptions())
        image = Image(width: decoded.width, height: decoded.height, frames: [decoded.frames[0]], metadata: decoded.metadata)
        let digest = SHA256.hash(data: data).prefix(8).map { String(format: "%02x", $0) }.joined()
        identifier = "\(digest)@\(baseOpacity)"
        self.baseOpacity = baseOpacity
    }

    /// `target` with this watermark placed as `placement` says; offsets in pixels are multiplied
    /// by `dpr`.
    func place(on target: Image, _ placement: ProcessingOptions.WatermarkPlacement, dpr: Double) throws(ImagoError) -> Image {
        let opacity = placement.opacity * baseOpacity
        guard opacity > 0 else { return target }
        var mark = image
        if placement.scale > 0 {
            let box = PixelSize(
                width: max(VariantGeometry.scaleToEven(target.width, placement.scale), 1),
                height: max(VariantGeometry.scaleToEven(target.height, placement.scale), 1))
            mark = try ImageProcessors.Resize(size: box, contentMode: .aspectFit, upscale: true).process(mark)
        }
        var positions: [(x: Int, y: Int)]
        if placement.position.kind == .replicate {
            func spacing(_ offset: Double, _ side: Int) -> Int {
                abs(offset) >= 1 ? Int((offset * dpr).rounded(.toNearestOrEven)) : VariantGeometry.scaleToEven(side, offset)
            }
            let padX = max(0, spacing(placement.position.x, target.width)), padY = max(0, spacing(placement.position.y, target.height))
            if padX > 0 || padY > 0 {
                mark = try ImageProcessors.Extend(
                    width: mark.width + padX, height: mark.height + padY, x: padX / 2, y: padY / 2, background: .transparent
                ).process(mark)
            }
            positions = []
            for y in stride(from: 0, to: target.height, by: mark.height) {
                for x in stride(from: 0, to: target.width, by: mark.width) { positions.append((x, y)) }
            }
        } else {
            positions = [
                VariantGeometry.position(
                    outer: (target.width, target.height), inner: (mark.width, mark.height), gravity: placement.position, dpr: dpr, allowOverflow: true)
            ]
        }
        let overlay = mark
        var result = target
        var metadata = target.metadata
        for index in result.frames.indices {
            var pixels = result.frames[index].pixels
            for position in positions { Self.composite(overlay, onto: &pixels, width: target.width, height: target.height, at: position, opacity: opacity) }
            result.frames[index].pixels = pixels
        }
        metadata.hasAlpha = target.metadata.hasAlpha
        result.metadata = metadata
        return FramePixels.unboosted(
            result, under: overlay.frames[0].pixels, width: overlay.width, height: overlay.height, at: positions, opacity: Float(opacity))
    }

    /// Porter–Duff "over" of `overlay` at `position`, its alpha times `opacity`, on straight-alpha pixels.
    static func composite(_ overlay: Image, onto pixels: inout [UInt8], width: Int, height: Int, at position: (x: Int, y: Int), opacity: Double) {
        let source = overlay.frames[0].pixels
        let left = max(0, position.x), top = max(0, position.y)
        let right = min(width, position.x + overlay.width), bottom = min(height, position.y + overlay.height)
        guard right > left, bottom > top else { return }
        let strength = Float(min(max(opacity, 0), 1))
        pixels.withUnsafeMutableBufferPointer { target in
            for y in top..<bottom {
                for x in left..<right {
                    let s = ((y - position.y) * overlay.width + (x - position.x)) * 4, t = (y * width + x) * 4
                    let a = Float(source[s + 3]) / 255 * strength
                    guard a > 0 else { continue }
                    let below = Float(target[t + 3]) / 255
                    let out = a + below * (1 - a)
                    for channel in 0..<3 {
                        let value = (Float(source[s + channel]) * a + Float(target[t + channel]) * below * (1 - a)) / out
                        target[t + channel] = UInt8(min(max(value.rounded(), 0), 255))
                    }
                    target[t + 3] = UInt8(min(max((out * 255).rounded(), 0), 255))
                }
            }
        }
    }
}
