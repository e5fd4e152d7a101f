import Dispatch
import Foundation

/// PNG's row filters (PNG specification §9), one chosen per row: of None, Sub, Up and Paeth, the
/// one whose bytes, read as signed, have the smallest sum of magnitudes (libpng's heuristic).
/// Average is left out, as Pillow leaves it out: the heuristic picks it on smooth photos where it
/// compresses worse (a ukui photo came out 1.1% larger with it). A row depends only on itself and
/// the row above, so strips of rows are filtered on every core.
struct PNGRowFilter {
    let width: Int
    let height: Int
    /// 3 (RGB, alpha dropped) or 4 (RGBA).
    let channels: Int
    /// False writes every row unfiltered (for stored, uncompressed output).
    let filters: Bool

    private var rowBytes: Int { width * channels }

    /// `pixels` is RGBA, 4 bytes a pixel, `width × height` of them (the caller checked). Returns
    /// `height` rows of a filter type byte and `width × channels` filtered bytes.
    func filter(_ pixels: [UInt8]) -> [UInt8] {
        let stride = 1 + rowBytes, total = height * stride
        // Strips several times the cores, so an uneven strip does not leave a core idle.
        let strips = min(height, ProcessInfo.processInfo.activeProcessorCount * 4)
        return [UInt8](unsafeUninitializedCapacity: total) { output, count in
            pixels.withUnsafeBufferPointer { source in
                let buffers = Buffers(source: source, output: output)
                DispatchQueue.concurrentPerform(iterations: strips) { strip in
                    let rows = (height * strip / strips)..<(height * (strip + 1) / strips)
                    filterRows(rows, from: buffers.source, into: buffers.output)
                }
            }
            count = total
        }
    }

    /// The source and output for the strips: the source is only read, each strip writes rows no
    /// other strip writes, and `concurrentPerform` returns before either buffer's closure ends.
    private struct Buffers: @unchecked Sendable {
        let source: UnsafeBufferPointer<UInt8>
        let output: UnsafeMutableBufferPointer<UInt8>
    }

    private func filterRows(_ rows: Range<Int>, from source: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) {
        var above = [UInt8](repeating: 0, count: rowBytes), current = [UInt8](repeating: 0, count: rowBytes)
        if rows.lowerBound > 0 { load(row: rows.lowerBound - 1, from: source, into: &above) }
        let stride = 1 + rowBytes
        for y in rows {
            load(row: y, from: source, into: &current)
            let out = UnsafeMutableBufferPointer(rebasing: output[(y * stride)..<((y + 1) * stride)])
            current.withUnsafeBufferPointer { raw in
                above.withUnsafeBufferPointer { above in filterRow(raw, above: above, into: out) }
            }
            swap(&above, &current)
        }
    }

    /// One row of the source, without its alpha when the output is RGB.
    private func load(row y: Int, from source: UnsafeBufferPointer<UInt8>, into row: inout [UInt8]) {
        let start = y * width * 4
        if channels == 4 {
            row.withUnsafeMutableBufferPointer { row in
                _ = row.initialize(from: source[start..<(start + width * 4)])
            }
            return
        }
        row.withUnsafeMutableBufferPointer { row in
            for x in 0..<width {
                row[x * 3] = source[start + x * 4]
                row[x * 3 + 1] = source[start + x * 4 + 1]
                row[x * 3 + 2] = source[start + x * 4 + 2]
            }
        }
    }

    /// Writes the filter type, then the row filtered by the cheapest filter.
    private func filterRow(_ raw: UnsafeBufferPointer<UInt8>, above: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) {
        var costs = (none: 0, sub: 0, up: 0, paeth: 0)
        if filters {
            for i in 0..<raw.count {
                let x = raw[i], b = above[i]
                let a = i >= channels ? raw[i - channels] : 0, c = i >= channels ? above[i - channels] : 0
                costs.none &+= Self.magnitude(x)
                costs.sub &+= Self.magnitude(x &- a)
                costs.up &+= Self.magnitude(x &- b)
                costs.paeth &+= Self.magnitude(x &- Self.paeth(a, b, c))
            }
        }
        // The first of the cheapest, in the order of their type numbers; Average (3) never.
        let all = [(0, costs.none), (1, costs.sub), (2, costs.up), (4, costs.paeth)]
        let type = filters ? all.min { $0.1 < $1.1 }?.0 ?? 0 : 0
        out[0] = UInt8(type)
        for i in 0..<raw.count {
            let x = raw[i], b = above[i]
            let a = i >= channels ? raw[i - channels] : 0, c = i >= channels ? above[i - channels] : 0
            out[i + 1] =
                switch type {
                case 1: x &- a
                case 2: x &- b
                case 4: x &- Self.paeth(a, b, c)
                default: x
                }
        }
    }

    /// A filtered byte read as signed, its distance from zero.
    @inline(__always) private static func magnitude(_ value: UInt8) -> Int { Int(Int8(bitPattern: value).magnitude) }

    /// The neighbour (left, above, upper left) nearest to left + above − upper left.
    @inline(__always) private static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let a16 = Int(a), b16 = Int(b), c16 = Int(c)
        let pa = abs(b16 - c16), pb = abs(a16 - c16), pc = abs(a16 + b16 - 2 * c16)
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }
}
