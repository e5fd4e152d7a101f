/// Which byte of a stored integer comes first.
enum ByteOrder {
    /// Most significant first (PNG, JPEG, ISO-BMFF, ICC, TIFF `MM`).
    case bigEndian
    /// Least significant first (BMP, ICO, TGA, TIFF `II`).
    case littleEndian
}

extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// The unsigned integer stored in the `width` bytes (1 to 8) at `offset` from the start, in
    /// `order`; nil when the bytes end first or an 8-byte value does not fit in `Int`. Every
    /// decoder and metadata reader reads its headers' integers here, with the bounds checked.
    func integer(_ width: Int, at offset: Int, _ order: ByteOrder) -> Int? {
        guard width >= 1, width <= 8, offset >= 0, offset <= count - width else { return nil }
        let first = startIndex + offset
        var value: UInt64 = 0
        for index in 0..<width {
            let byte = self[order == .bigEndian ? first + index : first + width - 1 - index]
            value = value << 8 | UInt64(byte)
        }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }
}

extension ByteOrder {
    /// The order a TIFF header's first two bytes name (`II` little-endian, `MM` big-endian), as EXIF
    /// blocks, MPF indexes and maker notes start; nil for anything else.
    init?<Bytes: Collection>(tiffHeader bytes: Bytes) where Bytes.Element == UInt8 {
        switch (bytes.first, bytes.dropFirst().first) {
        case (0x49, 0x49): self = .littleEndian
        case (0x4D, 0x4D): self = .bigEndian
        default: return nil
        }
    }
}
