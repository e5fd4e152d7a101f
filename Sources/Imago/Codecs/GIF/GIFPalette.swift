/// At most `maxColors` (2…256) colours for every frame of an image, and each pixel's index into them: the exact
/// colours when there are few enough, else a median cut of a 5-bit-per-channel histogram (each
/// entry the mean of the pixels in its box). Pixels under half opacity share one transparent
/// index, the last. One palette serves every frame, so an animation does not shimmer between
/// frames' palettes and its frames can be written as the rectangles that changed.
struct GIFPalette {
    /// `count` RGB triples.
    private(set) var colors: [UInt8] = []
    /// The index of transparent pixels, when any pixel is under half opacity.
    private(set) var transparentIndex: Int?
    /// The exact colours (`0xRRGGBB`) to their index, when they fit.
    private var exact: [UInt32: UInt8] = [:]
    /// A histogram bin (`r5 g5 b5`) to the index of the box it fell in, when cut (every bin a
    /// pixel of these frames fell in has one).
    private var binIndex: [UInt8] = []

    /// The number of colours, transparency included.
    var count: Int { colors.count / 3 }

    /// The palette of `frames` (RGBA pixels each), at most `maxColors` entries (2…256) with the
    /// transparent one.
    init(frames: [[UInt8]], maxColors: Int = 256) {
        let maxColors = min(max(maxColors, 2), 256)
        var hasTransparency = false
        var counts = [Int](repeating: 0, count: 1 << 15)
        var sums = [Int](repeating: 0, count: 3 << 15)
        var distinct: [UInt32: UInt8]? = [:]
        for pixels in frames {
            pixels.withUnsafeBufferPointer { pixels in
                var last: UInt32 = .max
                for offset in stride(from: 0, to: pixels.count, by: 4) {
                    guard pixels[offset + 3] >= 128 else {
                        hasTransparency = true
                        continue
                    }
                    let (r, g, b) = (pixels[offset], pixels[offset + 1], pixels[offset + 2])
                    let bin = Self.bin(r, g, b)
                    counts[bin] += 1
                    sums[bin * 3] += Int(r)
                    sums[bin * 3 + 1] += Int(g)
                    sums[bin * 3 + 2] += Int(b)
                    let color = UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)
                    guard color != last, distinct != nil else { continue }
                    last = color
                    if distinct?[color] == nil {
                        // One more than the palette holds means cutting.
                        if distinct!.count == maxColors { distinct = nil } else { distinct![color] = 0 }
                    }
                }
            }
        }
        let limit = hasTransparency ? maxColors - 1 : maxColors
        if let distinct, distinct.count <= limit {
            for (index, color) in distinct.keys.sorted().enumerated() {
                exact[color] = UInt8(index)
                colors += [UInt8(color >> 16), UInt8(color >> 8 & 0xFF), UInt8(color & 0xFF)]
            }
        } else {
            cut(counts: counts, sums: sums, limit: limit)
        }
        if hasTransparency {
            transparentIndex = count
            colors += [0, 0, 0]
        }
        // A GIF colour table holds at least two entries (a PNG palette needs one; two do no harm).
        if count < 2 { colors += [0, 0, 0] }
    }

    private static func bin(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> Int {
        Int(r >> 3) << 10 | Int(g >> 3) << 5 | Int(b >> 3)
    }

    /// A box of histogram bins, split at its weighted median along its widest channel.
    private struct Box {
        var bins: [Int]
        var population: Int
        var low = (0, 0, 0)
        var high = (0, 0, 0)

        init(bins: [Int], counts: [Int]) {
            self.bins = bins
            population = bins.reduce(0) { $0 + counts[$1] }
            var low = (31, 31, 31), high = (0, 0, 0)
            for bin in bins {
                let (r, g, b) = (bin >> 10, bin >> 5 & 31, bin & 31)
                low = (min(low.0, r), min(low.1, g), min(low.2, b))
                high = (max(high.0, r), max(high.1, g), max(high.2, b))
            }
            (self.low, self.high) = (low, high)
        }

        /// The channel to split and its span, weighted as the eye weighs them (green most).
        var widest: (channel: Int, span: Int) {
            let spans = [(high.0 - low.0) * 3, (high.1 - low.1) * 4, (high.2 - low.2) * 2]
            let channel = spans.indices.max { spans[$0] < spans[$1] }!
            return (channel, spans[channel])
        }
    }

    /// Median cut: the box with the most pixels times span is split until `limit` boxes (or every
    /// box is one bin); each entry is the mean colour of its box's pixels.
    private mutating func cut(counts: [Int], sums: [Int], limit: Int) {
        var boxes = [Box(bins: (0..<counts.count).filter { counts[$0] > 0 }, counts: counts)]
        while boxes.count < limit {
            let candidates = boxes.indices.filter { boxes[$0].bins.count > 1 }
            guard let chosen = candidates.max(by: { score(boxes[$0]) < score(boxes[$1]) }) else { break }
            let box = boxes[chosen]
            let channel = box.widest.channel
            let shift = [10, 5, 0][channel]
            let sorted = box.bins.sorted { ($0 >> shift) & 31 < ($1 >> shift) & 31 }
            var running = 0, split = 1
            for (index, bin) in sorted.enumerated() {
                running += counts[bin]
                if running * 2 >= box.population {
                    split = min(max(index + 1, 1), sorted.count - 1)
                    break
                }
            }
            boxes[chosen] = Box(bins: Array(sorted[..<split]), counts: counts)
            boxes.append(Box(bins: Array(sorted[split...]), counts: counts))
        }
        binIndex = [UInt8](repeating: 255, count: counts.count)
        for (index, box) in boxes.enumerated() {
            var total = (0, 0, 0)
            for bin in box.bins {
                total = (total.0 + sums[bin * 3], total.1 + sums[bin * 3 + 1], total.2 + sums[bin * 3 + 2])
                binIndex[bin] = UInt8(index)
            }
            let n = max(box.population, 1)
            colors += [UInt8((total.0 + n / 2) / n), UInt8((total.1 + n / 2) / n), UInt8((total.2 + n / 2) / n)]
        }
    }

    private func score(_ box: Box) -> Int { box.population * (box.widest.span + 1) }

    /// Each pixel's index, `width × height` bytes for `pixels` of `width × height × 4`.
    func indices(_ pixels: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: pixels.count / 4)
        var lastColor = UInt32.max, lastIndex: UInt8 = 0
        pixels.withUnsafeBufferPointer { pixels in
            for index in out.indices {
                let offset = index * 4
                guard pixels[offset + 3] >= 128 else {
                    out[index] = UInt8(transparentIndex ?? 0)
                    continue
                }
                let (r, g, b) = (pixels[offset], pixels[offset + 1], pixels[offset + 2])
                if binIndex.isEmpty {
                    // Few colours come in runs: look up only where the colour changes.
                    let color = UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)
                    if color != lastColor { (lastColor, lastIndex) = (color, exact[color] ?? 0) }
                    out[index] = lastIndex
                } else {
                    out[index] = binIndex[Self.bin(r, g, b)]
                }
            }
        }
        return out
    }
}
