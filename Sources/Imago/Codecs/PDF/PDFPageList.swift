import Foundation

/// What `pdfinfo -box` says of a document: how many pages it has, and of the pages asked about,
/// each one's crop box and rotation. Read from the tool's text, which is untrusted: the document's
/// own strings (its title, author…) come first in it and may hold lines that look like the
/// tool's, so for every key the last line wins (the real ones follow the document's strings).
struct PDFPageList: Sendable, Hashable {
    /// A page's crop box (what pdftoppm `-cropbox` renders), in points, and its rotation.
    struct Page: Sendable, Hashable {
        /// The page's number, from 1 as Poppler counts.
        var number: Int
        /// The crop box's width and height in points (1/72 inch), before rotation.
        var width: Double, height: Double
        /// The page's rotation, clockwise: 0, 90, 180 or 270.
        var rotation: Int

        /// Width and height as shown, turned by the rotation.
        var upright: (width: Double, height: Double) { rotation % 180 == 0 ? (width, height) : (height, width) }
    }

    /// The document's page count.
    var pageCount: Int
    /// The pages `pdfinfo` described, by number.
    var pages: [Page]

    /// Largest side a page may have, in points: PDF's own limit is 14,400 (200 inches).
    static let maxSide = 14_400.0 * 16

    /// Reads `pdfinfo -box` output; nil when it has no page count or a page's box is unreadable.
    init?(_ text: Data) {
        var pageCount: Int?
        var boxes: [Int: (Double, Double)] = [:]
        var rotations: [Int: Int] = [:]
        for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let words = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") })
                .map { String(decoding: $0, as: UTF8.self) }
            guard let key = words.first else { continue }
            if key == "Pages:", words.count == 2, let count = Int(words[1]) {
                pageCount = count
            } else if key == "Page", words.count >= 4, let number = Int(words[1]), number > 0 {
                switch words[2] {
                case "CropBox:" where words.count == 7:
                    let values = words[3...6].compactMap(Double.init)
                    guard values.count == 4 else { continue }
                    boxes[number] = (abs(values[2] - values[0]), abs(values[3] - values[1]))
                case "rot:" where words.count == 4:
                    if let rotation = Int(words[3]) { rotations[number] = rotation }
                default:
                    continue
                }
            }
        }
        guard let pageCount, pageCount > 0 else { return nil }
        var pages: [Page] = []
        for (number, box) in boxes.sorted(by: { $0.key < $1.key }) where number <= pageCount {
            guard box.0.isFinite, box.1.isFinite, box.0 > 0, box.1 > 0, box.0 <= Self.maxSide, box.1 <= Self.maxSide else { return nil }
            // Poppler keeps a rotation that is a multiple of 90, normalised; anything else is not its.
            let rotation = ((rotations[number] ?? 0) % 360 + 360) % 360
            pages.append(Page(number: number, width: box.0, height: box.1, rotation: rotation - rotation % 90))
        }
        self.pageCount = pageCount
        self.pages = pages
    }
}
