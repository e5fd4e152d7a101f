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

    /// The smaller eigenvalue of each pixel's gradient covariance, summed over its 3×3 block.
    private func minEigenvalues(_ plane: GrayPlane) -> [Float] {
        let width = plane.width, height = plane.height
        // OpenCV scales Sobel so an 8-bit edge of 255 over a 3×3 block measures 1.
        let scale = Float(1.0 / (4.0 * 3.0 * 255.0))
        func reflect(_ i: Int, _ n: Int) -> Int { i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i) }
        var xx = [Float](repeating: 0, count: width * height)
        var xy = xx, yy = xx
        plane.pixels.withUnsafeBufferPointer { p in
            func at(_ x: Int, _ y: Int) -> Float { Float(p[reflect(y, height) * width + reflect(x, width)]) }
            for y in 0..<height {
                for x in 0..<width {
                    let dxAbove = at(x + 1, y - 1) - at(x - 1, y - 1), dxHere = at(x + 1, y) - at(x - 1, y), dxBelow = at(x + 1, y + 1) - at(x - 1, y + 1)
                    let dx = 2 * scale * dxHere + scale * (dxAbove + dxBelow)
                    let dyLeft = at(x - 1, y + 1) - at(x - 1, y - 1), dyHere = at(x, y + 1) - at(x, y - 1), dyRight = at(x + 1, y + 1) - at(x + 1, y - 1)
                    let dy = 2 * scale * dyHere + scale * (dyLeft + dyRight)
                    let index = y * width + x
                    xx[index] = dx * dx
                    xy[index] = dx * dy
                    yy[index] = dy * dy
                }
            }
        }
        var result = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var a: Float = 0, b: Float = 0, c: Float = 0
                for dy in -1...1 {
                    let row = reflect(y + dy, height) * width
                    for dx in -1...1 {
                        let index = row + reflect(x + dx, width)
                        a += xx[index]
                        b += xy[index]
                        c += yy[index]
                    }
                }
                a *= 0.5
                c *= 0.5
                result[y * width + x] = (a + c) - ((a - c) * (a - c) + b * b).squareRoot()
            }
        }
        return result
    }
}
