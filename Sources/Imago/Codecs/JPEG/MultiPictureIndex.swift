import Foundation

/// The CIPA DC-007 Multi-Picture Format index (`APP2 MPF\0`) of a JPEG that carries more pictures
/// after its own: Ultra HDR's gain map, a camera's preview. Offsets in it count from the index's
/// TIFF header; the first picture (this one) is at 0.
struct MultiPictureIndex: Sendable, Hashable {
    /// One picture the index lists.
    struct Entry: Sendable, Hashable {
        /// Bytes the picture takes.
        var size: Int
        /// Where it starts, from the index's TIFF header (0 for the first picture).
        var offset: Int
    }

    var entries: [Entry]

    static let signature = Array("MPF\0".utf8)
    /// An index holds at most this many entries here: Ultra HDR has 2, cameras a handful.
    static let maxEntries = 16

    /// Reads the index from an `APP2` payload after `MPF\0`; nil when it is not a well-formed one.
    init?(tiff payload: UnsafeRawBufferPointer) {
        guard payload.count >= 8, let order = ByteOrder(tiffHeader: payload) else { return nil }
        guard let ifd = payload.integer(4, at: 4, order), let count = payload.integer(2, at: ifd, order), count <= 64 else { return nil }
        var entryCount: Int?
        var entryTable: (offset: Int, bytes: Int)?
        for index in 0..<count {
            let field = ifd + 2 + index * 12
            guard let tag = payload.integer(2, at: field, order), let type = payload.integer(2, at: field + 2, order),
                let valueCount = payload.integer(4, at: field + 4, order), let value = payload.integer(4, at: field + 8, order)
            else { return nil }
            switch tag {
            case 0xB001 where type == 4 && valueCount == 1: entryCount = value
            case 0xB002 where type == 7: entryTable = (value, valueCount)
            default: break
            }
        }
        guard let entryCount, let entryTable, (1...Self.maxEntries).contains(entryCount), entryTable.bytes == entryCount * 16 else { return nil }
        var entries: [Entry] = []
        for index in 0..<entryCount {
            let start = entryTable.offset + index * 16
            guard let size = payload.integer(4, at: start + 4, order), let offset = payload.integer(4, at: start + 8, order) else { return nil }
            entries.append(Entry(size: size, offset: offset))
        }
        self.entries = entries
    }

    init(entries: [Entry]) { self.entries = entries }

    /// The `APP2` payload (after the marker and length) of an index of these entries, big-endian
    /// as libultrahdr writes it: version `0100`, the count, the entry table; the first entry is
    /// marked as the primary JPEG picture, the rest as JPEG pictures.
    func payload() -> [UInt8] {
        var bytes = Self.signature + [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]
        func u16(_ value: Int) { bytes += [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) { bytes += [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        u16(3)
        u16(0xB000)
        u16(7)
        u32(4)
        bytes += Array("0100".utf8)
        u16(0xB001)
        u16(4)
        u32(1)
        u32(entries.count)
        // The table follows the IFD: header 8 + count 2 + 3 fields of 12 + next-IFD 4.
        u16(0xB002)
        u16(7)
        u32(entries.count * 16)
        u32(8 + 2 + 36 + 4)
        u32(0)
        for (index, entry) in entries.enumerated() {
            u32(index == 0 ? 0x2003_0000 : 0x0000_0000)  // primary flag + baseline JPEG; JPEG
            u32(entry.size)
            u32(entry.offset)
            u32(0)
        }
        return bytes
    }

    /// Bytes ``payload()`` takes for `count` entries.
    static func payloadSize(entries count: Int) -> Int { signature.count + 8 + 2 + 36 + 4 + count * 16 }
}
