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
    /// sums in double rounded once), so equal measures in OpenCV are equal here.
    private func minEigenvalues(_ plane: GrayPlane) -> [Float] {
        let width = plane.width, height = plane.height
        // OpenCV scales Sobel so an 8-bit edge of 255 over a 3×3 block measures 1.
        let scale = Float(1.0 / (4.0 * 3.0 * 255.0))
        func reflect(_ i: Int, _ n: Int) -> Int { i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i) }
        let count = width * height
        // The rows' horizontal passes: the difference across (for x) and the smoothing (for y).
        var across = [Float](repeating: 0, count: count), smoothed = [Float](repeating: 0, count: count)
        plane.pixels.withUnsafeBufferPointer { p in
            for y in 0..<height {
                let row = y * width
                for x in 0..<width {
                    let left = Float(p[row + reflect(x - 1, width)]), here = Float(p[row + x]), right = Float(p[row + reflect(x + 1, width)])
                    across[row + x] = right - left
                    smoothed[row + x] = (2 * scale) * here + scale * (left + right)
                }
            }
        }
        var xx = [Float](repeating: 0, count: count)
        var xy = xx, yy = xx
        for y in 0..<height {
            let above = reflect(y - 1, height) * width, row = y * width, below = reflect(y + 1, height) * width
            for x in 0..<width {
                let dx = (2 * scale) * across[row + x] + scale * (across[above + x] + across[below + x])
                let dy = smoothed[below + x] - smoothed[above + x]
                xx[row + x] = dx * dx
                xy[row + x] = dx * dy
                yy[row + x] = dy * dy
            }
        }
        var result = [Float](repeating: 0, count: count)
        for y in 0..<height {
            for x in 0..<width {
                var a = 0.0, b = 0.0, c = 0.0
                for dy in -1...1 {
                    let row = reflect(y + dy, height) * width
                    for dx in -1...1 {
                        let index = row + reflect(x + dx, width)
                        a += Double(xx[index])
                        b += Double(xy[index])
                        c += Double(yy[index])
                    }
                }
                let halfA = Float(a) * 0.5, covariance = Float(b), halfC = Float(c) * 0.5
                result[y * width + x] = (halfA + halfC) - ((halfA - halfC) * (halfA - halfC) + covariance * covariance).squareRoot()
            }
        }
        return result
    }
}
