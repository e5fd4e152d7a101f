import Foundation

extension GainMap {
    /// The weight the gain map gets on a display with `headroom` (its peak over SDR white, a linear
    /// factor ≥ 1): 0 up to the base headroom, 1 from the alternate headroom, log-linear between,
    /// as ISO 21496-1 and Adobe's gain-map specification say.
    public func weight(headroom: Double) -> Double {
        let stops = log2(max(headroom, 1))
        let span = metadata.alternateHeadroom - metadata.baseHeadroom
        guard span > 0 else { return stops >= metadata.alternateHeadroom ? 1 : 0 }
        return min(max((stops - metadata.baseHeadroom) / span, 0), 1)
    }

    /// The HDR rendition of `base` (the image this gain map belongs to) for a display with
    /// `headroom`: linear-light RGB, three floats a pixel, row by row, 1.0 being SDR white, in the
    /// base's primaries. The base's values are taken as sRGB-encoded; the gain map is sampled
    /// bilinearly at each base pixel's centre; each channel is
    /// `(base + baseOffset) × 2^(weight × lerp(gainMapMin, gainMapMax, value^(1/gamma))) − alternateOffset`.
    public func hdrRendition(of base: Image, headroom: Double) -> [Float] {
        let weight = Float(weight(headroom: headroom))
        let toLinear: [Float] = (0..<256).map { value in
            let encoded = Float(value) / 255
            return encoded <= 0.04045 ? encoded / 12.92 : pow((encoded + 0.055) / 1.055, 2.4)
        }
        let meta = metadata
        let low = meta.gainMapMin.map(Float.init), high = meta.gainMapMax.map(Float.init), gamma = meta.gamma.map { Float(1 / $0) }
        let baseOffset = meta.baseOffset.map(Float.init), alternateOffset = meta.alternateOffset.map(Float.init)
        let (width, height) = (base.width, base.height)
        let scaleX = Float(self.width) / Float(width), scaleY = Float(self.height) / Float(height)
        var result = [Float](repeating: 0, count: width * height * 3)
        let basePixels = base.pixels
        for y in 0..<height {
            let sy = min(max((Float(y) + 0.5) * scaleY - 0.5, 0), Float(self.height - 1))
            let y0 = Int(sy), y1 = min(y0 + 1, self.height - 1), fy = sy - Float(y0)
            for x in 0..<width {
                let sx = min(max((Float(x) + 0.5) * scaleX - 0.5, 0), Float(self.width - 1))
                let x0 = Int(sx), x1 = min(x0 + 1, self.width - 1), fx = sx - Float(x0)
                for channel in 0..<3 {
                    let mapChannel = channelCount == 1 ? 0 : channel
                    func sample(_ px: Int, _ py: Int) -> Float { Float(pixels[(py * self.width + px) * 4 + mapChannel]) }
                    let top = sample(x0, y0) * (1 - fx) + sample(x1, y0) * fx
                    let bottom = sample(x0, y1) * (1 - fx) + sample(x1, y1) * fx
                    var value = (top * (1 - fy) + bottom * fy) / 255
                    if gamma[channel] != 1 { value = pow(value, gamma[channel]) }
                    let logBoost = low[channel] * (1 - value) + high[channel] * value
                    let linear = toLinear[Int(basePixels[(y * width + x) * 4 + channel])]
                    result[(y * width + x) * 3 + channel] = (linear + baseOffset[channel]) * exp2(logBoost * weight) - alternateOffset[channel]
                }
            }
        }
        return result
    }
}
