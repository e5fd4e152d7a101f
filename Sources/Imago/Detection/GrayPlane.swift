import Foundation

/// An 8-bit grey image, the input of the detectors: rows of `width` bytes, top to bottom.
public struct GrayPlane: Sendable {
    /// Columns.
    public let width: Int
    /// Rows.
    public let height: Int
    /// `width × height` bytes.
    public let pixels: [UInt8]

    /// A plane of `pixels`, which must hold `width × height` bytes.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height, "a grey plane needs width × height bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The luma of `image`'s first frame as Pillow's `convert("L")` makes it (ITU-R 601-2 weights in
    /// 16-bit fixed point, alpha ignored), which is what thumbor's detectors look at.
    public init(_ image: Image) {
        let count = image.width * image.height
        var grey = [UInt8](repeating: 0, count: count)
        image.pixels.withUnsafeBufferPointer { rgba in
            grey.withUnsafeMutableBufferPointer { grey in
                for index in 0..<count {
                    let r = UInt32(rgba[index * 4]), g = UInt32(rgba[index * 4 + 1]), b = UInt32(rgba[index * 4 + 2])
                    grey[index] = UInt8((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16)
                }
            }
        }
        self.init(width: image.width, height: image.height, pixels: grey)
    }

    /// The luma of `image`'s first frame as ``init(_:)`` makes it, each `shrink × shrink` block
    /// averaged into one pixel (the blocks that fit; a side shorter than `shrink` makes one block
    /// of what there is). A shrink of 1 or less is ``init(_:)``.
    public init(_ image: Image, shrunkBy shrink: Int) {
        guard shrink > 1 else {
            self.init(image)
            return
        }
        let width = max(1, image.width / shrink), height = max(1, image.height / shrink)
        let columns = min(width * shrink, image.width), blockWidth = min(shrink, image.width)
        var grey = [UInt8](repeating: 0, count: width * height)
        var sums = [UInt32](repeating: 0, count: width)
        image.pixels.withUnsafeBufferPointer { rgba in
            for y in 0..<height {
                for i in sums.indices { sums[i] = 0 }
                let rows = y * shrink..<min((y + 1) * shrink, image.height)
                for row in rows {
                    let start = row * image.width * 4
                    for x in 0..<columns {
                        let at = start + x * 4
                        let r = UInt32(rgba[at]), g = UInt32(rgba[at + 1]), b = UInt32(rgba[at + 2])
                        sums[x / shrink] += (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16
                    }
                }
                let area = UInt32(max(1, blockWidth * rows.count))
                for x in 0..<width { grey[y * width + x] = UInt8((sums[x] + area / 2) / area) }
            }
        }
        self.init(width: width, height: height, pixels: grey)
    }

    /// The plane resized to `width × height` by bilinear interpolation as OpenCV's `resize` with
    /// `INTER_LINEAR_EXACT` does it for 8-bit images (what its cascade detector uses): pixel centres
    /// aligned, 8-bit fixed-point weights, columns and rows past either edge taking the edge's
    /// pixel, each row rounded to 1/256 before rows are combined. The same size is a copy.
    func resized(width newWidth: Int, height newHeight: Int) -> GrayPlane {
        if newWidth == width && newHeight == height { return self }
        guard newWidth > 0, newHeight > 0, width > 0, height > 0 else {
            // Nothing to sample: a black plane of the size asked for (never a trap on an empty source).
            let (w, h) = (max(newWidth, 0), max(newHeight, 0))
            return GrayPlane(width: w, height: h, pixels: [UInt8](repeating: 0, count: w * h))
        }
        let columns = Self.linearTaps(source: width, destination: newWidth)
        let rows = Self.linearTaps(source: height, destination: newHeight)
        var output = [UInt8](repeating: 0, count: newWidth * newHeight)
        var upper = [UInt32](repeating: 0, count: newWidth), lower = [UInt32](repeating: 0, count: newWidth)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { output in
                upper.withUnsafeMutableBufferPointer { upperBuffer in
                    lower.withUnsafeMutableBufferPointer { lowerBuffer in
                        // Two row buffers that trade places as the rows move down.
                        var upper = upperBuffer, lower = lowerBuffer
                        /// A source row resized across, in 1/256ths.
                        func horizontal(_ row: Int, into line: UnsafeMutableBufferPointer<UInt32>) {
                            let base = row * width
                            for x in 0..<newWidth {
                                let tap = columns[x]
                                line[x] =
                                    tap.second == 0
                                    ? UInt32(source[base + tap.index]) * tap.first
                                    : UInt32(source[base + tap.index]) * tap.first + UInt32(source[base + tap.index + 1]) * tap.second
                            }
                        }
                        var upperRow = -1, lowerRow = -1
                        for y in 0..<newHeight {
                            let tap = rows[y]
                            if upperRow != tap.index {
                                if lowerRow == tap.index {
                                    swap(&upper, &lower)
                                    swap(&upperRow, &lowerRow)
                                } else {
                                    horizontal(tap.index, into: upper)
                                    upperRow = tap.index
                                }
                            }
                            let base = y * newWidth
                            if tap.second == 0 {
                                // An edge row: the row alone, rounded from 1/256ths.
                                for x in 0..<newWidth { output[base + x] = UInt8(clamping: (upper[x] + 128) >> 8) }
                                continue
                            }
                            if lowerRow != tap.index + 1 {
                                horizontal(tap.index + 1, into: lower)
                                lowerRow = tap.index + 1
                            }
                            let b0 = tap.first, b1 = tap.second
                            for x in 0..<newWidth {
                                output[base + x] = UInt8(clamping: (upper[x] * b0 + lower[x] * b1 + 32768) >> 16)
                            }
                        }
                    }
                }
            }
        }
        return GrayPlane(width: newWidth, height: newHeight, pixels: output)
    }

    /// For each destination index: the first source index and the two weights in 1/256ths
    /// (summing to 256); past either edge the edge pixel alone (256, 0).
    private static func linearTaps(source: Int, destination: Int) -> [(index: Int, first: UInt32, second: UInt32)] {
        let scale = 1 / (Double(destination) / Double(source))
        return (0..<destination).map { index in
            let position = scale * (Double(index) + 0.5) - 0.5
            let first = Int(position.rounded(.down))
            if first < 0 { return (0, 256, 0) }
            if first >= source - 1 { return (source - 1, 256, 0) }
            let second = UInt32(((position - Double(first)) * 256).rounded(.toNearestOrEven))
            return (first, 256 - second, second)
        }
    }
}
