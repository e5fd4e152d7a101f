import Foundation

/// Builds a structurally valid animated WebP (RIFF, VP8X, ANIM, ANMF chunks) from fuzzer bytes:
/// canvas size, frame offsets (inside or outside the canvas), durations up to 2^24 − 1 ms (so
/// running timestamps pass Int32), blend and dispose flags, and each frame's bitstream either a
/// valid lossless image of a few pixels or fuzzer bytes.
enum WebPAnimationGenerator {
    /// Lossless 1×1 (opaque) and 2×2 (with alpha) frames from cwebp -lossless, as VP8L payloads.
    private static let frames: [(width: Int, height: Int, payload: [UInt8])] = [
        (1, 1, [0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0xFD, 0x8F, 0xFE, 0x07, 0x22, 0xA2, 0xFF, 0x01]),
        (
            2, 2,
            [
                0x2F, 0x01, 0x40, 0x00, 0x10, 0x1F, 0x20, 0x10, 0x48, 0x92, 0xD8, 0x1F, 0x75, 0x8D, 0x51, 0x10, 0x08, 0x10, 0x8C,
                0xF8, 0xBF, 0x24, 0x20, 0x21, 0x3C, 0x97, 0xE5, 0x02, 0xE0, 0x67, 0x4D, 0x28, 0x09, 0x10, 0x00, 0x45, 0x19, 0x89,
                0xE8, 0x7F, 0x30,
            ]
        ),
    ]

    static func make(from data: Data) -> Data {
        var input = ByteStream(data)
        let large = input.byte() & 0x80 != 0
        let canvasWidth = large ? input.uint24() % (1 << 14) + 1 : Int(input.byte() % 64) + 1
        let canvasHeight = large ? input.uint24() % (1 << 14) + 1 : Int(input.byte() % 64) + 1
        var body = Data("WEBP".utf8)
        var vp8x: [UInt8] = [0x02 | (input.byte() & 0x10), 0, 0, 0]
        vp8x += uint24(canvasWidth - 1) + uint24(canvasHeight - 1)
        body += chunk("VP8X", vp8x)
        // Background colour, then loop count.
        body += chunk("ANIM", [input.byte(), input.byte(), input.byte(), input.byte(), input.byte(), input.byte()])
        let count = Int(input.byte() % 40)
        for _ in 0..<count where !input.isAtEnd {
            let flags = input.byte()
            let frame = frames[Int(flags & 1)]
            let x = flags & 0x20 != 0 ? input.uint24() : Int(input.byte() % 40)
            let y = flags & 0x20 != 0 ? input.uint24() : Int(input.byte() % 40)
            let duration = flags & 0x40 != 0 ? 0xFF_FFFF : input.uint24()
            var header = uint24(x / 2) + uint24(y / 2) + uint24(frame.width - 1) + uint24(frame.height - 1) + uint24(duration)
            header.append(flags & 0x03)
            let payload = flags & 0x80 != 0 ? chunk("VP8L", input.bytes(Int(input.byte()))) : chunk("VP8L", frame.payload)
            body += chunk("ANMF", header + [UInt8](payload))
        }
        var out = Data("RIFF".utf8)
        out += uint32(body.count)
        out += body
        return out
    }

    private static func uint24(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF)]
    }

    private static func uint32(_ value: Int) -> [UInt8] {
        uint24(value) + [UInt8((value >> 24) & 0xFF)]
    }

    private static func chunk(_ tag: String, _ payload: [UInt8]) -> Data {
        var data = Data(tag.utf8)
        data += uint32(payload.count)
        data += payload
        if payload.count % 2 == 1 { data.append(0) }
        return data
    }
}
