import Foundation
import Imago
import Testing

/// ThumbHash and BlurHash against their references: every expected hash and rendering below was
/// made by the reference implementations (evanw/thumbhash's Rust through PyPI's `thumbhash-rs`,
/// woltapp/blurhash's C through `blurhash-python`) from the same pixels these tests make.
@Suite("Placeholders: ThumbHash and BlurHash")
struct PlaceholderTests {
    /// Gradients over an 8-pixel checkerboard, opaque.
    static func gradient(_ width: Int, _ height: Int) -> [UInt8] {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / max(width - 1, 1)), UInt8(y * 255 / max(height - 1, 1)), UInt8((x / 8 + y / 8) % 2 * 200 + 20), 255]
            }
        }
        return pixels
    }

    /// A disc of alpha fading out from the centre over coloured gradients.
    static func disc(_ width: Int, _ height: Int) -> [UInt8] {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let dx = Double(x) - Double(width) / 2, dy = Double(y) - Double(height) / 2
                let distance = (dx * dx + dy * dy).squareRoot()
                pixels += [200, UInt8(x * 3 % 256), UInt8(255 - y * 2 % 256), UInt8(max(0, min(255, Int(255 - distance * 8))))]
            }
        }
        return pixels
    }

    static let images: [(name: String, width: Int, height: Int, pixels: [UInt8])] = [
        ("gradient64x48", 64, 48, gradient(64, 48)), ("gradient30x100", 30, 100, gradient(30, 100)), ("disc50x40", 50, 40, disc(50, 40)),
    ]

    @Test(
        "ThumbHash bytes are the reference encoder's",
        arguments: [
            ("gradient64x48", "HwgKPZqAh4dweHh4iHiHeICACPh4"), ("gradient30x100", "HwgKMhpwcHd3d3d3gIAI+Hc"),
            ("disc50x40", "qPWCDIQngImMdpd3FwiIf3d3gHeIJ5h4Bw"),
        ])
    func thumbHash(name: String, expected: String) throws {
        let image = try #require(Self.images.first { $0.name == name })
        let hash = ThumbHash(pixels: image.pixels, width: image.width, height: image.height)
        #expect(hash.base64 == expected)
        #expect(ThumbHash(base64: expected) == hash)
    }

    @Test(
        "BlurHash strings are the reference C encoder's, 1×1 to 9×9 terms",
        arguments: [
            ("gradient64x48", 1, 1, "00HVC]"), ("gradient64x48", 4, 3, "L$HVC]2Z$5Shl}axjtf5gcfjfQfj"),
            ("gradient64x48", 3, 7, "u$HVC]2Z$5l}axjtgcfjfQnTa_jtfjfQfQoMa^jtf7fOfQ"),
            (
                "gradient64x48", 9, 9,
                "|$HVC]2Z$5Sho1bIa|j]a|l}axjtf5fQf5fQf4fOgcfjfQfjfQfjfQfjfQnTa_jtfOfQfOfQfMfOfjfQfQfQfQfQfQfQfQoMa^jtfNfQfMfQfKfNf7fOfQfOfQfOfQfNfOofb0jtfTfQfTfQfVfSe;fQfQfQfQfQfQfQfQ"
            ),
            ("gradient30x100", 4, 3, "L%HeqZ2swwX7hpaffPe.gbfifPfh"), ("disc50x40", 4, 3, "LhM{@3r2g0r_swf8fQfRfTfQfQfQ"),
            ("disc50x40", 3, 7, "uhM{@3r2g0swf8fQfTfQfQsrf8fQfSfQfQsrf8fQfSfQfQ"),
        ])
    func blurHash(name: String, x: Int, y: Int, expected: String) throws {
        let image = try #require(Self.images.first { $0.name == name })
        let hash = try BlurHash(pixels: image.pixels, width: image.width, height: image.height, components: (x, y))
        #expect(hash.string == expected)
        #expect(BlurHash(string: expected).map { $0.components.x == x && $0.components.y == y } == true)
    }

    /// The sum of a rendering's bytes and its first ones, as printed from the reference decoders.
    @Test(
        "ThumbHash renders as the reference decoder: its size, aspect ratio, average colour and every byte",
        arguments: [
            ("HwgKPZqAh4dweHh4iHiHeICACPh4", 32, 23, 462_623, [29, 16, 146, 255, 29, 15, 145, 255], 1.4, [0.50529, 0.48942, 0.48148, 1]),
            ("qPWCDIQngImMdpd3FwiIf3d3gHeIJ5h4Bw", 32, 26, 501_466, [200, 60, 224, 10, 200, 60, 224, 13], 1.25, [0.78042, 0.28836, 0.83598, 0.46667]),
            ("k0oGLQaSVsN0BVhn2oq2Z5SQUQcZ", 23, 32, 357_935, [27, 53, 52, 255, 31, 56, 57, 255], 0.71429, [0.48413, 0.34127, 0.07937, 1]),
        ])
    func thumbHashRender(text: String, width: Int, height: Int, sum: Int, first: [UInt8], ratio: Double, average: [Double]) throws {
        let hash = try #require(ThumbHash(base64: text))
        let image = hash.render()
        #expect((image.width, image.height) == (width, height))
        #expect(image.pixels.reduce(0) { $0 + Int($1) } == sum)
        #expect(Array(image.pixels.prefix(8)) == first)
        #expect(abs(hash.aspectRatio - ratio) < 1e-4)
        let color = hash.averageColor
        for (value, expected) in zip([color.red, color.green, color.blue, color.alpha], average) { #expect(abs(value - expected) < 1e-4) }
        #expect(image.metadata.hasAlpha == (average[3] < 1))
        let large = try hash.render(width: 320, height: 230)
        #expect((large.width, large.height) == (320, 230))
    }

    @Test(
        "BlurHash renders as the reference decoder, byte for byte",
        arguments: [
            ("LaJHjmVu8_~po#smR+a~xaoLWCRj", 286_758, [186, 159, 154, 185, 158, 153]),
            ("LhM{@3r2g0r_swf8fQfRfTfQfQfQ", 313_220, [213, 0, 255, 213, 0, 255]),
        ])
    func blurHashRender(text: String, sum: Int, first: [UInt8]) throws {
        let image = try #require(BlurHash(string: text)).render(width: 32, height: 20)
        #expect((image.width, image.height) == (32, 20))
        // The reference wrote RGB: drop alpha (always 255 here).
        let rgb = image.pixels.enumerated().filter { $0.offset % 4 != 3 }.map(\.element)
        #expect(rgb.reduce(0) { $0 + Int($1) } == sum)
        #expect(Array(rgb.prefix(6)) == first)
        #expect(stride(from: 3, to: image.pixels.count, by: 4).allSatisfy { image.pixels[$0] == 255 })
    }

    @Test("an image is scaled to fit 100 pixels first; only its first frame counts")
    func fromImage() throws {
        let large = Image(
            width: 400, height: 300, frames: [.init(pixels: Self.gradient(400, 300)), .init(pixels: [UInt8](repeating: 0, count: 400 * 300 * 4))],
            metadata: ImageMetadata(format: .png, originalWidth: 400, originalHeight: 300, hasAlpha: false))
        let fitted = try ImageProcessors.Resize(size: PixelSize(width: 100, height: 100)).process(
            Image(width: 400, height: 300, frames: [large.frames[0]], metadata: large.metadata))
        #expect((fitted.width, fitted.height) == (100, 75))
        #expect(try ThumbHash(image: large) == ThumbHash(pixels: fitted.pixels, width: 100, height: 75))
        #expect(try BlurHash(image: large) == BlurHash(pixels: fitted.pixels, width: 100, height: 75))
        #expect(abs(try ThumbHash(image: large).aspectRatio - 4.0 / 3.0) < 0.1)
    }

    @Test("hostile hashes are refused, never read past their end; bad sizes and term counts are errors")
    func refused() throws {
        #expect(ThumbHash(bytes: [1, 2, 3, 4]) == nil)
        let valid = try #require(ThumbHash(base64: "qPWCDIQngImMdpd3FwiIf3d3gHeIJ5h4Bw"))
        for length in 0..<valid.bytes.count { #expect(ThumbHash(bytes: Array(valid.bytes.prefix(length))) == nil, "\(length) bytes") }
        #expect(ThumbHash(base64: "not base64 at all!") == nil)
        #expect(ThumbHash(base64: String(repeating: "A", count: 400)) == nil)
        for text in ["", "L", "LaJHjmVu8_~po#smR+a~xaoLWCR", "LaJHjmVu8_~po#smR+a~xaoLWCRjj", "LaJHjmVu8_~po#smR+a~xaoLWCR\"", "€aJHjmVu8_~po#smR+a~xaoLWCRj"] {
            #expect(BlurHash(string: text) == nil, "\(text)")
        }
        let pixels = Self.gradient(8, 8)
        for components in [(0, 3), (4, 10)] {
            #expect(throws: ImagoError.self) { try BlurHash(pixels: pixels, width: 8, height: 8, components: components) }
        }
        #expect(throws: ImagoError.self) { try valid.render(width: 0, height: 10) }
        #expect(throws: ImagoError.self) { try BlurHash(string: "LaJHjmVu8_~po#smR+a~xaoLWCRj")!.render(width: 10, height: 5000) }
    }
}
