import Dispatch
import Foundation

extension CascadeClassifier {
    /// How ``CascadeClassifier/detect(in:options:)`` searches, as OpenCV's `detectMultiScale` takes it.
    public struct DetectionOptions: Sendable, Hashable {
        /// Each scale's window is this much larger than the last (more than 1; below 1.01 is taken
        /// as 1.01, which bounds the number of scales).
        public var scaleFactor: Double
        /// Hits a group needs beyond one to be kept (`minNeighbors`); 0 keeps every hit ungrouped.
        public var minNeighbors: Int
        /// The smallest window searched, in the plane's pixels (0: the cascade's own).
        public var minWidth: Int
        /// The smallest window's height.
        public var minHeight: Int
        /// The largest window searched (0: the plane's size).
        public var maxWidth: Int
        /// The largest window's height.
        public var maxHeight: Int

        /// OpenCV's defaults: scale 1.1, 3 neighbours, any size.
        public init(scaleFactor: Double = 1.1, minNeighbors: Int = 3, minWidth: Int = 0, minHeight: Int = 0, maxWidth: Int = 0, maxHeight: Int = 0) {
            self.scaleFactor = scaleFactor
            self.minNeighbors = minNeighbors
            self.minWidth = minWidth
            self.minHeight = minHeight
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
        }

        /// What thumbor's cascade detectors ask of OpenCV: scale 1.2, 4 neighbours, and windows at
        /// least a fifteenth of the plane's shorter side, and never under 20 pixels.
        public static func thumbor(width: Int, height: Int) -> DetectionOptions {
            let side = max(20, min(width, height) / 15)
            return DetectionOptions(scaleFactor: 1.2, minNeighbors: 4, minWidth: side, minHeight: side)
        }
    }

    /// An object found: its box in the plane's pixels, and how many hits its group had.
    public struct Detection: Sendable, Hashable {
        /// The box's left edge.
        public var x: Int
        /// The box's top edge.
        public var y: Int
        /// The box's width.
        public var width: Int
        /// The box's height.
        public var height: Int
        /// Hits grouped into this box (0 when grouping was off).
        public var neighbors: Int

        /// A detection of that box.
        public init(x: Int, y: Int, width: Int, height: Int, neighbors: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.neighbors = neighbors
        }
    }

    /// The objects the cascade finds in `plane`, as OpenCV's `detectMultiScale` finds them: the
    /// plane resized for each window scale (bilinear, as OpenCV), each window position tested
    /// (every second one below twice the window's size, skipping the next after a first-stage
    /// rejection), windows of too little contrast skipped, the hits grouped (within a fifth of their
    /// size, `minNeighbors`), boxes inside larger ones dropped, and boxes cut to the plane. Sorted
    /// top to bottom, then left to right. Work grows with the plane's pixels: bound its size first.
    public func detect(in plane: GrayPlane, options: DetectionOptions = DetectionOptions()) -> [Detection] {
        let scaleFactor = max(options.scaleFactor, 1.01)
        let maxWidth = options.maxWidth > 0 ? options.maxWidth : plane.width
        let maxHeight = options.maxHeight > 0 ? options.maxHeight : plane.height
        var scales: [Float] = []
        var factor = 1.0
        while true {
            let windowWidth = Int((Double(self.windowWidth) * factor).rounded(.toNearestOrEven))
            let windowHeight = Int((Double(self.windowHeight) * factor).rounded(.toNearestOrEven))
            if windowWidth > maxWidth || windowHeight > maxHeight || windowWidth > plane.width || windowHeight > plane.height { break }
            if windowWidth >= options.minWidth && windowHeight >= options.minHeight { scales.append(Float(factor)) }
            factor *= scaleFactor
        }
        var hits: [Detection] = []
        for scale in scales where hits.count < Self.maxHits {
            hits += detections(in: plane, scale: scale)
        }
        // Grouping compares every pair: a picture that is all texture stops adding hits here.
        if hits.count > Self.maxHits { hits.removeLast(hits.count - Self.maxHits) }
        let grouped = RectangleGrouping.group(hits, threshold: options.minNeighbors, eps: 0.2)
        return grouped.compactMap { box in
            // Cut to the plane, as OpenCV's clipObjects does; empty boxes go.
            let left = max(box.x, 0), top = max(box.y, 0)
            let right = min(box.x + box.width, plane.width), bottom = min(box.y + box.height, plane.height)
            guard right > left, bottom > top else { return nil }
            return Detection(x: left, y: top, width: right - left, height: bottom - top, neighbors: box.neighbors)
        }.sorted { ($0.y, $0.x, $0.width) < ($1.y, $1.x, $1.width) }
    }

    /// Hits kept for grouping at most (a face gives tens; a picture every window passes, without
    /// this bound, hundreds of thousands, which grouping compares pair by pair).
    static let maxHits = 4096

    /// The windows that pass every stage at one scale, in the plane's pixels.
    private func detections(in plane: GrayPlane, scale: Float) -> [Detection] {
        let width = Int((Float(plane.width) / scale).rounded(.toNearestOrEven))
        let height = Int((Float(plane.height) / scale).rounded(.toNearestOrEven))
        // Positions whose window fits with its integral's extra row and column.
        let columns = width + 1 - windowWidth, rows = height + 1 - windowHeight
        guard columns > 0, rows > 0 else { return [] }
        let scaled = plane.resized(width: width, height: height)
        let integrals = IntegralImages(scaled, tilted: hasTiltedFeatures)
        let step = scale >= 2 ? 1 : 2
        let boxWidth = Int((Float(windowWidth) * scale).rounded(.toNearestOrEven))
        let boxHeight = Int((Float(windowHeight) * scale).rounded(.toNearestOrEven))
        let evaluator = WindowEvaluator(cascade: self, stride: integrals.stride)
        // Rows in stripes, run on the cores at once (OpenCV's parallel_for_ does the same).
        let stripeRows = max(1, (rows + step - 1) / step / 8 + 1) * step
        let stripes = (rows + stripeRows - 1) / stripeRows
        let found = Locked<[Detection]>([])
        DispatchQueue.concurrentPerform(iterations: stripes) { stripe in
            var local: [Detection] = []
            integrals.sum.withUnsafeBufferPointer { sum in
                integrals.squares.withUnsafeBufferPointer { squares in
                    integrals.tilted.withUnsafeBufferPointer { tilted in
                        let tables = WindowEvaluator.Tables(sum: sum, squares: squares, tilted: tilted)
                        let rowRange = Swift.stride(from: stripe * stripeRows, to: min((stripe + 1) * stripeRows, rows), by: step)
                        for (x, y) in evaluator.scan(rows: rowRange, columns: columns, step: step, tables) {
                            local.append(
                                Detection(
                                    x: Int((Float(x) * scale).rounded(.toNearestOrEven)), y: Int((Float(y) * scale).rounded(.toNearestOrEven)),
                                    width: boxWidth, height: boxHeight, neighbors: 0))
                        }
                    }
                }
            }
            found.withLock { $0 += local }
        }
        return found.withLock { $0 }
    }
}
