import Foundation

/// Builds a structurally valid animated GIF from fuzzer bytes, so frame rectangles (inside, across
/// or outside the canvas), disposal methods, transparency, interlacing, local color tables, delays
/// and loop counts are what gets mutated, not the framing that byte mutation would break first.
enum GIFAnimationGenerator {
    static func make(from data: Data) -> Data {
        var input = ByteStream(data)
        var out = Data("GIF89a".utf8)
        // Small canvases mostly; a large one when the top bit says so (the memory budget's case).
        let large = input.byte() & 0x80 != 0
        let width = large ? input.uint16() : Int(input.byte() % 64) + 1
        let height = large ? input.uint16() : Int(input.byte() % 64) + 1
        append16(width, to: &out)
        append16(height, to: &out)
        let globalBits = Int(input.byte() % 8)
        out.append(contentsOf: [0x80 | UInt8(globalBits), input.byte(), 0])
        out.append(contentsOf: palette(bits: globalBits, from: &input))
        if input.byte() & 1 != 0 {
            out.append(contentsOf: [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1])
            append16(input.uint16(), to: &out)
            out.append(0)
        }
        let frames = Int(input.byte() % 12)
        for _ in 0..<frames where !input.isAtEnd {
            let flags = input.byte()
            // Graphics control: disposal 0–7 (4–7 undefined), transparency, delay.
            out.append(contentsOf: [0x21, 0xF9, 4, (flags & 0x1C) | (flags & 1), input.byte(), input.byte(), input.byte(), 0])
            let x = flags & 0x20 != 0 ? input.uint16() : Int(input.byte() % 80)
            let y = flags & 0x20 != 0 ? input.uint16() : Int(input.byte() % 80)
            let w = Int(input.byte() % 70), h = Int(input.byte() % 70)
            out.append(0x2C)
            for value in [x, y, w, h] { append16(value, to: &out) }
            let localBits = Int(input.byte() % 8)
            let hasLocal = flags & 0x40 != 0
            let interlaced = flags & 0x80 != 0
            out.append((hasLocal ? 0x80 : 0) | (interlaced ? 0x40 : 0) | (hasLocal ? UInt8(localBits) : 0))
            if hasLocal { out.append(contentsOf: palette(bits: localBits, from: &input)) }
            let minimumCodeSize = max(2, min(8, (hasLocal ? localBits : globalBits) + 1))
            // Image data: valid uncompressed LZW of fuzzer indices, or raw fuzzer bytes.
            if input.byte() & 3 != 0 {
                out.append(contentsOf: lzw(input.bytes(w * h), count: w * h, minimumCodeSize: minimumCodeSize))
            } else {
                out.append(UInt8(minimumCodeSize))
                out.append(contentsOf: subBlocks(input.bytes(Int(input.byte()))))
            }
        }
        if input.byte() != 0xFF { out.append(0x3B) }
        return out
    }

    private static func append16(_ value: Int, to data: inout Data) {
        data.append(UInt8(value & 0xFF))
        data.append(UInt8((value >> 8) & 0xFF))
    }

    private static func palette(bits: Int, from input: inout ByteStream) -> [UInt8] {
        let size = 3 << (bits + 1)
        let given = input.bytes(min(size, 12))
        return given + [UInt8](repeating: 0x80, count: size - given.count)
    }

    private static func subBlocks(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 255) {
            let chunk = bytes[start..<min(bytes.count, start + 255)]
            out.append(UInt8(chunk.count))
            out.append(contentsOf: chunk)
        }
        return out + [0]
    }

    /// LZW that never grows its code width: a clear code before every two literals.
    private static func lzw(_ indices: [UInt8], count: Int, minimumCodeSize: Int) -> [UInt8] {
        let clear = 1 << minimumCodeSize, width = minimumCodeSize + 1
        var codes: [Int] = []
        for index in 0..<count {
            if index % 2 == 0 { codes.append(clear) }
            codes.append(Int(index < indices.count ? indices[index] : 0) % clear)
        }
        codes.append(clear + 1)
        var bits = 0, bitCount = 0
        var packed: [UInt8] = []
        for code in codes {
            bits |= code << bitCount
            bitCount += width
            while bitCount >= 8 {
                packed.append(UInt8(bits & 0xFF))
                bits >>= 8
                bitCount -= 8
            }
        }
        if bitCount > 0 { packed.append(UInt8(bits & 0xFF)) }
        return [UInt8(minimumCodeSize)] + subBlocks(packed)
    }
}
