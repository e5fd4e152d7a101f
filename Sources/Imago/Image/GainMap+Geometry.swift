import Foundation

extension GainMap {
    /// How a step moved the base's pixels, which the gain map follows at its own scale. This is the
    /// one rule every processor and every server step states for the gain map:
    /// - a step that changes tones only (colour, greyscale, blur, sharpen, pixelate, rounded
    ///   corners, thumbor's colour filters) keeps the gain map as it is: ``unchanged``;
    /// - a step that puts new content over the picture (a flatten onto a background where it was
    ///   transparent, a watermark) fades the map to no boost under it
    ///   (``covered(by:baseWidth:baseHeight:)``): what was not in the HDR photo is not boosted;
    /// - a step that cuts, scales or pads maps a rectangle of the old base onto the whole new one:
    ///   ``region(x:y:width:height:)``, where what lies outside the old base gets no boost;
    /// - turns and mirrors are done to the gain map's pixels as to the base's.
    public enum Geometry: Sendable, Hashable {
        /// Tones changed, no pixel moved.
        case unchanged
        /// The rectangle at (`x`, `y`), `width × height` in the old base's pixels (it may reach
        /// outside the old base: padding), now fills the whole new base.
        case region(x: Double, y: Double, width: Double, height: Double)
        /// Turned clockwise by quarter turns.
        case rotate(quarterTurns: Int)
        /// Mirrored.
        case flip(horizontal: Bool, vertical: Bool)
        /// Turned upright from a stored EXIF orientation.
        case orient(ImageOrientation)
    }

    /// This gain map moved as `geometry` moved a base of `base` pixels into one of `newBase` pixels;
    /// its own scale (base pixels per gain-map pixel) stays what it was.
    public func applying(_ geometry: Geometry, base: PixelSize, newBase: PixelSize) -> GainMap {
        switch geometry {
        case .unchanged:
            return self
        case .rotate(let quarterTurns):
            guard let rotate = ImageProcessors.Rotate(degrees: quarterTurns * 90), let turned = try? rotate.process(image) else { return self }
            return replacing(turned)
        case .flip(let horizontal, let vertical):
            guard let flipped = try? ImageProcessors.Flip(horizontal: horizontal, vertical: vertical).process(image) else { return self }
            return replacing(flipped)
        case .orient(let orientation):
            let upright = orientation.apply(to: pixels, width: width, height: height)
            return GainMap(width: upright.width, height: upright.height, pixels: upright.pixels, channelCount: channelCount, metadata: metadata)
        case .region(let x, let y, let regionWidth, let regionHeight):
            guard base.width > 0, base.height > 0, regionWidth > 0, regionHeight > 0 else { return self }
            let scaleX = Double(width) / Double(base.width), scaleY = Double(height) / Double(base.height)
            let outWidth = max(1, min(newBase.width, Int((Double(newBase.width) * scaleX).rounded())))
            let outHeight = max(1, min(newBase.height, Int((Double(newBase.height) * scaleY).rounded())))
            let horizontal = GainMapResampling.weights(from: x * scaleX, length: regionWidth * scaleX, source: width, output: outWidth)
            let vertical = GainMapResampling.weights(from: y * scaleY, length: regionHeight * scaleY, source: height, output: outHeight)
            let resampled = GainMapResampling.resample(self, horizontal: horizontal, vertical: vertical, outWidth: outWidth, outHeight: outHeight)
            return GainMap(width: outWidth, height: outHeight, pixels: resampled, channelCount: channelCount, metadata: metadata)
        }
    }
}

extension Image {
    /// This image carrying `source`'s gain map, moved by `geometry` from `source`'s size to this
    /// image's; none when `source` has none.
    public func carryingGainMap(of source: Image, _ geometry: GainMap.Geometry) -> Image {
        var image = self
        image.gainMap = source.gainMap?.applying(
            geometry, base: PixelSize(width: source.width, height: source.height), newBase: PixelSize(width: width, height: height))
        return image
    }
}

/// A separable area-average resampler over a fractional source interval, for gain maps: a gain map
/// is smooth, so an average over each output pixel's footprint (bilinear when enlarging) is its
/// right filter, and it can start or end between pixels, as a crop of a scaled map does.
enum GainMapResampling {
    /// For each output index, the source indices and their weights (summing to 1); index -1 stands
    /// for outside the source, which shows no boost.
    typealias Weights = [[(index: Int, weight: Float)]]

