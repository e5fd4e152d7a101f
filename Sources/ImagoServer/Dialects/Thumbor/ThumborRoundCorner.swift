import Foundation

/// thumbor's `round_corner(a|b, r, g, b, transparent)` (its `_round_corner` C, anti-aliasing on):
/// each corner outside an ellipse of radii a and b painted in the colour, or made transparent, the
/// edge blended over a few pixels. Single-precision arithmetic and index quirks as in the C (the
/// right-hand corners are one pixel further right than a mirror image, wrapping into the next row
/// at the edge); writes outside the image are skipped.
enum ThumborRoundCorner {
    static func apply(_ ptr: inout [UInt8], width: Int, height: Int, a: Int, b: Int, color: (UInt8, UInt8, UInt8), transparent: Bool) {
        let aRadius = min(a, width / 2), bRadius = min(b, height / 2)
        let aRad = Float(aRadius), bRad = Float(bRadius)
        guard aRad > 0, bRad > 0 else { return }
        let count = ptr.count
        func paint(_ pixel: Int) {
            guard pixel >= 0, pixel + 3 < count else { return }
            ptr[pixel] = color.0
            ptr[pixel + 1] = color.1
            ptr[pixel + 2] = color.2
            if transparent { ptr[pixel + 3] = 0 }
        }
        func blend(_ pixel: Int, from source: Int, _ aa: Float) {
            guard pixel >= 0, pixel + 3 < count, source >= 0, source + 3 < count else { return }
            let colors = [Float(color.0), Float(color.1), Float(color.2)]
            for c in 0..<3 {
                let value = transparent ? Float(ptr[source + c]) * (1 - aa) : Float(ptr[source + c]) * (1 - aa) + colors[c] * aa
                ptr[pixel + c] = value.isFinite && value >= 0 && value < 256 ? UInt8(value) : 0
            }
        }
        func index(_ x: Int, _ y: Int) -> Int { 4 * (y * width + x) }
        var y = 0
        while Float(y) <= bRad {
            let x = Float(-(aRad * Float((bRad * bRad - Float(y * y))).squareRoot()) / bRad)
            let yTop = Int(bRad - Float(y)), yBottom = Int(Float(height) - bRad) + y - 1
            let endX = Int(x + aRad)
            var currentX = 0
            while currentX < endX {
                paint(index(currentX, yTop))
                paint(index(currentX, yBottom))
                if currentX > 0 {
                    paint(index(width - currentX, yTop))
                    paint(index(width - currentX, yBottom))
                }
                currentX += 1
            }
            let last = (index(endX, yTop), index(endX, yBottom), index(width - endX, yTop), index(width - endX, yBottom))
            var pixelCountX = 0
            var aaX = Int(x - 1)
            while Float(aaX) >= -aRad {
                let aaY = Int(Float((bRad * Float(aRad * aRad - Float(aaX * aaX)).squareRoot()) / aRad + 1))
                if aaY != y { break }
                pixelCountX += 1
                aaX -= 1
            }
            aaX = Int(x) - pixelCountX
            if Float(aaX) < -aRad { aaX += 1 }
            var idx = 1
            while Float(aaX) < x {
                let adjusted = aaX + aRadius
                let aa = 1 - (Float(idx) / Float(pixelCountX)) * 0.75
                blend(index(adjusted, yTop), from: last.0, aa)
                blend(index(adjusted, yBottom), from: last.1, aa)
                blend(index(width - adjusted, yTop), from: last.2, aa)
                blend(index(width - adjusted, yBottom), from: last.3, aa)
                aaX += 1
                idx += 1
            }
            y += 1
        }
        var fx: Float = 0
        while fx >= -aRad {
            let fy = Float((bRad * Float(aRad * aRad - fx * fx).squareRoot()) / aRad)
            var pixelCountY = 0
            var aaY = Int(fy + 1)
            while Float(aaY) < bRad {
                let aaX = Int(Float(-((aRad * Float(bRad * bRad - Float(aaY * aaY)).squareRoot()) / bRad) - 1))
                if aaX != Int(fx) { break }
                pixelCountY += 1
                aaY += 1
            }
            let endX = Int(fx + aRad)
            let yTop = Int(bRad - fy), yBottom = Int(Float(height) - bRad + fy - 1)
            let last = (index(endX, yTop), index(endX, yBottom), index(width - endX, yTop), index(width - endX, yBottom))
            let leftX = Int(fx + aRad), rightX = Int(Float(width) - aRad - fx)
            var idx = 1
            aaY = Int(fy + Float(pixelCountY))
            if Float(aaY) > bRad { aaY -= 1 }
            while Float(aaY) > fy {
                let aa = 1 - (Float(idx) / Float(pixelCountY)) * 0.75
                let top = Int(bRad - Float(aaY)), bottom = Int(Float(height) - bRad + Float(aaY) - 1)
                blend(index(leftX, top), from: last.0, aa)
                blend(index(leftX, bottom), from: last.1, aa)
                blend(index(rightX, top), from: last.2, aa)
                blend(index(rightX, bottom), from: last.3, aa)
                aaY -= 1
                idx += 1
            }
            fx -= 1
        }
    }
}
