import Foundation

/// The HDR headroom Apple's cameras (iOS 14–16) keep only in their EXIF maker note, for the gain
/// maps whose XMP has no `HDRGainMapHeadroom`: IFD0 → the EXIF IFD (0x8769) → the maker note
/// (0x927C) when it starts `Apple iOS\0\0\x01MM` → its big-endian IFD, whose offsets count from the
/// maker note's start → tags 33 and 48 (signed rationals), turned into stops by Apple's published
/// formula, as libultrahdr reads them. Offsets are checked against the block's end; at most 64
/// entries an IFD are read.
enum AppleMakerNote {
    static let signature: [UInt8] = Array("Apple iOS".utf8) + [0, 0, 1] + Array("MM".utf8)

    /// The headroom in stops from a TIFF-structured EXIF block (as `ImageMetadata.exif` holds it,
    /// or after `Exif\0\0`); nil when the block has no Apple maker note with tag 33 or 48.
    static func headroom(exif data: Data) -> Double? {
        var bytes = [UInt8](data)
        if bytes.starts(with: Array("Exif\0\0".utf8)) { bytes.removeFirst(6) }
        guard bytes.count >= 8, let order = ByteOrder(tiffHeader: bytes) else { return nil }
        /// The entries of the IFD at `offset`: tag, type and the value field's position.
        func entries(at offset: Int, _ order: ByteOrder) -> [(tag: Int, type: Int, field: Int)] {
            guard let count = bytes.integer(2, at: offset, order), count <= 64 else { return [] }
            return (0..<count).compactMap { index in
                let entry = offset + 2 + index * 12
                guard let tag = bytes.integer(2, at: entry, order), let type = bytes.integer(2, at: entry + 2, order), entry + 12 <= bytes.count else {
                    return nil
                }
                return (tag, type, entry + 8)
            }
        }
        guard let ifd0 = bytes.integer(4, at: 4, order),
            let exifIFD = entries(at: ifd0, order).first(where: { $0.tag == 0x8769 }).flatMap({ bytes.integer(4, at: $0.field, order) }),
            let note = entries(at: exifIFD, order).first(where: { $0.tag == 0x927C }).flatMap({ bytes.integer(4, at: $0.field, order) }),
            note <= bytes.count - signature.count, Array(bytes[note..<(note + signature.count)]) == signature
        else { return nil }
        var values: [Int: Double] = [:]
        for entry in entries(at: note + signature.count, .bigEndian) where (entry.tag == 33 || entry.tag == 48) && entry.type == 10 {
            guard let offset = bytes.integer(4, at: entry.field, .bigEndian), let numerator = bytes.integer(4, at: note + offset, .bigEndian),
                let denominator = bytes.integer(4, at: note + offset + 4, .bigEndian), denominator != 0
            else { continue }
            values[entry.tag] = Double(Int32(truncatingIfNeeded: numerator)) / Double(denominator)
        }
        guard !values.isEmpty else { return nil }
        let maker33 = values[33] ?? 0, maker48 = values[48] ?? 0
        let stops =
            maker33 < 1
            ? (maker48 <= 0.01 ? -20 * maker48 + 1.8 : -0.101 * maker48 + 1.601)
            : (maker48 <= 0.01 ? -70 * maker48 + 3 : -0.303 * maker48 + 2.303)
        return stops.isFinite ? stops : nil
    }
}