    static func weights(from start: Double, length: Double, source: Int, output: Int) -> Weights {
        let step = length / Double(output)
        return (0..<output).map { index in
            let low = start + Double(index) * step, high = low + step
            if step < 1 {
                // Enlarging: bilinear at the footprint's centre, edges clamped.
                let centre = (low + high) / 2 - 0.5
                guard centre >= -0.5, centre <= Double(source) - 0.5 else { return [(index: -1, weight: Float(1))] }
                let clamped = min(max(centre, 0), Double(source - 1))
                let left = Int(clamped.rounded(.down)), fraction = Float(clamped - Double(left))
                guard left + 1 < source, fraction > 0 else { return [(index: left, weight: Float(1))] }
                return [(index: left, weight: 1 - fraction), (index: left + 1, weight: fraction)]
            }
            var taps: [(index: Int, weight: Float)] = []
            var outside = 0.0
            var pixel = Int(low.rounded(.down))
            while Double(pixel) < high {
                let overlap = min(high, Double(pixel + 1)) - max(low, Double(pixel))
                if overlap > 0 {
                    if pixel < 0 || pixel >= source { outside += overlap } else { taps.append((pixel, Float(overlap / step))) }
                }
                pixel += 1
            }
            if outside > 0 { taps.append((-1, Float(outside / step))) }
            return taps
        }
    }

    static func resample(_ map: GainMap, horizontal: Weights, vertical: Weights, outWidth: Int, outHeight: Int) -> [UInt8] {
        let none = map.noBoostValue
        let noBoost = SIMD3<Float>(Float(none.0), Float(none.1), Float(none.2))
        let (width, height) = (map.width, map.height)
        /// The taps' weighted sum of `sample(index)`, outside (index -1) counting as no boost.
        func blend(_ taps: [(index: Int, weight: Float)], _ sample: (Int) -> SIMD3<Float>) -> SIMD3<Float> {
            taps.reduce(SIMD3<Float>()) { sum, tap in sum + (tap.index < 0 ? noBoost : sample(tap.index)) * tap.weight }
        }
        // Rows first: height × outWidth.
        var rows = [SIMD3<Float>](repeating: SIMD3<Float>(), count: height * outWidth)
        map.pixels.withUnsafeBufferPointer { source in
            for y in 0..<height {
                for x in 0..<outWidth {
                    rows[y * outWidth + x] = blend(horizontal[x]) { index in
                        let offset = (y * width + index) * 4
                        return SIMD3<Float>(Float(source[offset]), Float(source[offset + 1]), Float(source[offset + 2]))
                    }
                }
            }
        }
        var result = [UInt8](repeating: 255, count: outWidth * outHeight * 4)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                let value = blend(vertical[y]) { rows[$0 * outWidth + x] }
                let target = (y * outWidth + x) * 4
                for channel in 0..<3 { result[target + channel] = UInt8(min(max(value[channel].rounded(), 0), 255)) }
            }
        }
        return result
    }
}

extension GainMap {
    /// This gain map where new content covers the base: `coverage` holds, for each base pixel of a
    /// `baseWidth × baseHeight` base, how much of it is now something the map never described (1 for
    /// a background that shows through where the picture was transparent, a watermark's alpha),
    /// and the map fades to no boost there. The rule for steps that draw over the picture or
    /// flatten it onto a colour: what was not in the HDR photo is not boosted.
    public func covered(by coverage: [Float], baseWidth: Int, baseHeight: Int) -> GainMap {
        guard baseWidth > 0, baseHeight > 0, coverage.count == baseWidth * baseHeight, coverage.contains(where: { $0 > 0 }) else { return self }
        let horizontal = GainMapResampling.weights(from: 0, length: Double(baseWidth), source: baseWidth, output: width)
        let vertical = GainMapResampling.weights(from: 0, length: Double(baseHeight), source: baseHeight, output: height)
        var rows = [Float](repeating: 0, count: baseHeight * width)
        for y in 0..<baseHeight {
            for x in 0..<width {
                var sum: Float = 0
                for tap in horizontal[x] where tap.index >= 0 { sum += coverage[y * baseWidth + tap.index] * tap.weight }
                rows[y * width + x] = sum
            }
        }
        let none = noBoostValue
        let target: [Float] = [Float(none.0), Float(none.1), Float(none.2)]
        var result = pixels
        for y in 0..<height {
            for x in 0..<width {
                var amount: Float = 0
                for tap in vertical[y] where tap.index >= 0 { amount += rows[tap.index * width + x] * tap.weight }
                amount = min(max(amount, 0), 1)
                guard amount > 0 else { continue }
                let offset = (y * width + x) * 4
                for channel in 0..<3 {
                    let value = Float(result[offset + channel]) * (1 - amount) + target[channel] * amount
                    result[offset + channel] = UInt8(min(max(value.rounded(), 0), 255))
                }
            }
        }
        return GainMap(width: width, height: height, pixels: result, channelCount: channelCount, metadata: metadata)
    }
}
