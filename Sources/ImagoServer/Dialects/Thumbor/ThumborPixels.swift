import Foundation
import Imago

/// thumbor's pixel filters (its C extensions in `thumbor/ext/filters`), on one frame of RGBA
/// pixels: the same integer arithmetic, truncations and clamps, so the same URL gives the same
/// bytes. `alpha` says whether the image has an alpha channel, which thumbor's filters that
/// touch every channel (convolution, blur) change only then.
enum ThumborPixels {
    /// thumbor's `ADJUST_COLOR`: clamped to 0…255.
    @inline(__always) static func clamp(_ value: Int) -> UInt8 { UInt8(max(0, min(255, value))) }
    /// `ADJUST_COLOR_DOUBLE`: clamped, then truncated.
    @inline(__always) static func clamp(_ value: Double) -> UInt8 { value > 255 ? 255 : value < 0 ? 0 : UInt8(Int(value)) }

    /// Each of R, G and B through `transform`; alpha kept.
    static func mapColor(_ pixels: inout [UInt8], _ transform: (Int, Int, Int) -> (UInt8, UInt8, UInt8)) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            var index = 0
            while index + 3 < buffer.count {
                let (r, g, b) = transform(Int(buffer[index]), Int(buffer[index + 1]), Int(buffer[index + 2]))
                buffer[index] = r
                buffer[index + 1] = g
                buffer[index + 2] = b
                index += 4
            }
        }
    }

    /// `brightness(percent)`: `255 × percent / 100` added to each channel (C integer division).
    static func brightness(_ pixels: inout [UInt8], _ percent: Int) {
        let delta = (255 &* percent) / 100
        mapColor(&pixels) { (clamp($0 &+ delta), clamp($1 &+ delta), clamp($2 &+ delta)) }
    }

    /// `contrast(percent)`.
    static func contrast(_ pixels: inout [UInt8], _ percent: Int) {
        let base = percent &+ 100
        let factor = (base &* base) / 100
        func adjust(_ c: Int) -> UInt8 { clamp((factor &* (c - 128)) / 100 + 128) }
        mapColor(&pixels) { (adjust($0), adjust($1), adjust($2)) }
    }

    /// `rgb(r, g, b)`: each a percentage of 255 added.
    static func rgb(_ pixels: inout [UInt8], _ red: Int, _ green: Int, _ blue: Int) {
        let (dr, dg, db) = ((255 &* red) / 100, (255 &* green) / 100, (255 &* blue) / 100)
        mapColor(&pixels) { (clamp($0 &+ dr), clamp($1 &+ dg), clamp($2 &+ db)) }
    }

    /// `saturation(change)`, in single precision as thumbor's C (alienryderflex's formula).
    static func saturation(_ pixels: inout [UInt8], _ change: Double) {
        let change = Float(change)
        mapColor(&pixels) { r, g, b in
            let p = Float((Double(r * r) * 0.299 + Double(g * g) * 0.587 + Double(b * b) * 0.114).squareRoot())
            func adjust(_ c: Int) -> UInt8 {
                let value = p + (Float(c) - p) * change
                guard value.isFinite else { return value > 0 ? 255 : 0 }
                return clamp(Int(max(-1e9, min(1e9, value))))
            }
            return (adjust(r), adjust(g), adjust(b))
        }
    }

    /// `colorize(r%, g%, b%, fill)`: each channel blended toward the fill's by its percentage.
    static func colorize(_ pixels: inout [UInt8], percents: (Int, Int, Int), fill: (Int, Int, Int)) {
        func blend(_ c: Int, _ percent: Int, _ target: Int) -> UInt8 {
            let value = (Double(c) * (100 - Double(percent)) + Double(target) * Double(percent)) / 100
            return clamp(Int(max(-1e9, min(1e9, value))))
        }
        mapColor(&pixels) { (blend($0, percents.0, fill.0), blend($1, percents.1, fill.1), blend($2, percents.2, fill.2)) }
    }

    /// `equalize()`: each channel's histogram equalised (thumbor's minimum-CDF variant).
    static func equalize(_ pixels: inout [UInt8]) {
        let area = pixels.count / 4
        var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 3)
        var index = 0
        while index + 3 < pixels.count {
            for c in 0..<3 { histograms[c][Int(pixels[index + c])] += 1 }
            index += 4
        }
        var cumulative = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 3)
        for c in 0..<3 {
            var sum = 0
            for level in 0..<256 {
                sum += histograms[c][level]
                if histograms[c][level] > 0 { cumulative[c][level] = sum }
            }
        }
        // thumbor stops at the first level where any channel has a count: the others keep 0.
        var minimum = [0, 0, 0]
        var level = 0
        while minimum == [0, 0, 0], level < 256 {
            for c in 0..<3 where minimum[c] == 0 && cumulative[c][level] != 0 { minimum[c] = cumulative[c][level] }
            level += 1
        }
        let tables = (0..<3).map { c in
            (0..<256).map { level -> UInt8 in
                let value = (Float(cumulative[c][level] - minimum[c]) / Float(area - minimum[c])) * 255
                // C's float-to-byte conversion of a value outside 0…255 (or NaN) is undefined; 0 here.
                guard value.isFinite, value >= 0, value < 256 else { return 0 }
                return UInt8(value)
            }
        }
        mapColor(&pixels) { (tables[0][$0], tables[1][$1], tables[2][$2]) }
    }

    /// `curve(all, r, g, b)`: each channel through its cubic spline, then all through the first.
    static func curve(_ pixels: inout [UInt8], all: [ThumborPoint], red: [ThumborPoint], green: [ThumborPoint], blue: [ThumborPoint]) {
        let (a, r, g, b) = (spline(all), spline(red), spline(green), spline(blue))
        mapColor(&pixels) { (a[Int(r[$0])], a[Int(g[$1])], a[Int(b[$2])]) }
    }

    /// thumbor's `cubic_spline_interpolation` over 256 levels (points as bytes, as its C keeps them).
    static func spline(_ given: [ThumborPoint]) -> [UInt8] {
        let points = given.map { (x: Int(UInt8(truncatingIfNeeded: $0.x)), y: Int(UInt8(truncatingIfNeeded: $0.y))) }
        guard let first = points.first else { return (0..<256).map { UInt8($0) } }
        var items = [UInt8](repeating: UInt8(first.y), count: 256)
        let n = points.count
        // Second derivatives by the tridiagonal system thumbor solves.
        var matrix = [Double](repeating: 0, count: n * 3), result = [Double](repeating: 0, count: n)
        matrix[1] = 1
        if n > 2 {
            for i in 1..<(n - 1) {
                let (previous, current, next) = (points[i - 1], points[i], points[i + 1])
                matrix[i * 3] = Double(current.x - previous.x) / 6
                matrix[i * 3 + 1] = Double(next.x - previous.x) / 3
                matrix[i * 3 + 2] = Double(next.x - current.x) / 6
                result[i] = Double(next.y - current.y) / Double(next.x - current.x) - Double(current.y - previous.y) / Double(current.x - previous.x)
            }
        }
        matrix[(n - 1) * 3 + 1] = 1
        if n > 1 {
            for i in 1..<n {
                let k = matrix[i * 3] / matrix[i * 3 - 3 + 1]
                matrix[i * 3 + 1] -= k * matrix[i * 3 - 3 + 2]
                matrix[i * 3] = 0
                result[i] -= k * result[i - 1]
            }
            for i in stride(from: n - 2, through: 0, by: -1) {
                let k = matrix[i * 3 + 2] / matrix[i * 3 + 3 + 1]
                matrix[i * 3 + 1] -= k * matrix[i * 3 + 3]
                matrix[i * 3 + 2] = 0
                result[i] -= k * result[i + 1]
            }
        }
        let derivatives = (0..<n).map { result[$0] / matrix[$0 * 3 + 1] }
        for i in 0..<max(0, n - 1) {
            let (current, next) = (points[i], points[i + 1])
            guard current.x < next.x else { continue }
            for x in current.x..<next.x {
                let t = Double(x - current.x) / Double(next.x - current.x), a = 1 - t, b = t, h = Double(next.x - current.x)
                let y = a * Double(current.y) + b * Double(next.y) + (h * h / 6) * ((a * a * a - a) * derivatives[i] + (b * b * b - b) * derivatives[i + 1])
                items[x] = y.isFinite ? UInt8(max(0, min(255, y.rounded()))) : 0
            }
        }
        let last = points[n - 1]
        for x in last.x..<256 { items[x] = UInt8(last.y) }
        return items
    }

    /// `noise(amount, seed)`: the same offset added to the three channels of each pixel, drawn
    /// from glibc's `random()` seeded with `seed` (thumbor's C calls `srandom`; its seed 0 keeps the
    /// process's sequence, so the pixels vary).
    static func noise(_ pixels: inout [UInt8], amount: Int, seed: Int) {
        guard amount > 0 else { return }
        var random = GlibcRandom(seed: UInt32(truncatingIfNeeded: seed > 0 ? seed : Int.random(in: 1...Int(Int32.max))))
        let half = amount >> 1
        mapColor(&pixels) { r, g, b in
            let delta = Int(random.next()) % amount - half
            return (clamp(r + delta), clamp(g + delta), clamp(b + delta))
        }
    }

    /// `convolution`: a `columns`-wide kernel (odd rows and columns) over every channel (alpha
    /// only when the image has it), edges clamped, sums truncated. Throws for a kernel thumbor's C
    /// refuses. Each output row sums its taps in the C's order (kernel rows, then columns) in
    /// doubles, so the bytes are the C's; the sums run along whole rows (source rows widened to
    /// doubles with their edges repeated), which the compiler vectorises.
    static func convolve(
        _ pixels: [UInt8], width: Int, height: Int, kernel given: [Double], columns: Int, normalize: Bool, alpha: Bool
    ) throws(ImagoError)
        -> [UInt8]
    {
        guard columns > 0, given.count % columns == 0, given.count % 2 == 1, (given.count / columns) % 2 == 1 else {
            throw ImagoError(.processingFailed("the convolution's matrix is not an odd number of odd rows"), url: nil, stage: .processing)
        }
        guard width > 0, height > 0 else { return pixels }
        let sum = given.reduce(0, +)
        let kernel = normalize && sum != 0 ? given.map { $0 / sum } : given
        let rows = given.count / columns, midX = columns >> 1, midY = rows >> 1
        let rowLength = width * 4
        var output = pixels
        var padded = [Double](repeating: 0, count: (width + 2 * midX) * 4)
        var sums = [Double](repeating: 0, count: rowLength)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                padded.withUnsafeMutableBufferPointer { padded in
                    sums.withUnsafeMutableBufferPointer { sums in
                        for y in 0..<height {
                            for i in 0..<rowLength { sums[i] = 0 }
                            for ky in 0..<rows {
                                let sourceRow = min(max(y + ky - midY, 0), height - 1) * rowLength
                                // The row widened, its first and last pixels repeated midX times.
                                for x in 0..<(width + 2 * midX) {
                                    let at = sourceRow + min(max(x - midX, 0), width - 1) * 4
                                    for c in 0..<4 { padded[x * 4 + c] = Double(source[at + c]) }
                                }
                                for kx in 0..<columns {
                                    let weight = kernel[ky * columns + kx], shift = kx * 4
                                    for i in 0..<rowLength { sums[i] += padded[i + shift] * weight }
                                }
                            }
                            let rowStart = y * rowLength
                            for x in 0..<width {
                                let at = x * 4
                                target[rowStart + at] = truncated(sums[at])
                                target[rowStart + at + 1] = truncated(sums[at + 1])
                                target[rowStart + at + 2] = truncated(sums[at + 2])
                                if alpha { target[rowStart + at + 3] = truncated(sums[at + 3]) }
                            }
                        }
                    }
                }
            }
        }
        return output
    }

    /// C's `(int)` of a sum, then `ADJUST_COLOR`.
    @inline(__always) private static func truncated(_ value: Double) -> UInt8 {
        guard value.isFinite else { return 0 }
        return clamp(Int(max(-1e9, min(1e9, value))))
    }

    /// thumbor's `blur`: a Gaussian of `2 × radius + 1` taps (radius at most 150; sigma the
    /// radius when 0), across then down, each pass truncated.
    static func blur(_ pixels: [UInt8], width: Int, height: Int, radius: Int, sigma: Double, alpha: Bool) throws(ImagoError) -> [UInt8] {
        let sigma = sigma == 0 ? Double(radius) : sigma
        let radius = min(radius, 150)
        let twoSigmaSquared = 2 * sigma * sigma
        let matrix = (0...(2 * radius)).map { column -> Double in
            let x = Double(column - radius)
            return exp(-(x * x) / twoSigmaSquared) / (twoSigmaSquared * Double.pi).squareRoot()
        }
        let across = try convolve(pixels, width: width, height: height, kernel: matrix, columns: matrix.count, normalize: true, alpha: alpha)
        return try convolve(across, width: width, height: height, kernel: matrix, columns: 1, normalize: true, alpha: alpha)
    }

    /// `fill(auto)`'s colour: the mean of each channel (thumbor's `_fill`), as hex.
    static func meanColor(_ pixels: [UInt8]) -> (Int, Int, Int) {
        var sums = (0, 0, 0)
        var index = 0
        while index + 3 < pixels.count {
            sums.0 += Int(pixels[index])
            sums.1 += Int(pixels[index + 1])
            sums.2 += Int(pixels[index + 2])
            index += 4
        }
        let area = max(1, pixels.count / 4)
        return (sums.0 / area, sums.1 / area, sums.2 / area)
    }

    /// thumbor's `_composite`: `top` (RGBA, `topWidth` wide) placed at (x, y) over `base`, alpha
    /// composed ("over") when `merge`; else copied, every pixel, as Pillow's `paste` does.
    static func composite(
        _ top: [UInt8], width topWidth: Int, height topHeight: Int, over base: inout [UInt8], width baseWidth: Int, height baseHeight: Int, x: Int,
        y: Int, merge: Bool
    ) {
        let startX = max(0, -x), startY = max(0, -y)
        let x0 = max(0, x), y0 = max(0, y)
        guard startY < topHeight, startX < topWidth else { return }
        for row in startY..<topHeight {
            let baseRow = y0 - startY + row
            guard baseRow < baseHeight else { break }
            for column in startX..<topWidth {
                let baseColumn = x0 - startX + column
                guard baseColumn < baseWidth else { break }
                let b = (baseRow * baseWidth + baseColumn) * 4, t = (row * topWidth + column) * 4
                guard merge else {
                    for c in 0..<4 { base[b + c] = top[t + c] }
                    continue
                }
                // thumbor works in transparencies: 255 - alpha.
                let t1 = 255 - Double(base[b + 3]), t2 = 255 - Double(top[t + 3])
                var delta = (t2 / 255) * (t1 / 255)
                let transparency = 255 * delta
                delta = 1 - delta
                delta = delta <= 1e-12 ? 1 : 1 / delta
                for c in 0..<3 {
                    let value = ((1 - t2 / 255) * Double(top[t + c])) + ((1 - t1 / 255) * Double(base[b + c]) * (t2 / 255))
                    base[b + c] = clamp(delta * value)
                }
                base[b + 3] = clamp(255 - transparency)
            }
        }
    }

    /// `watermark`'s `_alpha`: `255 × percent / 100` taken from every alpha.
    static func fade(_ pixels: inout [UInt8], percent: Int) {
        let delta = -((255 &* percent) / 100)
        var index = 3
        while index < pixels.count {
            pixels[index] = clamp(Int(pixels[index]) + delta)
            index += 4
        }
    }
}

/// glibc's `random()` (the TYPE_3 additive feedback generator `srandom` sets up), so thumbor's
/// seeded noise is reproduced on any platform.
struct GlibcRandom {
    private var state: [Int32] = []
    private var front = 3, rear = 0

    init(seed: UInt32) {
        var r = [Int32](repeating: 0, count: 31)
        r[0] = Int32(bitPattern: seed == 0 ? 1 : seed)
        for i in 1..<31 {
            let hi = Int64(r[i - 1]) / 127_773, lo = Int64(r[i - 1]) % 127_773
            var word = 16_807 * lo - 2_836 * hi
            if word < 0 { word += 2_147_483_647 }
            r[i] = Int32(truncatingIfNeeded: word)
        }
        state = r
        front = 3
        rear = 0
        for _ in 0..<310 { _ = next() }
    }

    /// The next value, 0…2³¹−1.
    mutating func next() -> Int32 {
        state[front] = state[front] &+ state[rear]
        let result = Int32(bitPattern: UInt32(bitPattern: state[front]) >> 1)
        front += 1
        if front >= 31 {
            front = 0
            rear += 1
        } else {
            rear += 1
            if rear >= 31 { rear = 0 }
        }
        return result
    }
}
