import Foundation

/// thumbor's `sharpen(amount, radius, luminance_only)`: Marco Rossini's wavelet sharpen as
/// thumbor's C runs it — five levels of the à trous "hat" transform on each of R, G and B (or on
/// luma only), each level's detail amplified by `amount × exp(-(level - radius)² / 1.5) + 1`, in
/// single precision.
enum ThumborSharpen {
    static func apply(_ pixels: inout [UInt8], width: Int, height: Int, amount: Double, radius: Double, luminanceOnly: Bool) {
        let area = width * height
        guard area > 0 else { return }
        var planes = [Float](repeating: 0, count: 3 * area)
        pixels.withUnsafeBufferPointer { pixels in
            planes.withUnsafeMutableBufferPointer { planes in
                for i in 0..<area {
                    var p = (Float(pixels[i * 4]), Float(pixels[i * 4 + 1]), Float(pixels[i * 4 + 2]))
                    if luminanceOnly {
                        let y = 0.2990 * p.0 + 0.5870 * p.1 + 0.1140 * p.2
                        let cb = -0.1687 * p.0 - 0.3313 * p.1 + 0.5000 * p.2 + 128
                        let cr = 0.5000 * p.0 - 0.4187 * p.1 - 0.0813 * p.2 + 128
                        p = (y, cb, cr)
                    }
                    planes[i] = p.0 / 255
                    planes[area + i] = p.1 / 255
                    planes[2 * area + i] = p.2 / 255
                }
                for c in 0..<3 where !luminanceOnly || c == 0 {
                    wavelet(planes.baseAddress! + c * area, width: width, height: height, amount: amount, radius: radius)
                }
            }
        }
        for i in 0..<area {
            var p = (planes[i] * 255, planes[area + i] * 255, planes[2 * area + i] * 255)
            if luminanceOnly {
                let r = p.0 + 1.40200 * (p.2 - 128)
                let g = p.0 - 0.34414 * (p.1 - 128) - 0.71414 * (p.2 - 128)
                let b = p.0 + 1.77200 * (p.1 - 128)
                p = (r, g, b)
            }
            pixels[i * 4] = byte(p.0)
            pixels[i * 4 + 1] = byte(p.1)
            pixels[i * 4 + 2] = byte(p.2)
        }
    }

    /// `ADJUST_COLOR` on a float, then C's conversion to a byte (truncation).
    private static func byte(_ value: Float) -> UInt8 {
        guard value.isFinite else { return 0 }
        return value > 255 ? 255 : value < 0 ? 0 : UInt8(value)
    }

    /// One channel: `base` is sharpened in place (fimg[0] in the C). The C's column pass goes
    /// through a temporary per column; here it writes a scratch plane row by row (the same sums,
    /// so the same floats), which then takes the low-pass plane's place.
    private static func wavelet(_ base: UnsafeMutablePointer<Float>, width: Int, height: Int, amount: Double, radius: Double) {
        let size = width * height
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 3 * size)
        storage.initialize(repeating: 0, count: 3 * size)
        defer { storage.deallocate() }
        var planes = [base, storage, storage + size]
        var scratch = storage + 2 * size
        var hpass = 0, lpass = 0
        for level in 0..<5 {
            lpass = (level & 1) + 1
            let scale = 1 << level
            for row in 0..<height {
                hatRow(planes[hpass] + row * width, into: planes[lpass] + row * width, size: width, scale: scale)
            }
            hatColumns(planes[lpass], into: scratch, width: width, height: height, scale: scale)
            swap(&planes[lpass], &scratch)
            let distance = Double(level) - radius
            let amplification = Float(amount * exp(-distance * distance / 1.5) + 1)
            let (high, low) = (planes[hpass], planes[lpass])
            for i in 0..<size {
                high[i] -= low[i]
                high[i] *= amplification
            }
            if hpass != 0 { for i in 0..<size { base[i] += high[i] } }
            hpass = lpass
        }
        let low = planes[lpass]
        for i in 0..<size { base[i] += low[i] }
    }

    /// The C's `hat_transform` along a row, times 0.25: indices mirrored at the ends (and
    /// clamped, where the C would read outside a side shorter than the scale).
    private static func hatRow(_ source: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, size: Int, scale: Int) {
        func at(_ i: Int) -> Float { source[min(max(i, 0), size - 1)] }
        var i = 0
        while i < scale, i < size {
            target[i] = (2 * at(i) + at(scale - i) + at(i + scale)) * 0.25
            i += 1
        }
        while i + scale < size {
            target[i] = (2 * source[i] + source[i - scale] + source[i + scale]) * 0.25
            i += 1
        }
        while i < size {
            target[i] = (2 * at(i) + at(i - scale) + at(2 * size - 2 - (i + scale))) * 0.25
            i += 1
        }
    }

    /// `hat_transform` down every column at once: each target row from three source rows, chosen
    /// as `hatRow` chooses its indices.
    private static func hatColumns(_ source: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, width: Int, height: Int, scale: Int) {
        func row(_ i: Int) -> UnsafeMutablePointer<Float> { source + min(max(i, 0), height - 1) * width }
        for i in 0..<height {
            let (left, right) =
                i < scale ? (scale - i, i + scale) : i + scale < height ? (i - scale, i + scale) : (i - scale, 2 * height - 2 - (i + scale))
            let (middle, above, below, out) = (row(i), row(left), row(right), target + i * width)
            for x in 0..<width { out[x] = (2 * middle[x] + above[x] + below[x]) * 0.25 }
        }
    }
}
