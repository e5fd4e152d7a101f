import Foundation

/// ISO 21496-1 gain-map metadata in its binary form: the `APP2` payload after
/// `urn:iso:std:iso:ts:21496:-1\0` (the primary picture's holds only the two versions; the gain
/// map's holds the numbers), and the payload of HEIF's `tmap` item. Big-endian: minimum and writer
/// versions (u16 each), a flags byte (multi-channel, base colour space, backward direction, common
/// denominator), the headrooms, then per channel the gain-map minimum and maximum, gamma and the
/// two offsets, each a fraction.
enum ISOGainMapMetadata {
    static let namespace = Array("urn:iso:std:iso:ts:21496:-1\0".utf8)

    /// The metadata in `payload`; nil when it is only the version stamp, of a version this reader
    /// does not know, truncated, has a zero denominator, states a backward (HDR-base) map, or its
    /// numbers are not usable (``GainMapMetadata/isUsable``).
    static func read(_ payload: some RandomAccessCollection<UInt8>) -> GainMapMetadata? {
        let bytes = Array(payload)
        var position = 0
        func unsigned(_ width: Int) -> Int? {
            guard let value = bytes.integer(width, at: position, .bigEndian) else { return nil }
            position += width
            return value
        }
        func signed() -> Int? { unsigned(4).map { Int(Int32(truncatingIfNeeded: $0)) } }
        guard unsigned(2) == 0, unsigned(2) != nil, let flags = unsigned(1) else { return nil }
        let channels = flags & 0x80 != 0 ? 3 : 1
        let usesBaseColorSpace = flags & 0x40 != 0
        guard flags & 0x04 == 0 else { return nil }  // backward: the base is the HDR rendition
        let common = flags & 0x08 != 0
        func fraction(isSigned: Bool, denominator: Int?) -> Double? {
            guard let numerator = isSigned ? signed() : unsigned(4) else { return nil }
            guard let denominator = denominator ?? unsigned(4), denominator != 0 else { return nil }
            return Double(numerator) / Double(denominator)
        }
        var shared: Int?
        if common {
            guard let value = unsigned(4), value != 0 else { return nil }
            shared = value
        }
        guard let baseHeadroom = fraction(isSigned: false, denominator: shared), let alternateHeadroom = fraction(isSigned: false, denominator: shared)
        else { return nil }
        var values = [[Double]](repeating: [], count: 5)
        for _ in 0..<channels {
            guard let minimum = fraction(isSigned: true, denominator: shared), let maximum = fraction(isSigned: true, denominator: shared),
                let gamma = fraction(isSigned: false, denominator: shared), let baseOffset = fraction(isSigned: true, denominator: shared),
                let alternateOffset = fraction(isSigned: true, denominator: shared)
            else { return nil }
            for (index, value) in [minimum, maximum, gamma, baseOffset, alternateOffset].enumerated() { values[index].append(value) }
        }
        let metadata = GainMapMetadata(
            gainMapMin: values[0], gainMapMax: values[1], gamma: values[2], baseOffset: values[3], alternateOffset: values[4], baseHeadroom: baseHeadroom,
            alternateHeadroom: alternateHeadroom, usesBaseColorSpace: usesBaseColorSpace)
        return metadata.isUsable ? metadata : nil
    }

    /// The version stamp the primary picture carries: minimum version 0, writer version 0.
    static let versionStamp: [UInt8] = [0, 0, 0, 0]

    /// The gain map's payload for `metadata`: every fraction over one common denominator of 10^6
    /// (numbers within ±64 stops fit a signed 32-bit numerator), one channel when all are equal.
    static func payload(_ metadata: GainMapMetadata) -> [UInt8] {
        let denominator = 1_000_000
        var bytes = versionStamp
        let channels = metadata.isSingleChannel ? 1 : 3
        var flags: UInt8 = 0x08
        if channels == 3 { flags |= 0x80 }
        if metadata.usesBaseColorSpace { flags |= 0x40 }
        bytes.append(flags)
        func u32(_ value: Int) { bytes += [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func numerator(_ value: Double) -> Int {
            let scaled = (value * Double(denominator)).rounded()
            return Int(UInt32(bitPattern: Int32(min(max(scaled, Double(Int32.min)), Double(Int32.max)))))
        }
        func unsignedNumerator(_ value: Double) -> Int { Int(min(max((value * Double(denominator)).rounded(), 0), Double(UInt32.max))) }
        u32(denominator)
        u32(unsignedNumerator(metadata.baseHeadroom))
        u32(unsignedNumerator(metadata.alternateHeadroom))
        for channel in 0..<channels {
            u32(numerator(metadata.gainMapMin[channel]))
            u32(numerator(metadata.gainMapMax[channel]))
            u32(unsignedNumerator(metadata.gamma[channel]))
            u32(numerator(metadata.baseOffset[channel]))
            u32(numerator(metadata.alternateOffset[channel]))
        }
        return bytes
    }
}
