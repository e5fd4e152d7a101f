/// A cascade laid out for one scale's integral images: every feature's corners as offsets from a
/// window's top-left entry, so testing a window is table lookups. Its arithmetic is OpenCV's
/// (32-bit sums, single-precision features, double-precision stage sums), so a window passes here
/// when it passes there.
struct WindowEvaluator: Sendable {
    /// The integral images a window is read from.
    struct Tables {
        var sum: UnsafeBufferPointer<UInt32>
        var squares: UnsafeBufferPointer<UInt32>
        var tilted: UnsafeBufferPointer<UInt32>
    }

    private let cascade: CascadeClassifier
    /// Entries per row of the integral images.
    private let stride: Int
    /// Haar: per feature 12 offsets (3 rectangles × 4 corners); LBP: per feature 16 (a 4×4 grid).
    private let offsets: [Int]
    /// Haar: per feature 3 weights.
    private let weights: [Float]
    private let tiltedFeature: [Bool]
    /// The corners of the window's inner rectangle (1 pixel in from each side), whose contrast
    /// normalises Haar features.
    private let normCorners: (Int, Int, Int, Int)
    private let normArea: Double

    init(cascade: CascadeClassifier, stride: Int) {
        self.cascade = cascade
        self.stride = stride
        var offsets: [Int] = []
        var weights: [Float] = []
        var tiltedFeature: [Bool] = []
        switch cascade.featureKind {
        case .haar:
            for feature in cascade.haarFeatures {
                for index in 0..<3 {
                    guard index < feature.rectangles.count else {
                        offsets += [0, 0, 0, 0]
                        weights.append(0)
                        continue
                    }
                    let r = feature.rectangles[index]
                    if feature.tilted {
                        offsets += [
                            r.x + stride * r.y, r.x - r.height + stride * (r.y + r.height), r.x + r.width + stride * (r.y + r.width),
                            r.x + r.width - r.height + stride * (r.y + r.width + r.height),
                        ]
                    } else {
                        offsets += [
                            r.x + stride * r.y, r.x + r.width + stride * r.y, r.x + stride * (r.y + r.height), r.x + r.width + stride * (r.y + r.height),
                        ]
                    }
                    weights.append(r.weight)
                }
                tiltedFeature.append(feature.tilted)
            }
        case .lbp:
            for feature in cascade.lbpFeatures {
                for row in 0..<4 {
                    for column in 0..<4 { offsets.append(feature.x + column * feature.width + stride * (feature.y + row * feature.height)) }
                }
            }
        }
        self.offsets = offsets
        self.weights = weights
        self.tiltedFeature = tiltedFeature
        let w = cascade.windowWidth - 2, h = cascade.windowHeight - 2
        normCorners = (1 + stride, 1 + w + stride, 1 + stride * (1 + h), 1 + w + stride * (1 + h))
        normArea = Double(w * h)
    }

