import Foundation
import Imago

/// Hostile cascade files: read (every count, rectangle, index and link checked), and when one is
/// read, run over a small picture made from the input's first bytes, so what was accepted is also
/// walked. The first byte picks the picture's size; the rest is the XML.
enum CascadeFeed {
    static func run(_ data: Data) {
        guard let first = data.first else { return }
        let body = Data(data.dropFirst())
        guard let cascade = try? CascadeClassifier(xml: body) else { return }
        let side = 8 + Int(first & 0x1F)
        let pixels = (0..<(side * side)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ Int(first)) }
        let plane = GrayPlane(width: side, height: side, pixels: pixels)
        for box in cascade.detect(in: plane, options: .init(scaleFactor: 1.25, minNeighbors: Int(first >> 6))) {
            precondition(box.x >= 0 && box.y >= 0 && box.x + box.width <= side && box.y + box.height <= side)
        }
    }
}
