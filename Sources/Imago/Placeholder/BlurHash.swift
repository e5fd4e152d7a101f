import Foundation

/// A BlurHash (Wolt's format): the average colour and 1…9 × 1…9 cosine terms of an image in
/// linear light, as a short base-83 string that ``render(width:height:punch:)`` paints back. The
/// terms are summed as the reference C encoder sums them (single precision, rows then columns),
/// with its cosines and sRGB curve tabulated once, so the string is the reference's for the same
/// pixels.
public struct BlurHash: Sendable, Hashable {
    /// The hash's text.
    public let string: String
    /// The number of terms across and down, 1…9 each.
    public let components: (x: Int, y: Int)

    /// Two hashes are equal when their text is.
    public static func == (a: BlurHash, b: BlurHash) -> Bool { a.string == b.string }
    /// Hashes the text.
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }

    /// A hash from its text, checked as the reference checks it: a size character, then exactly
    /// the characters the size announces, all in the base-83 alphabet.
    public init?(string: String) {
        let digits = Array(string.utf8)
        guard digits.count >= 6, digits.count <= 6 + 80 * 2, digits.allSatisfy({ Self.value[Int($0)] >= 0 }) else { return nil }
        let size = Self.decode(digits[0..<1])
        let (x, y) = (size % 9 + 1, size / 9 + 1)
        guard digits.count == 4 + 2 * x * y else { return nil }
        self.string = string
        components = (x, y)
    }

    /// The hash of an image's first frame with `components` terms across and down (1…9 each),
    /// from a copy scaled to fit 100 pixels (what a decode at a reduced scale gives for free; the
    /// terms of so few frequencies barely move).
    public init(image: Image, components: (x: Int, y: Int) = (4, 3)) throws(ImagoError) {
        let fitted = try Placeholders.fitted(image, side: Placeholders.sourceSide)
        try self.init(pixels: fitted.pixels, width: fitted.width, height: fitted.height, components: components)
    }

    /// The hash of `width × height` RGBA pixels (alpha ignored, as the reference reads RGB), with
    /// `components` terms across and down. Throws when a count is outside 1…9.
    public init(pixels: [UInt8], width: Int, height: Int, components: (x: Int, y: Int) = (4, 3)) throws(ImagoError) {
        guard (1...9).contains(components.x), (1...9).contains(components.y) else {
            throw .processing("BlurHash components must be 1…9 each, not \(components.x)×\(components.y)")
        }
        precondition(width > 0 && height > 0 && pixels.count == width * height * 4)
        self.components = components
        string = Self.encode(pixels, width: width, height: height, components: components)
    }

    // MARK: Encoding

    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)
    /// Each byte's digit, or -1.
    private static let value: [Int] = {
        var table = [Int](repeating: -1, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = index }
        return table
    }()

    /// The reference's `sRGBToLinear` (its constants are doubles, so parts run in double).
    private static func toLinear(_ value: Int) -> Float {
        let v = Float(value) / 255
        return v <= 0.04045 ? Float(Double(v) / 12.92) : powf(Float((Double(v) + 0.055) / 1.055), Float(2.4))
    }

    /// ``toLinear(_:)`` for every byte.
    private static let linear: [Float] = (0..<256).map(toLinear)

    /// The reference's `linearTosRGB`: clamped, the curve in double, truncated after adding 0.5.
    private static func sRGB(_ value: Float) -> Int {
        let v = max(0, min(1, value))
        if v <= 0.0031308 { return Int(Double(v) * 12.92 * 255 + 0.5) }
        return Int((1.055 * Double(powf(v, Float(1.0 / 2.4))) - 0.055) * 255 + 0.5)
    }

    private static func signPow(_ value: Float, _ exponent: Float) -> Float {
        copysign(powf(abs(value), exponent), value)
    }

    private static func encode(_ pixels: [UInt8], width: Int, height: Int, components: (x: Int, y: Int)) -> String {
        // cosf of the double `π × component × position / side`, once per component and position.
        let cosX = (0..<components.x).map { c in (0..<width).map { x in cosf(Float(Double.pi * Double(c) * Double(x) / Double(width))) } }
        let cosY = (0..<components.y).map { c in (0..<height).map { y in cosf(Float(Double.pi * Double(c) * Double(y) / Double(height))) } }
        var factors: [(Float, Float, Float)] = []
        for cy in 0..<components.y {
            for cx in 0..<components.x {
                var (r, g, b): (Float, Float, Float) = (0, 0, 0)
                let (rowCos, columnCos) = (cosY[cy], cosX[cx])
                pixels.withUnsafeBufferPointer { pixels in
                    for y in 0..<height {
                        let fy = rowCos[y], row = y * width * 4
                        for x in 0..<width {
                            let basis = columnCos[x] * fy, at = row + x * 4
                            r += basis * linear[Int(pixels[at])]
                            g += basis * linear[Int(pixels[at + 1])]
                            b += basis * linear[Int(pixels[at + 2])]
                        }
                    }
                }
                let scale = Float(cx == 0 && cy == 0 ? 1 : 2) / Float(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var text: [UInt8] = []
        func append(_ value: Int, _ length: Int) {
            var divisor = 1
            for _ in 0..<(length - 1) { divisor *= 83 }
            for _ in 0..<length {
                text.append(alphabet[(value / divisor) % 83])
                divisor /= 83
            }
        }
        append((components.x - 1) + (components.y - 1) * 9, 1)
        let ac = factors.dropFirst()
        var maximum: Float = 1
        if ac.isEmpty {
            append(0, 1)
        } else {
            let actual = ac.reduce(Float(0)) { max($0, abs($1.0), abs($1.1), abs($1.2)) }
            let quantised = Int(max(0, min(82, (actual * 166 - 0.5).rounded(.down))))
            maximum = Float(quantised + 1) / 166
            append(quantised, 1)
        }
        let dc = factors[0]
        append(sRGB(dc.0) << 16 + sRGB(dc.1) << 8 + sRGB(dc.2), 4)
        for (r, g, b) in ac {
            func quantise(_ value: Float) -> Int { Int(max(0, min(18, (signPow(value / maximum, 0.5) * 9 + 9.5).rounded(.down)))) }
            append(quantise(r) * 19 * 19 + quantise(g) * 19 + quantise(b), 2)
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func decode(_ digits: ArraySlice<UInt8>) -> Int {
        digits.reduce(0) { $0 * 83 + value[Int($1)] }
    }

    // MARK: Decoding

    /// The placeholder at `width × height` (1…``Placeholders/maxRenderSide`` a side), opaque, as
    /// the reference decoder paints it; `punch` (≥ 1) strengthens the terms.
    public func render(width: Int, height: Int, punch: Float = 1) throws(ImagoError) -> Image {
        try Placeholders.checkRenderSize(width, height)
        let digits = Array(string.utf8)
        let maximum = Float(Self.decode(digits[1..<2]) + 1) / 166 * max(punch, 1)
        var colors: [(Float, Float, Float)] = []
        for index in 0..<(components.x * components.y) {
            if index == 0 {
                let value = Self.decode(digits[2..<6])
                colors.append((Self.toLinear(value >> 16), Self.toLinear(value >> 8 & 255), Self.toLinear(value & 255)))
            } else {
                let value = Self.decode(digits[(4 + index * 2)..<(6 + index * 2)])
                func term(_ quantised: Int) -> Float { Self.signPow((Float(quantised) - 9) / 9, 2) * maximum }
                colors.append((term(value / (19 * 19)), term(value / 19 % 19), term(value % 19)))
            }
        }
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        // The reference multiplies the two cosines in double, then rounds to single.
        let cosX = (0..<components.x).map { i in (0..<width).map { x in cos(Double.pi * Double(x) * Double(i) / Double(width)) } }
        let cosY = (0..<components.y).map { j in (0..<height).map { y in cos(Double.pi * Double(y) * Double(j) / Double(height)) } }
        for y in 0..<height {
            for x in 0..<width {
                var (r, g, b): (Float, Float, Float) = (0, 0, 0)
                for j in 0..<components.y {
                    for i in 0..<components.x {
                        let basis = Float(cosX[i][x] * cosY[j][y]), color = colors[i + j * components.x]
                        r += color.0 * basis
                        g += color.1 * basis
                        b += color.2 * basis
                    }
                }
                let at = (y * width + x) * 4
                pixels[at] = UInt8(min(max(Self.sRGB(r), 0), 255))
                pixels[at + 1] = UInt8(min(max(Self.sRGB(g), 0), 255))
                pixels[at + 2] = UInt8(min(max(Self.sRGB(b), 0), 255))
            }
        }
        return Placeholders.image(width: width, height: height, pixels: pixels, alpha: false)
    }
}
