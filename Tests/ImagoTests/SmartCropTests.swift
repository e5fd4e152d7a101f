import Foundation
import Imago
import Testing

/// Smart crop: the window keeps what is interesting, as libvips' `smartcrop --interesting
/// attention` finds it.
@Suite("Smart crop", .serialized)
struct SmartCropTests {
    static func field(_ width: Int, _ height: Int, _ color: (UInt8, UInt8, UInt8)) -> [UInt8] {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in 0..<width * height { (pixels[index * 4], pixels[index * 4 + 1], pixels[index * 4 + 2]) = color }
        return pixels
    }

    static func image(_ pixels: [UInt8], _ width: Int, _ height: Int) -> Image {
        Image.test(width, height, pixels)
    }

    @Test("a small high-contrast object off-centre on a flat field is inside the window")
    func object() async throws {
        let (width, height) = (600, 400)
        var pixels = Self.field(width, height, (120, 130, 120))
        for y in 300..<340 {
            for x in 40..<80 where (x / 5 + y / 5) % 2 == 0 { paint(&pixels, width: width, x, y, (0, 0, 0)) }
        }
        let crop = try ImageProcessors.SmartCrop(width: 200, height: 200)
        let image = Self.image(pixels, width, height)
        let origin = await offThePool { crop.origin(in: image) }
        #expect(origin.x <= 40 && origin.x + 200 >= 80 && origin.y <= 300 && origin.y + 200 >= 340, "\(origin)")
        let result = try await offThePool { try crop.process(image) }
        #expect((result.width, result.height) == (200, 200))
    }

    @Test("a skin-tone patch on a flat field is inside the window")
    func skin() async throws {
        let (width, height) = (600, 300)
        var pixels = Self.field(width, height, (90, 110, 160))
        for y in 100..<200 { for x in 470..<560 { paint(&pixels, width: width, x, y, (224, 168, 132)) } }
        let image = Self.image(pixels, width, height)
        let origin = try await offThePool { try ImageProcessors.SmartCrop(width: 150, height: 300).origin(in: image) }
        #expect(origin.x <= 470 && origin.x + 150 >= 560, "\(origin)")
    }

    @Test("a side shorter than the saliency map's shrink factor: a 3 × 1000 strip with a dark band finds the band")
    func thinStrip() async throws {
        var pixels = Self.field(3, 1000, (200, 200, 200))
        for y in 700..<720 { for x in 0..<3 { paint(&pixels, width: 3, x, y, (0, 0, 0)) } }
        let image = Self.image(pixels, 3, 1000)
        let crop = try ImageProcessors.SmartCrop(width: 3, height: 100)
        let result = try await offThePool { try crop.process(image) }
        #expect((result.width, result.height) == (3, 100))
        let origin = await offThePool { crop.origin(in: image) }
        #expect(origin.x == 0 && origin.y <= 700 && origin.y + 100 >= 720, "\(origin)")
    }

    @Test("on real photos the window overlaps the one libvips' smartcrop picks")
    func againstLibvips() async throws {
        let photos = try FileManager.default.contentsOfDirectory(atPath: "/usr/share/backgrounds").filter { $0.hasSuffix(".jpg") }.sorted()
        try #require(photos.count >= 3, "ukui-wallpapers (make deps) provides the photos")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var overlaps: [Double] = []
        for name in photos {
            // A reduced lossless copy, so libvips' crop can be found in it pixel for pixel; made on a
            // GCD thread (a wallpaper's decode takes seconds under the sanitizers).
            let small = try await offThePool {
                let full = try DecoderRegistry.standard().decode(try Data(contentsOf: URL(fileURLWithPath: "/usr/share/backgrounds/" + name)))
                return try ImageProcessors.Resize(size: PixelSize(width: 480, height: 480), contentMode: .aspectFit).process(full)
            }
            let input = directory.appendingPathComponent(name + ".png"), output = directory.appendingPathComponent(name + ".crop.png")
            try PNGEncoder().encode(small).write(to: input)
            let (cropWidth, cropHeight) = small.width > small.height ? (small.height * 2 / 3, small.height * 2 / 3) : (small.width * 2 / 3, small.width / 2)
            try await runTool("/usr/bin/vips", ["smartcrop", input.path, output.path, "\(cropWidth)", "\(cropHeight)", "--interesting", "attention"])
            let theirs = try PNGDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
            let located = await offThePool { Self.locate(theirs, in: small) }
            let found = try #require(located, "\(name): libvips' crop not found in its input")
            let ours = try await offThePool { try ImageProcessors.SmartCrop(width: cropWidth, height: cropHeight).origin(in: small) }
            let overlapWidth = max(0, min(found.x, ours.x) + cropWidth - max(found.x, ours.x))
            let overlapHeight = max(0, min(found.y, ours.y) + cropHeight - max(found.y, ours.y))
            overlaps.append(Double(overlapWidth * overlapHeight) / Double(cropWidth * cropHeight))
        }
        #expect(overlaps.allSatisfy { $0 > 0 }, "\(overlaps)")
        #expect(overlaps.reduce(0, +) / Double(overlaps.count) >= 0.5, "\(overlaps)")
    }

    /// Where `window`'s pixels sit in `image`, found by its first row and confirmed by its last.
    static func locate(_ window: Image, in image: Image) -> (x: Int, y: Int)? {
        for y in 0...(image.height - window.height) {
            for x in 0...(image.width - window.width) {
                let matches = [0, window.height - 1].allSatisfy { row in
                    (0..<window.width).allSatisfy { column in
                        let a = image.pixel(x: x + column, y: y + row), b = window.pixel(x: column, y: row)
                        return (a.r, a.g, a.b) == (b.r, b.g, b.b)
                    }
                }
                if matches { return (x, y) }
            }
        }
        return nil
    }
}
