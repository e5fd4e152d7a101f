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
        // Corners closer than 1 pixel would be the same pixel: with thumbor's distance of 1 the
        // answer is the strongest `maxCorners` local maxima, kept as they come in a short sorted
        // list instead of sorting every candidate of a large photo.
        let keepsTopOnly = maxCorners > 0 && minDistance <= 1
        var candidates: [(value: Float, index: Int)] = []
        /// Whether `a` comes before `b`: stronger first, ties to the later pixel.
        func precedes(_ a: (value: Float, index: Int), _ b: (value: Float, index: Int)) -> Bool {
            a.value != b.value ? a.value > b.value : a.index > b.index
        }
        func consider(_ candidate: (value: Float, index: Int)) {
            guard keepsTopOnly else {
                candidates.append(candidate)
                return
            }
            if candidates.count == maxCorners {
                guard precedes(candidate, candidates[maxCorners - 1]) else { return }
                candidates.removeLast()
            }
            var at = candidates.count
            while at > 0, precedes(candidate, candidates[at - 1]) { at -= 1 }
            candidates.insert(candidate, at: at)
        }
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
                    if value == largest { consider((value, index)) }
                }
            }
        }
        if !keepsTopOnly { candidates.sort(by: precedes) }
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
        // Three rows of each: per source row the horizontal passes (the difference across, for x;
        // the smoothing, for y); per covariance row the three products' sums across each pixel's
        // three columns. Slot k of a ring holds rows k, k+3, k+6…
        let across = UnsafeMutableBufferPointer<Float>.allocate(capacity: 3 * width)
        let smoothed = UnsafeMutableBufferPointer<Float>.allocate(capacity: 3 * width)
        let sums = UnsafeMutableBufferPointer<Double>.allocate(capacity: 9 * width)
        let products = UnsafeMutableBufferPointer<Float>.allocate(capacity: 3 * width)
        defer {
            across.deallocate()
            smoothed.deallocate()
            sums.deallocate()
            products.deallocate()
        }
        plane.pixels.withUnsafeBufferPointer { p in
            func horizontal(_ y: Int) {
                let row = y * width, a = across.baseAddress.unsafelyUnwrapped + (y % 3) * width
                let s = smoothed.baseAddress.unsafelyUnwrapped + (y % 3) * width
                @inline(__always) func pass(_ x: Int, _ left: Float, _ here: Float, _ right: Float) {
                    a[x] = right - left
                    s[x] = (2 * scale) * here + scale * (left + right)
                }
                pass(0, Float(p[row + 1]), Float(p[row]), Float(p[row + 1]))
                for x in 1..<(width - 1) { pass(x, Float(p[row + x - 1]), Float(p[row + x]), Float(p[row + x + 1])) }
                pass(width - 1, Float(p[row + width - 2]), Float(p[row + width - 1]), Float(p[row + width - 2]))
            }
            // The covariance row `y` (source rows y−1…y+1 made), summed across into slot y % 3.
            func covariance(_ y: Int) {
                let base = across.baseAddress.unsafelyUnwrapped, smooth = smoothed.baseAddress.unsafelyUnwrapped
                let above = reflect(y - 1, height) % 3 * width, here = y % 3 * width, below = reflect(y + 1, height) % 3 * width
                let q = products.baseAddress.unsafelyUnwrapped
                for x in 0..<width {
                    let dx = (2 * scale) * base[here + x] + scale * (base[above + x] + base[below + x])
                    let dy = smooth[below + x] - smooth[above + x]
                    q[x * 3] = dx * dx
                    q[x * 3 + 1] = dx * dy
                    q[x * 3 + 2] = dy * dy
                }
                let h = sums.baseAddress.unsafelyUnwrapped + (y % 3) * 3 * width
                @inline(__always) func sum(_ c: Int, _ l: Int, _ r: Int) {
                    h[c] = Double(q[l]) + Double(q[c]) + Double(q[r])
                    h[c + 1] = Double(q[l + 1]) + Double(q[c + 1]) + Double(q[r + 1])
                    h[c + 2] = Double(q[l + 2]) + Double(q[c + 2]) + Double(q[r + 2])
                }
                sum(0, 3, 3)
                for x in 1..<(width - 1) { sum(x * 3, x * 3 - 3, x * 3 + 3) }
                sum((width - 1) * 3, (width - 2) * 3, (width - 2) * 3)
            }
            // Rows are made ahead of their use: source row y+1 before covariance row y, covariance
            // row y+1 before the measures of row y.
            horizontal(0)
            horizontal(1)
            covariance(0)
            result.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    if y + 1 < height {
                        if y + 2 < height { horizontal(y + 2) }
                        covariance(y + 1)
                    }
                    let base = sums.baseAddress.unsafelyUnwrapped
                    let above = base + reflect(y - 1, height) % 3 * 3 * width, here = base + y % 3 * 3 * width
                    let below = base + reflect(y + 1, height) % 3 * 3 * width
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
