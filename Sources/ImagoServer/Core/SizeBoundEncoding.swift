import Foundation
import Imago

/// imgproxy's `max_bytes`: the image encoded at its quality, then, while the bytes are over the
/// bound, at lower qualities found by bisection between 1 and the last that did not fit, keeping
/// the best that fits; at most ``maxEncodes`` encodes. When none fits, the smallest reached is
/// the answer. Only a format whose table row ``Imago/ImageFormatInfo/takesQuality`` has a quality to
/// lower; any other (PNG, GIF, TIFF, BMP, ICO) is encoded once.
enum SizeBoundEncoding {
    /// The most encodes one image may take.
    static let maxEncodes = 6

    /// The bytes, the quality they were made at, and how many encodes it took.
    static func encode(
        _ image: Image, as format: OutputFormat, quality: Int, maxBytes: Int, settings: ImageFormat.EncoderSettings = .init()
    ) throws -> (data: Data, quality: Int, encodes: Int) {
        let first = try format.encoder(quality: quality, settings: settings).encode(image)
        guard maxBytes > 0, first.count > maxBytes, format.takesQuality, quality > 1 else { return (first, quality, 1) }
        var best: (data: Data, quality: Int)? = nil
        var smallest = (data: first, quality: quality)
        var (low, high) = (1, quality - 1)
        var encodes = 1
        while low <= high, encodes < maxEncodes {
            let middle = encodes == 1 ? max(1, min(high, quality / 2)) : (low + high + 1) / 2
            let data = try format.encoder(quality: middle, settings: settings).encode(image)
            encodes += 1
            if data.count < smallest.data.count { smallest = (data, middle) }
            if data.count <= maxBytes {
                best = (data, middle)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        let chosen = best ?? smallest
        return (chosen.data, chosen.quality, encodes)
    }
}