    /// The windows of rows `rows` (every `step`th, from the range's start) and columns
    /// `0..<columns` (every `step`th, the next skipped after a first-stage rejection) that pass
    /// every stage, as (column, row).
    func scan(rows: StrideTo<Int>, columns: Int, step: Int, _ tables: Tables) -> [(x: Int, y: Int)] {
        var passed: [(x: Int, y: Int)] = []
        offsets.withUnsafeBufferPointer { offsets in
            weights.withUnsafeBufferPointer { weights in
                cascade.subsets.withUnsafeBufferPointer { subsets in
                    cascade.nodes.withUnsafeBufferPointer { nodes in
                        cascade.leaves.withUnsafeBufferPointer { leaves in
                            cascade.trees.withUnsafeBufferPointer { trees in
                                let lookups = Lookups(offsets: offsets, weights: weights, subsets: subsets, nodes: nodes, leaves: leaves, trees: trees)
                                for y in rows {
                                    var x = 0
                                    while x < columns {
                                        let result = run(at: y * stride + x, tables, lookups)
                                        if result > 0 { passed.append((x, y)) }
                                        // Rejected by the first stage: the next position is skipped too.
                                        x += result == 0 ? 2 * step : step
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return passed
    }

    /// The tables a window's test reads, lent for a whole scan.
    private struct Lookups {
        var offsets: UnsafeBufferPointer<Int>
        var weights: UnsafeBufferPointer<Float>
        var subsets: UnsafeBufferPointer<Int32>
        var nodes: UnsafeBufferPointer<CascadeClassifier.Node>
        var leaves: UnsafeBufferPointer<Float>
        var trees: UnsafeBufferPointer<CascadeClassifier.Tree>
    }

    /// The window whose top-left integral entry is `origin`: 1 when every stage passes, 0 when the
    /// first stage rejects it, −n when stage n does, −1 when its contrast is too low to test.
    private func run(at origin: Int, _ tables: Tables, _ lookups: Lookups) -> Int {
        var normFactor: Float = 1
        let isHaar = cascade.featureKind == .haar
        if isHaar {
            let (n0, n1, n2, n3) = normCorners
            let sum = Int32(bitPattern: tables.sum[origin + n0] &- tables.sum[origin + n1] &- tables.sum[origin + n2] &+ tables.sum[origin + n3])
            let squares = tables.squares[origin + n0] &- tables.squares[origin + n1] &- tables.squares[origin + n2] &+ tables.squares[origin + n3]
            let spread = normArea * Double(squares) - Double(sum) * Double(sum)
            guard spread > 0 else { return -1 }
            normFactor = Float(1 / spread.squareRoot())
            // OpenCV skips windows of too little contrast (a flat wall, a clear sky).
            guard normArea * Double(normFactor) < 0.1 else { return -1 }
        }
        for (index, stage) in cascade.stages.enumerated() {
            var total = 0.0
            for treeIndex in stage.trees {
                let tree = lookups.trees[treeIndex]
                var node = 0
                while true {
                    let current = lookups.nodes[tree.nodes.lowerBound + node]
                    let goesLeft: Bool
                    if isHaar {
                        let value = haar(current.feature, origin, tables, lookups.offsets, lookups.weights) * normFactor
                        goesLeft = Double(value) < Double(current.threshold)
                    } else {
                        let code = Int(lbp(current.feature, origin, tables.sum, lookups.offsets))
                        let word = lookups.subsets[(tree.nodes.lowerBound + node) * 8 + (code >> 5)]
                        goesLeft = word & (1 << Int32(code & 31)) != 0
                    }
                    let next = goesLeft ? current.left : current.right
                    if next <= 0 {
                        total += Double(lookups.leaves[tree.leaves.lowerBound - next])
                        break
                    }
                    node = next
                }
            }
            if total < Double(stage.threshold) { return -index }
        }
        return 1
    }

    /// A Haar feature's weighted rectangle sums, before normalising.
    @inline(__always)
    private func haar(_ feature: Int, _ origin: Int, _ tables: Tables, _ offsets: UnsafeBufferPointer<Int>, _ weights: UnsafeBufferPointer<Float>) -> Float {
        let table = tiltedFeature[feature] ? tables.tilted : tables.sum
        let base = feature * 12
        func rectangle(_ index: Int) -> Float {
            let o = base + index * 4
            let value = table[origin + offsets[o]] &- table[origin + offsets[o + 1]] &- table[origin + offsets[o + 2]] &+ table[origin + offsets[o + 3]]
            return Float(Int32(bitPattern: value))
        }
        var value = weights[feature * 3] * rectangle(0) + weights[feature * 3 + 1] * rectangle(1)
        if weights[feature * 3 + 2] != 0 { value += weights[feature * 3 + 2] * rectangle(2) }
        return value
    }

    /// An LBP feature's code: the eight blocks around the centre, each 1 when its sum is at least
    /// the centre's, clockwise from the top-left as OpenCV orders them.
    @inline(__always)
    private func lbp(_ feature: Int, _ origin: Int, _ sum: UnsafeBufferPointer<UInt32>, _ offsets: UnsafeBufferPointer<Int>) -> UInt8 {
        let base = feature * 16
        func block(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Int32 {
            Int32(
                bitPattern: sum[origin + offsets[base + a]] &- sum[origin + offsets[base + b]] &- sum[origin + offsets[base + c]]
                    &+ sum[origin + offsets[base + d]])
        }
        let centre = block(5, 6, 9, 10)
        var code: UInt8 = 0
        if block(0, 1, 4, 5) >= centre { code |= 128 }
        if block(1, 2, 5, 6) >= centre { code |= 64 }
        if block(2, 3, 6, 7) >= centre { code |= 32 }
        if block(6, 7, 10, 11) >= centre { code |= 16 }
        if block(10, 11, 14, 15) >= centre { code |= 8 }
        if block(9, 10, 13, 14) >= centre { code |= 4 }
        if block(8, 9, 12, 13) >= centre { code |= 2 }
        if block(4, 5, 8, 9) >= centre { code |= 1 }
        return code
    }
}
