import Foundation

/// Shi–Tomasi corners, as OpenCV's `goodFeaturesToTrack` finds them without Harris' measure: the
/// smaller eigenvalue of each pixel's gradient covariance over a 3×3 block (3×3 Sobel gradients,
/// borders reflected), those below `qualityLevel` of the largest set to zero, local maxima of a
/// 3×3 neighbourhood (the outermost pixels excluded), strongest first (ties: the later pixel first),
/// none closer than `minDistance` to a stronger one, at most `maxCorners`. thumbor's
/// `feature_detector` asks for 20 corners at quality 0.04, 1 pixel apart.
public struct CornerDetector: Sendable, Hashable {
    /// Corners returned at most (0: all).
    public var maxCorners: Int
    /// The weakest corner kept, as a fraction of the strongest's measure.
    public var qualityLevel: Double
    /// Corners closer than this (Euclidean, pixels) to a stronger one are dropped.
    public var minDistance: Double

    /// A detector with those settings; thumbor's by default.
    public init(maxCorners: Int = 20, qualityLevel: Double = 0.04, minDistance: Double = 1) {
        self.maxCorners = maxCorners
        self.qualityLevel = qualityLevel
        self.minDistance = minDistance
    }

    /// A corner: its pixel.
    public struct Corner: Sendable, Hashable {
        /// The column.
        public var x: Int
        /// The row.
        public var y: Int
    }

    /// The corners of `plane`, strongest first. Work and memory grow with its pixels (16 bytes
    /// each): bound its size first.
    public func corners(in plane: GrayPlane) -> [Corner] {
        let width = plane.width, height = plane.height
        guard width >= 3, height >= 3 else { return [] }
        let measure = minEigenvalues(plane)
        let strongest = measure.max() ?? 0
        guard strongest > 0 else { return [] }
        let floor = Float(Double(strongest) * qualityLevel)
        var candidates: [(value: Float, index: Int)] = []
        measure.withUnsafeBufferPointer { measure in
            func kept(_ index: Int) -> Float { measure[index] > floor ? measure[index] : 0 }
            for y in 1..<(height - 1) {
                for x in 1..<(width - 1) {
                    let index = y * width + x
                    let value = kept(index)
                    guard value != 0 else { continue }
                    // A local maximum of the thresholded measure (dilated by a 3×3 square).
                    var largest = value
                    for dy in -1...1 {
                        for dx in -1...1 { largest = max(largest, kept(index + dy * width + dx)) }
                    }
                    if value == largest { candidates.append((value, index)) }
                }
            }
        }
        candidates.sort { $0.value != $1.value ? $0.value > $1.value : $0.index > $1.index }
        var chosen: [Corner] = []
        let minimum = minDistance * minDistance
        for candidate in candidates {
            let corner = Corner(x: candidate.index % width, y: candidate.index / width)
            if minDistance >= 1 {
                let close = chosen.contains { other in
                    let dx = Double(corner.x - other.x), dy = Double(corner.y - other.y)
                    return dx * dx + dy * dy < minimum
                }
                if close { continue }
            }
            chosen.append(corner)
            if maxCorners > 0 && chosen.count == maxCorners { break }
        }
        return chosen
    }

    /// The smaller eigenvalue of each pixel's gradient covariance, summed over its 3×3 block, in
    /// OpenCV's order of operations (Sobel as two separable passes in single precision, the block
    /// sums in double rounded once), so equal measures in OpenCV are equal here. Rows stream
    /// through three-row windows, so the work beyond the result is a few rows of memory.
    private func minEigenvalues(_ plane: GrayPlane) -> [Float] {
        let width = plane.width, height = plane.height
        // OpenCV scales Sobel so an 8-bit edge of 255 over a 3×3 block measures 1.
        let scale = Float(1.0 / (4.0 * 3.0 * 255.0))
        // Borders reflect without repeating the edge (OpenCV's BORDER_REFLECT_101).
        func reflect(_ i: Int, _ n: Int) -> Int { i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i) }
        var result = [Float](repeating: 0, count: width * height)
        // Per source row: the horizontal passes (the difference across, for x; the smoothing, for y).
        var across = [[Float]](repeating: [Float](repeating: 0, count: width), count: 3)
        var smoothed = across
        // Per covariance row: the three products' sums across each pixel's three columns.
        var sums = [[Double]](repeating: [Double](repeating: 0, count: width * 3), count: 3)
        var products = [Float](repeating: 0, count: width * 3)
        plane.pixels.withUnsafeBufferPointer { p in
            func horizontal(_ y: Int) {
                let row = y * width, slot = y % 3
                across[slot].withUnsafeMutableBufferPointer { a in
                    smoothed[slot].withUnsafeMutableBufferPointer { s in
                        for x in 0..<width {
                            let left = Float(p[row + reflect(x - 1, width)]), here = Float(p[row + x]), right = Float(p[row + reflect(x + 1, width)])
                            a[x] = right - left
                            s[x] = (2 * scale) * here + scale * (left + right)
                        }
                    }
                }
            }
            // The covariance row `y` (source rows y−1…y+1 made), summed across into slot y % 3.
            func covariance(_ y: Int) {
                let above = reflect(y - 1, height) % 3, here = y % 3, below = reflect(y + 1, height) % 3
                products.withUnsafeMutableBufferPointer { q in
                    for x in 0..<width {
                        let dx = (2 * scale) * across[here][x] + scale * (across[above][x] + across[below][x])
                        let dy = smoothed[below][x] - smoothed[above][x]
                        q[x * 3] = dx * dx
                        q[x * 3 + 1] = dx * dy
                        q[x * 3 + 2] = dy * dy
                    }
                    sums[here].withUnsafeMutableBufferPointer { h in
                        for x in 0..<width {
                            let l = reflect(x - 1, width) * 3, c = x * 3, r = reflect(x + 1, width) * 3
                            for k in 0..<3 { h[c + k] = Double(q[l + k]) + Double(q[c + k]) + Double(q[r + k]) }
                        }
                    }
                }
            }
            // Rows are made ahead of their use: source row y+1 before covariance row y, covariance
            // row y+1 before the measures of row y. A height of 1 or 2 reflects onto what exists.
            horizontal(0)
            if height > 1 { horizontal(1) }
            covariance(0)
            for y in 0..<height {
                if y + 1 < height {
                    if y + 2 < height { horizontal(y + 2) }
                    covariance(y + 1)
                }
                let above = sums[reflect(y - 1, height) % 3], here = sums[y % 3], below = sums[reflect(y + 1, height) % 3]
                result.withUnsafeMutableBufferPointer { out in
                    for x in 0..<width {
                        let a = above[x * 3] + here[x * 3] + below[x * 3]
                        let b = above[x * 3 + 1] + here[x * 3 + 1] + below[x * 3 + 1]
                        let c = above[x * 3 + 2] + here[x * 3 + 2] + below[x * 3 + 2]
                        let halfA = Float(a) * 0.5, covariance = Float(b), halfC = Float(c) * 0.5
                        out[y * width + x] = (halfA + halfC) - ((halfA - halfC) * (halfA - halfC) + covariance * covariance).squareRoot()
                    }
                }
            }
        }
        return result
    }
}
