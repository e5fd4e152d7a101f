import Foundation

/// An EXIF block: a TIFF structure (`II*\0` or `MM\0*`, then IFDs), as PNG `eXIf` holds it and
/// JPEG `APP1` after `Exif\0\0`. Imago reads only IFD0 and never trusts an offset or a count past
/// the end of the bytes.
struct EXIF {
    /// The TIFF structure.
    let data: Data
    private let bytes: [UInt8]
    private let littleEndian: Bool

    /// Tags Imago reads or writes.
    enum Tag: Int {
        case orientation = 0x0112
        case artist = 0x013B
        case copyright = 0x8298
        case gpsInfo = 0x8825
    }

    /// The block in `data`, found after any of the wrappers formats put before it (`Exif\0\0`,
    /// HEIF's 4-byte offset); nil when there is no TIFF header.
    init?(_ data: Data) {
        var bytes = [UInt8](data)
        if bytes.starts(with: Array("Exif\0\0".utf8)) { bytes.removeFirst(6) }
        if !Self.isTIFFHeader(bytes), bytes.count >= 8 {
            if let offset = bytes.integer(4, at: 0, .bigEndian), offset < bytes.count - 4, Self.isTIFFHeader(Array(bytes[(4 + offset)...])) {
                bytes.removeFirst(4 + offset)
            }
        }
        guard Self.isTIFFHeader(bytes) else { return nil }
        self.bytes = bytes
        self.data = Data(bytes)
        littleEndian = bytes[0] == 0x49
    }

    private static func isTIFFHeader(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && (bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]))
    }

    private func read16(_ at: Int) -> Int? { bytes.integer(2, at: at, littleEndian ? .littleEndian : .bigEndian) }

    private func read32(_ at: Int) -> Int? { bytes.integer(4, at: at, littleEndian ? .littleEndian : .bigEndian) }

    /// IFD0's entries: tag, type, count, and where the entry starts.
    private var entries: [(tag: Int, type: Int, count: Int, entry: Int)] {
        guard let ifd = read32(4), let count = read16(ifd) else { return [] }
        var found: [(Int, Int, Int, Int)] = []
        for index in 0..<count {
            let entry = ifd + 2 + index * 12
            guard let tag = read16(entry), let type = read16(entry + 2), let values = read32(entry + 4) else { break }
            found.append((tag, type, values, entry))
        }
        return found
    }

    /// Whether IFD0 has `tag`.
    /// IFD0's orientation (a SHORT stored in its entry), nil when absent or not 1…8.
    var orientation: ImageOrientation? {
        entries.first { $0.tag == Tag.orientation.rawValue }.flatMap { read16($0.entry + 8) }.flatMap(ImageOrientation.init(rawValue:))
    }

    func has(_ tag: Tag) -> Bool { entries.contains { $0.tag == tag.rawValue } }

    /// An ASCII tag of IFD0, without its terminating zero.
    func string(_ tag: Tag) -> String? {
        guard let entry = entries.first(where: { $0.tag == tag.rawValue && $0.type == 2 }), entry.count > 0, entry.count <= 1 << 16 else { return nil }
        let start = entry.count <= 4 ? entry.entry + 8 : read32(entry.entry + 8) ?? -1
        guard start >= 0, start + entry.count <= bytes.count else { return nil }
        let text = bytes[start..<(start + entry.count)].prefix { $0 != 0 }
        return String(decoding: text, as: UTF8.self)
    }

    /// This block with its orientation set to 1 (the pixels were turned upright).
    func orientationReset() -> EXIF {
        guard let entry = entries.first(where: { $0.tag == Tag.orientation.rawValue && $0.type == 3 && $0.count == 1 }) else { return self }
        var patched = bytes
        let value: [UInt8] = littleEndian ? [1, 0] : [0, 1]
        patched.replaceSubrange((entry.entry + 8)..<(entry.entry + 10), with: value)
        return EXIF(Data(patched)) ?? self
    }

    /// A block of only the copyright and artist (as imgproxy's `keep_copyright` keeps them), or
    /// nil when neither is set.
    func copyrightOnly() -> EXIF? {
        let tags = [(Tag.artist, string(.artist)), (Tag.copyright, string(.copyright))].compactMap { tag, text in text.map { (tag, $0) } }
        guard !tags.isEmpty else { return nil }
        // Big-endian: header, one IFD of the tags in order, no next IFD, then the strings.
        var out: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]
        func append16(_ value: Int) { out += [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func append32(_ value: Int) { out += [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        append16(tags.count)
        var stringsAt = 8 + 2 + tags.count * 12 + 4
        var strings: [UInt8] = []
        for (tag, text) in tags {
            let value = Array(text.utf8.prefix(4096)) + [0]
            append16(tag.rawValue)
            append16(2)
            append32(value.count)
            if value.count <= 4 {
                out += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                append32(stringsAt)
                strings += value
                stringsAt += value.count
            }
        }
        append32(0)
        return EXIF(Data(out + strings))
    }
}
