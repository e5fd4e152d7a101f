/// A colour with straight alpha, 8 bits a channel: what processors fill, flatten onto or trim.
public struct RGBAColor: Sendable, Hashable, Codable {
    /// Red, 0…255.
    public var red: UInt8
    /// Green, 0…255.
    public var green: UInt8
    /// Blue, 0…255.
    public var blue: UInt8
    /// Alpha, 0 (transparent) … 255 (opaque).
    public var alpha: UInt8

    /// Makes a colour; opaque unless `alpha` says otherwise.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// The colour written as 3, 6 or 8 hexadecimal digits (`f0a`, `ff00aa`, `ff00aa80`), with or
    /// without a leading `#`; nil for anything else.
    public init?(hex: String) {
        var digits = Substring(hex)
        if digits.first == "#" { digits = digits.dropFirst() }
        guard digits.utf8.allSatisfy({ $0 < 0x80 }), let value = UInt32(digits, radix: 16) else { return nil }
        switch digits.utf8.count {
        case 3:
            let (r, g, b) = (UInt8((value >> 8) & 0xF), UInt8((value >> 4) & 0xF), UInt8(value & 0xF))
            self.init(red: r * 17, green: g * 17, blue: b * 17)
        case 6:
            self.init(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
        case 8:
            self.init(red: UInt8(value >> 24), green: UInt8((value >> 16) & 0xFF), blue: UInt8((value >> 8) & 0xFF), alpha: UInt8(value & 0xFF))
        default:
            return nil
        }
    }

    /// Opaque black.
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    /// Opaque white.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    /// Transparent black.
    public static let transparent = RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// `rrggbbaa`, for identifiers.
    var hex: String {
        [red, green, blue, alpha].map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// The four bytes as one RGBA pixel in memory order.
    var pixel: UInt32 {
        (UInt32(red) | UInt32(green) << 8 | UInt32(blue) << 16 | UInt32(alpha) << 24).littleEndian
    }
}
