import Foundation

/// The recursive (IIR) Gaussian SSIMULACRA2 blurs with: Charalampidis' three-term approximation
/// ("Recursive implementation of the Gaussian filter using truncated cosine functions", 2016), the
/// filter libjxl's `FastGaussian` runs, with the same coefficients (computed in double, applied
/// in float) and the same zero padding outside the plane, so scores agree with the reference.
///
/// Each output is `y_k[n] = n2_k · (in[n-N-1] + in[n+N-1]) − d1_k · y_k[n-1] − y_k[n-2]` summed
/// over k = 1, 3, 5. The pass runs down the columns, a whole row at a time (a loop the compiler
/// vectorises); the horizontal pass is the same pass over the transposed plane.
struct RecursiveGaussian {
    let radius: Int
    let n2: (Float, Float, Float)
    let d1: (Float, Float, Float)

    init(sigma: Double) {
        let radius = Double(Float(3.2795 * sigma + 0.2546).rounded())
        let piOverTwoR = Double.pi / (2 * radius)
        let omega = [piOverTwoR, 3 * piOverTwoR, 5 * piOverTwoR]
        let p1 = 1 / tan(0.5 * omega[0]), p3 = -1 / tan(0.5 * omega[1]), p5 = 1 / tan(0.5 * omega[2])
        let r1 = p1 * p1 / sin(omega[0]), r3 = -p3 * p3 / sin(omega[1]), r5 = p5 * p5 / sin(omega[2])
        let rho = omega.map { exp(-0.5 * sigma * sigma * $0 * $0) / radius }
        let d13 = p1 * r3 - r1 * p3
        let d35 = p3 * r5 - r3 * p5
        let d51 = p5 * r1 - r5 * p1
        let zeta15 = d35 / d13, zeta35 = d51 / d13
        let gamma = [1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]]
        let beta = Self.solve([[p1, p3, p5], [r1, r3, r5], [zeta15, zeta35, 1]], gamma)
        let n2 = (0..<3).map { Float(-beta[$0] * cos(omega[$0] * (radius + 1))) }
        let d1 = (0..<3).map { Float(-2 * cos(omega[$0])) }
        self.radius = Int(radius)
        self.n2 = (n2[0], n2[1], n2[2])
        self.d1 = (d1[0], d1[1], d1[2])
    }

    /// `matrix · x = vector` for a 3×3 matrix, by Cramer's rule (the matrix is well conditioned).
    private static func solve(_ m: [[Double]], _ v: [Double]) -> [Double] {
        func det(_ a: [[Double]]) -> Double {
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        }
        let d = det(m)
        return (0..<3).map { column in
            var replaced = m
            for row in 0..<3 { replaced[row][column] = v[row] }
            return det(replaced) / d
        }
    }

    /// `plane` (width × height floats, row-major) blurred in both directions into `output`.
    /// `scratch` must hold width × height floats; its contents are overwritten.
    func blur(
        _ plane: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>,
        scratch: UnsafeMutableBufferPointer<Float>, width: Int, height: Int
    ) {
        // Vertical pass into output, transpose into scratch, vertical pass (now horizontal) into
        // output's storage via a second transpose.
        blurColumns(plane, into: scratch, width: width, height: height)
        Self.transpose(UnsafeBufferPointer(scratch), into: output, width: width, height: height)
        blurColumns(UnsafeBufferPointer(output), into: scratch, width: height, height: width)
        Self.transpose(UnsafeBufferPointer(scratch), into: output, width: height, height: width)
    }

    /// The recursive filter down every column of a width × height plane.
    func blurColumns(
        _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, width: Int, height: Int
    ) {
        let n = radius
        // Three terms × (previous, before previous) rows of state.
        var state = [Float](repeating: 0, count: 6 * width)
        var sum = [Float](repeating: 0, count: width)
        state.withUnsafeMutableBufferPointer { state in
            sum.withUnsafeMutableBufferPointer { sum in
                let base = state.baseAddress!
                // Row buffers swap roles each step: prev1/prev2 for each term.
                var prev1 = (base, base + 2 * width, base + 4 * width)
                var prev2 = (base + width, base + 3 * width, base + 5 * width)
                let (n21, n23, n25) = n2
                let (d11, d13, d15) = d1
                for row in (-n + 1)..<height {
                    let top = row - n - 1
                    let bottom = row + n - 1
                    let hasTop = top >= 0
                    let hasBottom = bottom < height
                    if hasTop, hasBottom {
                        let a = input.baseAddress! + top * width, b = input.baseAddress! + bottom * width
                        for x in 0..<width { sum[x] = a[x] + b[x] }
                    } else if hasTop || hasBottom {
                        let a = input.baseAddress! + (hasTop ? top : bottom) * width
                        for x in 0..<width { sum[x] = a[x] }
                    } else {
                        for x in 0..<width { sum[x] = 0 }
                    }
                    // y = n2·sum − d1·prev1 − prev2, written over prev2, which then becomes prev1.
                    let out = row >= 0 ? output.baseAddress! + row * width : nil
                    let p11 = prev1.0, p13 = prev1.1, p15 = prev1.2
                    let p21 = prev2.0, p23 = prev2.1, p25 = prev2.2
                    for x in 0..<width {
                        let s = sum[x]
                        let y1 = n21 * s - d11 * p11[x] - p21[x]
                        let y3 = n23 * s - d13 * p13[x] - p23[x]
                        let y5 = n25 * s - d15 * p15[x] - p25[x]
                        p21[x] = y1
                        p23[x] = y3
                        p25[x] = y5
                    }
                    if let out {
                        for x in 0..<width { out[x] = p21[x] + (p23[x] + p25[x]) }
                    }
                    swap(&prev1, &prev2)
                }
            }
        }
    }

    /// `input` (width × height, row-major) transposed into `output` (height × width), in tiles.
    static func transpose(
        _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>, width: Int, height: Int
    ) {
        let tile = 32
        for y0 in stride(from: 0, to: height, by: tile) {
            for x0 in stride(from: 0, to: width, by: tile) {
                for y in y0..<min(y0 + tile, height) {
                    for x in x0..<min(x0 + tile, width) { output[x * height + y] = input[y * width + x] }
                }
            }
        }
    }
}
