/// The integral images of a grey plane, as OpenCV's `integral` makes them with 32-bit sums:
/// `(width + 1) × (height + 1)` entries whose (X, Y) is the sum of the pixels above and left of it,
/// of their squares, and, for tilted Haar features, of the triangle `y < Y, |x − X + 1| ≤ Y − y − 1`
/// above it. Sums wrap at 2³² as OpenCV's do; a window's difference of four entries is exact as
/// long as the window's own sum fits, which 8-bit pixels in any detection window do.
struct IntegralImages {
    /// Entries per row: the plane's width plus one.
    let stride: Int
    let rows: Int
    var sum: [UInt32]
    var squares: [UInt32]
    var tilted: [UInt32]

    init(_ plane: GrayPlane, tilted makesTilted: Bool) {
        let width = plane.width, height = plane.height
        stride = width + 1
        rows = height + 1
        let count = stride * rows
        var sum = [UInt32](repeating: 0, count: count)
        var squares = [UInt32](repeating: 0, count: count)
        var tilted = [UInt32](repeating: 0, count: makesTilted ? count : 0)
        let stride = self.stride
        plane.pixels.withUnsafeBufferPointer { pixels in
            sum.withUnsafeMutableBufferPointer { sum in
                squares.withUnsafeMutableBufferPointer { squares in
                    for y in 0..<height {
                        var rowSum: UInt32 = 0, rowSquares: UInt32 = 0
                        let above = y * stride, here = (y + 1) * stride
                        for x in 0..<width {
                            let value = UInt32(pixels[y * width + x])
                            rowSum &+= value
                            rowSquares &+= value * value
                            sum[here + x + 1] = sum[above + x + 1] &+ rowSum
                            squares[here + x + 1] = squares[above + x + 1] &+ rowSquares
                        }
                    }
                }
            }
            guard makesTilted else { return }
            tilted.withUnsafeMutableBufferPointer { tilted in
                // T(X, Y) = T(X−1, Y−1) + T(X+1, Y−1) − T(X, Y−2) + p(X−1, Y−1) + p(X−1, Y−2), where a
                // column past either edge reads the column inside it one row up: T(−1, Y) = T(0, Y−1)
                // and T(W+1, Y) = T(W, Y−1).
                func entry(_ x: Int, _ y: Int) -> UInt32 {
                    if y <= 0 { return 0 }
                    if x < 0 { return entry(0, y - 1) }
                    if x > width { return entry(width, y - 1) }
                    return tilted[y * stride + x]
                }
                for y in 1...max(height, 1) where height > 0 {
                    for x in 0...width {
                        var value = entry(x - 1, y - 1) &+ entry(x + 1, y - 1) &- entry(x, y - 2)
                        if x >= 1 {
                            value &+= UInt32(pixels[(y - 1) * width + x - 1])
                            if y >= 2 { value &+= UInt32(pixels[(y - 2) * width + x - 1]) }
                        }
                        tilted[y * stride + x] = value
                    }
                }
            }
        }
        self.sum = sum
        self.squares = squares
        self.tilted = tilted
    }
}
