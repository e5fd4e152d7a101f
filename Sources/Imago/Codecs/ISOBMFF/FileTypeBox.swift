import Foundation

/// The brands of an ISO base media file's leading `ftyp` box (HEIF, AVIF, MP4 …): the major brand,
/// then the compatible ones, read from at most its first 64 bytes; empty when it has none.
enum FileTypeBox {
    static func brands(_ data: Data) -> [String] {
        let head = [UInt8](data.prefix(64))
        guard head.count >= 16, head[4..<8].elementsEqual("ftyp".utf8) else { return [] }
        let boxSize = head.integer(4, at: 0, .bigEndian) ?? 0
        let end = min(max(boxSize, 16), head.count)
        // The major brand at 8, the minor version at 12, compatible brands from 16.
        let offsets = [8] + Array(stride(from: 16, to: end - 3, by: 4))
        return offsets.map { String(decoding: head[$0..<$0 + 4], as: UTF8.self) }
    }
}
