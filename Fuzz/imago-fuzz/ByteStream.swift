/// Reads a fuzzer's bytes as the choices a generator makes; past the end every read is 0.
struct ByteStream {
    private let bytes: [UInt8]
    private var offset = 0

    init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        self.bytes = Array(bytes)
    }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }

    mutating func uint16() -> Int {
        Int(byte()) | Int(byte()) << 8
    }

    mutating func uint24() -> Int {
        Int(byte()) | Int(byte()) << 8 | Int(byte()) << 16
    }

    /// Up to `count` raw bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + count)
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }
}
