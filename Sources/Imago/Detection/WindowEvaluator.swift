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
    /// When every tree is a single node (OpenCV's stumps: its shipped Haar cascades), each tree as
    /// its feature, threshold and two leaf values, tested without walking nodes; else empty.
    private let stumps: [Stump]
    /// Each stage's first and past-the-end tree, and its threshold, laid out flat.
    private let stageBounds: [(start: Int, end: Int, threshold: Float)]

    /// A one-node tree with its Haar feature laid in: the three rectangles' corners as offsets
    /// from a window's origin, their weights, the threshold and the two leaves' values. One read
    /// of a few cache lines per tree, where the general walk reads four tables.
    struct Stump {
        var corners: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32)
        var weights: (Float, Float, Float)
        var tilted: Bool
        var threshold: Float
        var left: Float
        var right: Float
    }
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
        stageBounds = cascade.stages.map { ($0.trees.lowerBound, $0.trees.upperBound, $0.threshold) }
        var stumps: [Stump] = []
        if cascade.featureKind == .haar {
            for tree in cascade.trees {
                // A stump: one node whose both sides are leaves (the loader checked they are in range).
                guard tree.nodes.count == 1, case let node = cascade.nodes[tree.nodes.lowerBound], node.left <= 0, node.right <= 0 else {
                    stumps = []
                    break
                }
                let o = offsets[node.feature * 12..<node.feature * 12 + 12].map { Int32(truncatingIfNeeded: $0) }
                stumps.append(
                    Stump(
                        corners: (o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[11]),
                        weights: (weights[node.feature * 3], weights[node.feature * 3 + 1], weights[node.feature * 3 + 2]),
                        tilted: tiltedFeature[node.feature], threshold: node.threshold, left: cascade.leaves[tree.leaves.lowerBound - node.left],
                        right: cascade.leaves[tree.leaves.lowerBound - node.right]))
            }
        }
        self.stumps = stumps
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
                                tiltedFeature.withUnsafeBufferPointer { tilted in
                                    stumps.withUnsafeBufferPointer { stumps in
                                        stageBounds.withUnsafeBufferPointer { stages in
                                            let lookups = Lookups(
                                                offsets: offsets, weights: weights, tilted: tilted, subsets: subsets, nodes: nodes, leaves: leaves,
                                                trees: trees, stumps: stumps, stages: stages)
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
                }
            }
        }
        return passed
    }

    /// The tables a window's test reads, lent for a whole scan.
    private struct Lookups {
        var offsets: UnsafeBufferPointer<Int>
        var weights: UnsafeBufferPointer<Float>
        var tilted: UnsafeBufferPointer<Bool>
        var subsets: UnsafeBufferPointer<Int32>
        var nodes: UnsafeBufferPointer<CascadeClassifier.Node>
        var leaves: UnsafeBufferPointer<Float>
        var trees: UnsafeBufferPointer<CascadeClassifier.Tree>
        var stumps: UnsafeBufferPointer<Stump>
        var stages: UnsafeBufferPointer<(start: Int, end: Int, threshold: Float)>
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
        if !lookups.stumps.isEmpty {
            // OpenCV's predictOrderedStump: the same sums in the same order, no node walk.
            for index in 0..<lookups.stages.count {
                let stage = lookups.stages[index]
                var total = 0.0
                for treeIndex in stage.start..<stage.end {
                    let stump = lookups.stumps[treeIndex]
                    let value = Self.stumpFeature(stump, (stump.tilted ? tables.tilted : tables.sum).baseAddress.unsafelyUnwrapped + origin) * normFactor
                    total += Double(Double(value) < Double(stump.threshold) ? stump.left : stump.right)
                }
                if total < Double(stage.threshold) { return -index }
            }
            return 1
        }
        for index in 0..<lookups.stages.count {
            let stage = lookups.stages[index]
            var total = 0.0
            for treeIndex in stage.start..<stage.end {
                let tree = lookups.trees[treeIndex]
                var node = 0
                while true {
                    let current = lookups.nodes[tree.nodes.lowerBound + node]
                    let goesLeft: Bool
                    if isHaar {
                        let value = haar(current.feature, origin, tables, lookups) * normFactor
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

    /// A stump's Haar feature at the window whose origin entry `window` points to: OpenCV's
    /// arithmetic (32-bit sums as floats, the third rectangle only when weighted).
    @inline(__always)
    private static func stumpFeature(_ stump: Stump, _ window: UnsafePointer<UInt32>) -> Float {
        let c = stump.corners
        @inline(__always) func rectangle(_ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> Float {
            Float(Int32(bitPattern: window[Int(a)] &- window[Int(b)] &- window[Int(c)] &+ window[Int(d)]))
        }
        var value = stump.weights.0 * rectangle(c.0, c.1, c.2, c.3) + stump.weights.1 * rectangle(c.4, c.5, c.6, c.7)
        if stump.weights.2 != 0 { value += stump.weights.2 * rectangle(c.8, c.9, c.10, c.11) }
        return value
    }

    /// A Haar feature's weighted rectangle sums, before normalising.
    @inline(__always)
    private func haar(_ feature: Int, _ origin: Int, _ tables: Tables, _ lookups: Lookups) -> Float {
        let (offsets, weights) = (lookups.offsets, lookups.weights)
        let table = lookups.tilted[feature] ? tables.tilted : tables.sum
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
