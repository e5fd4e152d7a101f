/// thumbor's `_nine_patch`: an Android nine-patch image (a one-pixel border marking the
/// stretchable rows and columns in opaque black, and the content's padding on the right and
/// bottom edges) drawn over a target, its cells stretched bilinearly.
enum ThumborNinePatch {
    private static func isStretchy(_ p: [UInt8], _ width: Int, _ x: Int, _ y: Int) -> Bool {
        let at = (y * width + x) * 4
        return p[at] == 0 && p[at + 1] == 0 && p[at + 2] == 0 && p[at + 3] == 255
    }

    /// The padding the right and bottom edges mark: (left, top, right, bottom).
    static func padding(_ p: [UInt8], width: Int, height: Int) -> (left: Int, top: Int, right: Int, bottom: Int) {
        var result = (left: 0, top: 0, right: 0, bottom: 0)
        guard width >= 3, height >= 3 else { return result }
        if let x = (1..<(width - 1)).first(where: { isStretchy(p, width, $0, height - 1) }) { result.left = x - 1 }
        if let x = (1..<(width - 1)).reversed().first(where: { isStretchy(p, width, $0, height - 1) }) { result.right = width - 2 - x }
        if let y = (1..<(height - 1)).first(where: { isStretchy(p, width, width - 1, $0) }) { result.top = y - 1 }
        if let y = (1..<(height - 1)).reversed().first(where: { isStretchy(p, width, width - 1, $0) }) { result.bottom = height - 2 - y }
        return result
    }

    /// The patch's cells drawn over `target`, stretchy ones sharing what the fixed ones leave.
    static func draw(_ p: [UInt8], width: Int, height: Int, onto target: inout [UInt8], width targetWidth: Int, height targetHeight: Int) {
        guard width >= 3, height >= 3 else { return }
        let stretchyWidth = (1..<(width - 1)).filter { isStretchy(p, width, $0, 0) }.count
        let stretchyHeight = (1..<(height - 1)).filter { isStretchy(p, width, 0, $0) }.count
        let targetStretchyWidth = max(0, targetWidth - (width - 2 - stretchyWidth))
        let targetStretchyHeight = max(0, targetHeight - (height - 2 - stretchyHeight))
        func next(_ start: Int, _ limit: Int, _ stretchy: (Int) -> Bool) -> Int {
            let kind = stretchy(start)
            var n = start + 1
            while n < limit - 1, stretchy(n) == kind { n += 1 }
            return n
        }
        var sourceY = 1, targetY = 0
        while sourceY < height - 1 {
            let rowStretchy = isStretchy(p, width, 0, sourceY)
            let sourceHeight = next(sourceY, height) { isStretchy(p, width, 0, $0) } - sourceY
            let cellHeight = rowStretchy ? Int(Double(sourceHeight) / Double(stretchyHeight) * Double(targetStretchyHeight) + 0.5) : sourceHeight
            var sourceX = 1, targetX = 0
            while sourceX < width - 1 {
                let columnStretchy = isStretchy(p, width, sourceX, 0)
                let sourceWidth = next(sourceX, width) { isStretchy(p, width, $0, 0) } - sourceX
                let cellWidth = columnStretchy ? Int(Double(sourceWidth) / Double(stretchyWidth) * Double(targetStretchyWidth) + 0.5) : sourceWidth
                paste(p, width, sourceX, sourceY, sourceWidth, sourceHeight, &target, targetWidth, targetHeight, targetX, targetY, cellWidth, cellHeight)
                targetX += cellWidth
                sourceX += sourceWidth
            }
            targetY += cellHeight
            sourceY += sourceHeight
        }
    }

    private static func paste(
        _ p: [UInt8], _ width: Int, _ sx: Int, _ sy: Int, _ sw: Int, _ sh: Int, _ target: inout [UInt8], _ targetWidth: Int, _ targetHeight: Int, _ tx: Int,
        _ ty: Int, _ tw: Int, _ th: Int
    ) {
        guard tw > 0, th > 0, tx + tw <= targetWidth, ty + th <= targetHeight else { return }
        let xRatio = (Double(sw) - 1) / Double(tw), yRatio = (Double(sh) - 1) / Double(th)
        func sample(_ x: Int, _ y: Int, _ xf: Double, _ yf: Double, _ s: Int) -> Int {
            // The C reads one pixel right and below; kept inside the patch here.
            func at(_ x: Int, _ y: Int) -> Int { Int(p[(min(y, p.count / 4 / width - 1) * width + min(x, width - 1)) * 4 + s]) }
            let (a, b, c, d) = (at(x, y), at(x + 1, y), at(x, y + 1), at(x + 1, y + 1))
            if a == b, a == c, a == d { return a }
            let combined = Double(a) * (1 - xf) * (1 - yf) + Double(b) * xf * (1 - yf) + Double(c) * (1 - xf) * yf + Double(d) * xf * yf
            return Int(ThumborPixels.clamp(combined))
        }
        for y in 0..<th {
            let sourceY = Int(yRatio * Double(y)), yf = yRatio * Double(y) - Double(sourceY)
            for x in 0..<tw {
                let sourceX = Int(xRatio * Double(x)), xf = xRatio * Double(x) - Double(sourceX)
                let sourceTransparency = 255 - Double(sample(sx + sourceX, sy + sourceY, xf, yf, 3))
                let at = ((ty + y) * targetWidth + tx + x) * 4
                let targetTransparency = 255 - Double(target[at + 3])
                for s in 0..<3 {
                    let source = Double(sample(sx + sourceX, sy + sourceY, xf, yf, s)), base = Double(target[at + s])
                    let value = ((1 - sourceTransparency / 255) * source) + ((1 - targetTransparency / 255) * base * (sourceTransparency / 255))
                    target[at + s] = ThumborPixels.clamp(value)
                }
            }
        }
    }
}
