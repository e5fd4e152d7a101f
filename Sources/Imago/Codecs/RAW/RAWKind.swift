import Foundation

/// A camera RAW format Imago reads through LibRaw, told from the file's first bytes: the
/// TIFF-based ones by what their first directory says (DNG's version tag, Canon's `CR` mark, a
/// camera maker's sensor data), the rest by their own signatures.
enum RAWKind: CaseIterable, Sendable {
    /// Adobe Digital Negative.
    case dng
    /// Canon CR2.
    case cr2
    /// Canon CR3 (ISO base media, brand `crx `).
    case cr3
    /// Nikon NEF and NRW.
    case nef
    /// Sony ARW, SRF and SR2.
    case arw
    /// Olympus ORF.
    case orf
    /// Fujifilm RAF.
    case raf
    /// Panasonic RW2 (and Leica's RWL).
    case rw2
    /// Pentax PEF.
    case pef
    /// Samsung SRW.
    case srw

    var format: ImageFormat {
        switch self {
        case .dng: .dng
        case .cr2: .cr2
        case .cr3: .cr3
        case .nef: .nef
        case .arw: .arw
        case .orf: .orf
        case .raf: .raf
        case .rw2: .rw2
        case .pef: .pef
        case .srw: .srw
        }
    }

    /// The kind `data` starts like, or nil.
    static func sniff(_ data: Data) -> RAWKind? {
        guard data.count >= 16 else { return nil }
        let bytes = [UInt8](data.prefix(16))
        if data.starts(with: Array("FUJIFILMCCD-RAW".utf8)) { return .raf }
        if bytes[4...11].elementsEqual(Array("ftypcrx ".utf8)) { return .cr3 }
        if bytes[0...3].elementsEqual(Array("IIRO".utf8)) || bytes[0...3].elementsEqual(Array("IIRS".utf8))
            || bytes[0...3].elementsEqual(Array("MMOR".utf8))
        {
            return .orf
        }
        if bytes[0...3].elementsEqual([0x49, 0x49, 0x55, 0x00]) { return .rw2 }
        let little = bytes[0...3].elementsEqual([0x49, 0x49, 0x2A, 0x00])
        guard little || bytes[0...3].elementsEqual([0x4D, 0x4D, 0x00, 0x2A]) else { return nil }
        if bytes[8] == 0x43, bytes[9] == 0x52, bytes[10] == 2 { return .cr2 }
        guard let directory = TIFFDirectory(data, littleEndian: little) else { return nil }
        if directory.isDNG { return .dng }
        guard directory.holdsSensorData, let make = directory.make?.uppercased() else { return nil }
        for (prefix, kind) in makers where make.hasPrefix(prefix) { return kind }
        return nil
    }

    /// Makers whose TIFF-based RAW files carry no mark of their own.
    private static let makers: [(String, RAWKind)] = [("NIKON", .nef), ("SONY", .arw), ("PENTAX", .pef), ("RICOH", .pef), ("SAMSUNG", .srw)]

    /// What a RAW sniff reads of a TIFF file's first directory (IFD0): a few tags, bounds-checked.
    private struct TIFFDirectory {
        var isDNG = false
        var make: String?
        var hasSubDirectories = false
        var photometric = 0
        var compression = 0

        /// A camera's sensor data rather than a picture: sub-directories (where NEF and ARW keep
        /// the raw data), a colour filter array, or a maker's own compression.
        var holdsSensorData: Bool { hasSubDirectories || photometric == 32803 || compression >= 32767 && compression != 32773 }

        init?(_ data: Data, littleEndian: Bool) {
            let bytes = [UInt8](data.prefix(1 << 16))
            func read(_ offset: Int, _ count: Int) -> Int? {
                guard offset >= 0, offset + count <= bytes.count else { return nil }
                let slice = bytes[offset..<(offset + count)]
                return (littleEndian ? slice.reversed() : Array(slice)).reduce(0) { $0 << 8 | Int($1) }
            }
            guard let start = read(4, 4), let count = read(start, 2), count > 0, count <= 1024 else { return nil }
            for index in 0..<count {
                let entry = start + 2 + 12 * index
                guard let tag = read(entry, 2), let type = read(entry + 2, 2), let values = read(entry + 4, 4) else { return nil }
                let short = type == 3 ? read(entry + 8, 2) : read(entry + 8, 4)
                switch tag {
                case 50706: isDNG = true
                case 330: hasSubDirectories = true
                case 262: photometric = short ?? 0
                case 259: compression = short ?? 0
                case 271 where type == 2 && values > 0 && values <= 64:
                    let at = values <= 4 ? entry + 8 : read(entry + 8, 4) ?? -1
                    guard at >= 0, at + values <= bytes.count else { continue }
                    make = String(decoding: bytes[at..<(at + values)].prefix { $0 != 0 }, as: UTF8.self)
                default: break
                }
            }
        }
    }
}
