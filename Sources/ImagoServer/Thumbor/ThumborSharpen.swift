import Foundation

/// thumbor's `sharpen(amount, radius, luminance_only)`: Marco Rossini's wavelet sharpen as
/// thumbor's C runs it — five levels of the à trous "hat" transform on each of R, G and B (or on
/// luma only), each level's detail amplified by `amount × exp(-(level - radius)² / 1.5) + 1`, in
/// single precision.
enum ThumborSharpen {
    static func apply(_ pixels: inout [UInt8], width: Int, height: Int, amount: Double, radius: Double, luminanceOnly: Bool) {
        let area = width * height
        guard area > 0 else { return }
        var planes = [[Float]](repeating: [Float](repeating: 0, count: area), count: 3)
        for i in 0..<area {
            var p = (Float(pixels[i * 4]), Float(pixels[i * 4 + 1]), Float(pixels[i * 4 + 2]))
            if luminanceOnly {
                let y = 0.2990 * p.0 + 0.5870 * p.1 + 0.1140 * p.2
                let cb = -0.1687 * p.0 - 0.3313 * p.1 + 0.5000 * p.2 + 128
                let cr = 0.5000 * p.0 - 0.4187 * p.1 - 0.0813 * p.2 + 128
                p = (y, cb, cr)
            }
            planes[0][i] = p.0 / 255
            planes[1][i] = p.1 / 255
            planes[2][i] = p.2 / 255
        }
        for c in 0..<3 where !luminanceOnly || c == 0 {
            wavelet(&planes[c], width: width, height: height, amount: amount, radius: radius)
        }
        for i in 0..<area {
            var p = (planes[0][i] * 255, planes[1][i] * 255, planes[2][i] * 255)
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

    /// One channel: `base` is sharpened in place (fimg[0] in the C).
    private static func wavelet(_ base: inout [Float], width: Int, height: Int, amount: Double, radius: Double) {
        let size = width * height
        var buffers = [base, [Float](repeating: 0, count: size), [Float](repeating: 0, count: size)]
        var temp = [Float](repeating: 0, count: max(width, height))
        var hpass = 0, lpass = 0
        for level in 0..<5 {
            lpass = (level & 1) + 1
            let scale = 1 << level
            for row in 0..<height {
                hat(&temp, buffers[hpass], start: row * width, step: 1, size: width, scale: scale)
                for column in 0..<width { buffers[lpass][row * width + column] = temp[column] * 0.25 }
            }
            for column in 0..<width {
                hat(&temp, buffers[lpass], start: column, step: width, size: height, scale: scale)
                for row in 0..<height { buffers[lpass][row * width + column] = temp[row] * 0.25 }
            }
            let distance = Double(level) - radius
            let amplification = Float(amount * exp(-distance * distance / 1.5) + 1)
            for i in 0..<size {
                buffers[hpass][i] -= buffers[lpass][i]
                buffers[hpass][i] *= amplification
                if hpass != 0 { buffers[0][i] += buffers[hpass][i] }
            }
            hpass = lpass
        }
        for i in 0..<size { buffers[0][i] += buffers[lpass][i] }
        base = buffers[0]
    }

    /// The C's `hat_transform`, indices mirrored at the ends (and clamped, where the C would read
    /// outside a side shorter than the scale).
    private static func hat(_ temp: inout [Float], _ base: [Float], start: Int, step: Int, size: Int, scale: Int) {
        func at(_ i: Int) -> Float { base[start + step * min(max(i, 0), size - 1)] }
        var i = 0
        while i < scale, i < size {
            temp[i] = 2 * at(i) + at(scale - i) + at(i + scale)
            i += 1
        }
        while i + scale < size {
            temp[i] = 2 * at(i) + at(i - scale) + at(i + scale)
            i += 1
        }
        while i < size {
            temp[i] = 2 * at(i) + at(i - scale) + at(2 * size - 2 - (i + scale))
            i += 1
        }
    }
}
