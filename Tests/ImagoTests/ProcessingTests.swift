import Foundation
import Testing
import ImagoTestSupport
@testable import Imago

@Suite("Processors")
struct ProcessingTests {
    typealias Resize = ImageProcessors.Resize

    static func image(width: Int, height: Int, hasAlpha: Bool = false, frames: Int = 1, _ color: (Int, Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> Image {
        let frames = (0..<frames).map { frame in
            var pixels = [UInt8]()
            pixels.reserveCapacity(width * height * 4)
            for y in 0..<height {
                for x in 0..<width {
                    let (r, g, b, a) = color(x, y, frame)
                    pixels += [r, g, b, a]
                }
            }
            return Image.Frame(pixels: pixels, duration: frames > 1 ? .milliseconds(100) : .zero)
        }
        return Image(
            width: width, height: height, frames: frames,
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: hasAlpha))
    }

    static func image(width: Int, height: Int, hasAlpha: Bool = false, _ color: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> Image {
        image(width: width, height: height, hasAlpha: hasAlpha, frames: 1) { x, y, _ in color(x, y) }
    }

    static func solid(_ width: Int, _ height: Int, _ color: (UInt8, UInt8, UInt8, UInt8) = (200, 100, 50, 255)) -> Image {
        image(width: width, height: height, hasAlpha: color.3 != 255) { _, _ in color }
    }

    static func allPixels(_ image: Image, frame: Int = 0) -> Set<[UInt8]> {
        let pixels = image.frames[frame].pixels
        return Set(stride(from: 0, to: pixels.count, by: 4).map { Array(pixels[$0..<$0 + 4]) })
    }

    // MARK: - Resize

    /// (source, target, mode, upscale, crop) → expected size.
    static let sizes: [(PixelSize, PixelSize, Resize.ContentMode, Bool, Bool, PixelSize)] = [
        (.init(width: 400, height: 200), .init(width: 100, height: 100), .aspectFit, false, false, .init(width: 100, height: 50)),
        (.init(width: 400, height: 200), .init(width: 100, height: 100), .aspectFill, false, false, .init(width: 200, height: 100)),
        (.init(width: 400, height: 200), .init(width: 100, height: 100), .aspectFill, false, true, .init(width: 100, height: 100)),
        (.init(width: 400, height: 200), .init(width: 100, height: 100), .fill, false, false, .init(width: 100, height: 100)),
        (.init(width: 400, height: 200), .init(width: 100, height: 100), .center, false, false, .init(width: 100, height: 50)),
        (.init(width: 200, height: 400), .init(width: 100, height: 300), .aspectFit, false, false, .init(width: 100, height: 200)),
        (.init(width: 200, height: 400), .init(width: 100, height: 300), .aspectFill, false, true, .init(width: 100, height: 300)),
        // Smaller than the target: kept unless upscaling is allowed.
        (.init(width: 50, height: 40), .init(width: 100, height: 100), .aspectFit, false, false, .init(width: 50, height: 40)),
        (.init(width: 50, height: 40), .init(width: 100, height: 100), .aspectFit, true, false, .init(width: 100, height: 80)),
        (.init(width: 50, height: 40), .init(width: 100, height: 100), .aspectFill, true, true, .init(width: 100, height: 100)),
        (.init(width: 50, height: 40), .init(width: 100, height: 100), .fill, false, false, .init(width: 50, height: 40)),
        (.init(width: 50, height: 40), .init(width: 100, height: 100), .fill, true, false, .init(width: 100, height: 100)),
        (.init(width: 50, height: 40), .init(width: 100, height: 100), .center, true, false, .init(width: 50, height: 40)),
        // Rounding never reaches zero.
        (.init(width: 1000, height: 3), .init(width: 10, height: 10), .aspectFit, false, false, .init(width: 10, height: 1)),
    ]

    @Test(arguments: sizes.indices)
    func resizeMakesTheSizeItsContentModeSays(case index: Int) throws {
        let (source, target, mode, upscale, crop, expected) = Self.sizes[index]
        let resized = try Resize(size: target, contentMode: mode, upscale: upscale, crop: crop).process(Self.solid(source.width, source.height))
        #expect(PixelSize(width: resized.width, height: resized.height) == expected)
        #expect(resized.pixels.count == expected.width * expected.height * 4)
    }

    @Test(arguments: [(64, 48, 20, 15), (64, 48, 160, 120), (7, 3, 100, 1), (300, 300, 299, 1)])
    func aSolidImageStaysSolid(width: Int, height: Int, newWidth: Int, newHeight: Int) throws {
        for color: (UInt8, UInt8, UInt8, UInt8) in [(200, 100, 50, 255), (10, 250, 90, 128), (255, 255, 255, 255), (0, 0, 0, 255)] {
            let resized = try Resize(size: .init(width: newWidth, height: newHeight), contentMode: .fill, upscale: true).process(
                Self.solid(width, height, color))
            #expect(Self.allPixels(resized) == [[color.0, color.1, color.2, color.3]])
        }
    }

    @Test func aCheckerboardDownscaledAveragesToGrey() throws {
        let board = Self.image(width: 256, height: 256) { x, y in (x + y) % 2 == 0 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        // At exactly half size Lanczos3 lets a little of the pattern through (Pillow's LANCZOS
        // gives 124–131 there); at a quarter and below, 127–128 as Pillow.
        for (side, tolerance) in [(128, 4), (64, 1), (32, 1), (8, 1)] {
            let resized = try Resize(size: .init(width: side, height: side)).process(board)
            for pixel in Self.allPixels(resized) {
                #expect(abs(Int(pixel[0]) * 2 - 255) <= tolerance * 2 + 1, "\(side): \(pixel)")
                #expect(pixel[0] == pixel[1] && pixel[1] == pixel[2] && pixel[3] == 255)
            }
        }
    }

    @Test func transparentPixelsDoNotBleedTheirColour() throws {
        // Left half opaque red, right half fully transparent *black*: straight-alpha filtering
        // would darken the red at the seam; premultiplied filtering keeps it red.
        let image = Self.image(width: 64, height: 8, hasAlpha: true) { x, _ in x < 32 ? (255, 0, 0, 255) : (0, 0, 0, 0) }
        let resized = try Resize(size: .init(width: 16, height: 2), contentMode: .fill).process(image)
        for pixel in Self.allPixels(resized) where pixel[3] > 8 {
            #expect(pixel[0] >= 250 && pixel[1] == 0 && pixel[2] == 0, "\(pixel)")
        }
        #expect(Self.allPixels(resized).contains { $0[3] == 0 })
    }

    @Test func aDownscaleKeepsWhereThingsAre() throws {
        // A white left half stays on the left, the seam a smooth ramp.
        let image = Self.image(width: 100, height: 10) { x, _ in x < 50 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        let resized = try Resize(size: .init(width: 10, height: 1), contentMode: .fill).process(image)
        let row = stride(from: 0, to: 40, by: 4).map { resized.pixels[$0] }
        #expect(row[0] == 255 && row[3] >= 250 && row[6] <= 5 && row[9] == 0, "\(row)")
    }

    @Test func animatedImagesAreResizedFrameByFrame() throws {
        let animated = Self.image(width: 40, height: 20, frames: 3) { _, _, frame in (UInt8(frame * 100), 0, 0, 255) }
        let resized = try Resize(size: .init(width: 10, height: 10)).process(animated)
        #expect(resized.frames.count == 3 && resized.width == 10 && resized.height == 5)
        for frame in 0..<3 {
            #expect(Self.allPixels(resized, frame: frame) == [[UInt8(frame * 100), 0, 0, 255]])
            #expect(resized.frames[frame].duration == .milliseconds(100))
        }
    }

    @Test func aZeroTargetIsAnError() {
        #expect {
            try Resize(size: .init(width: 0, height: 10)).process(Self.solid(4, 4))
        } throws: { ($0 as? ImagoError)?.stage == .processing }
    }

    // MARK: - Crop, corners, circle

    @Test func cropCutsTheRectangleAndClipsToTheImage() throws {
        let image = Self.image(width: 10, height: 10) { x, y in (UInt8(x), UInt8(y), 0, 255) }
        let cropped = try ImageProcessors.Crop(x: 2, y: 3, width: 4, height: 5).process(image)
        #expect(cropped.width == 4 && cropped.height == 5)
        #expect(cropped.pixel(x: 0, y: 0) == (2, 3, 0, 255))
        #expect(cropped.pixel(x: 3, y: 4) == (5, 7, 0, 255))
        let clipped = try ImageProcessors.Crop(x: 8, y: -5, width: 10, height: 7).process(image)
        #expect(clipped.width == 2 && clipped.height == 2)
        #expect(clipped.pixel(x: 1, y: 1) == (9, 1, 0, 255))
        #expect {
            try ImageProcessors.Crop(x: 20, y: 0, width: 5, height: 5).process(image)
        } throws: { error in
            guard let error = error as? ImagoError, error.code.kind == .processingFailed, let reason = error.code.message else { return false }
            return error.stage == .processing && reason.contains("outside")
        }
    }

    @Test func roundedCornersMakeTheCornersTransparent() throws {
        let rounded = try ImageProcessors.RoundedCorners(radius: 10).process(Self.solid(40, 30))
        #expect(rounded.metadata.hasAlpha)
        #expect(rounded.pixel(x: 0, y: 0).a == 0)
        #expect(rounded.pixel(x: 39, y: 29).a == 0)
        #expect(rounded.pixel(x: 20, y: 15) == (200, 100, 50, 255))
        #expect(rounded.pixel(x: 20, y: 0) == (200, 100, 50, 255))  // edges between the corners stay
        // Antialiased: some pixel on the arc is partly covered.
        #expect((0..<10).contains { rounded.pixel(x: $0, y: 2).a > 0 && rounded.pixel(x: $0, y: 2).a < 255 })
    }

    @Test func aBorderIsDrawnInsideTheEdge() throws {
        let border = ImageProcessors.Border(width: 3, red: 0, green: 0, blue: 255)
        let rounded = try ImageProcessors.RoundedCorners(radius: 5, border: border).process(Self.solid(40, 30))
        #expect(rounded.pixel(x: 20, y: 0) == (0, 0, 255, 255))
        #expect(rounded.pixel(x: 20, y: 2) == (0, 0, 255, 255))
        #expect(rounded.pixel(x: 20, y: 4) == (200, 100, 50, 255))
        #expect(rounded.pixel(x: 0, y: 0).a == 0)
    }

    @Test func circleIsTheCentredSquareRounded() throws {
        let image = Self.image(width: 60, height: 40) { x, _ in (UInt8(x), 0, 0, 255) }
        let circle = try ImageProcessors.Circle().process(image)
        #expect(circle.width == 40 && circle.height == 40)
        #expect(circle.pixel(x: 20, y: 20) == (30, 0, 0, 255))  // x 10 + 20 of the source
        for corner in [(0, 0), (39, 0), (0, 39), (39, 39), (5, 5)] {
            #expect(circle.pixel(x: corner.0, y: corner.1).a == 0)
        }
        #expect(circle.pixel(x: 20, y: 1).a == 255 && circle.pixel(x: 1, y: 20).a == 255)
    }

    // MARK: - Blur, grayscale, composition

    @Test func blurSpreadsAPointEvenlyAndKeepsASolidImage() throws {
        #expect(Self.allPixels(try ImageProcessors.GaussianBlur(radius: 4).process(Self.solid(30, 20))) == [[200, 100, 50, 255]])
        let dot = Self.image(width: 21, height: 21) { x, y in x == 10 && y == 10 ? (255, 255, 255, 255) : (0, 0, 0, 255) }
        let blurred = try ImageProcessors.GaussianBlur(radius: 2).process(dot)
        let centre = blurred.pixel(x: 10, y: 10).r
        #expect(centre < 255 && centre > blurred.pixel(x: 12, y: 10).r)
        #expect(blurred.pixel(x: 8, y: 10).r == blurred.pixel(x: 12, y: 10).r)
        #expect(blurred.pixel(x: 10, y: 8).r == blurred.pixel(x: 10, y: 12).r)
        #expect(blurred.pixel(x: 0, y: 0).r == 0)
        #expect(try ImageProcessors.GaussianBlur(radius: 0).process(dot).pixels == dot.pixels)
    }

    @Test func grayscaleUsesLuma() throws {
        let image = Self.image(width: 4, height: 1) { x, _ in [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 128), (255, 255, 255, 255)][x] }
        let grey = try ImageProcessors.Grayscale().process(image)
        #expect(grey.pixel(x: 0, y: 0) == (76, 76, 76, 255))
        #expect(grey.pixel(x: 1, y: 0) == (150, 150, 150, 255))
        #expect(grey.pixel(x: 2, y: 0) == (29, 29, 29, 128))
        #expect(grey.pixel(x: 3, y: 0) == (255, 255, 255, 255))
    }

    @Test func aCompositionAppliesInOrderAndNamesEveryStep() throws {
        let composition = ImageProcessors.Composition([
            try Resize(size: .init(width: 100, height: 100), contentMode: .aspectFill, crop: true),
            ImageProcessors.Grayscale(),
        ])
        #expect(composition.identifier == "imago.resize(100x100,aspectFill,crop)|imago.grayscale")
        let result = try composition.process(Self.solid(400, 200))
        #expect(result.width == 100 && result.height == 100)
        #expect(Self.allPixels(result) == [[124, 124, 124, 255]])
    }

    @Test(
        "the C passes (pmaddwd on x86) give exactly the Swift passes' pixels: reductions, enlargements, odd tap counts, blurs, edges",
        arguments: [(97, 61, 40, 23), (640, 400, 512, 313), (31, 17, 93, 51), (5, 3, 2, 1), (1, 9, 3, 4), (300, 2, 7, 2)])
    func cPassesMatchSwift(width: Int, height: Int, newWidth: Int, newHeight: Int) {
        var generator = SplitMix(seed: UInt64(width * 1_000 + height))
        // Noise with hard edges reaches the clamps at 0 and 255 through Lanczos' negative lobes.
        let pixels = (0..<width * height * 4).map { index in
            index % 4 == 3 ? 255 : (generator.next() % 3 == 0 ? UInt8(255) : UInt8(truncatingIfNeeded: generator.next()))
        }
        let horizontal = Resampler.Weights.lanczos3(input: width, output: newWidth)
        let vertical = Resampler.Weights.lanczos3(input: height, output: newHeight)
        for (h, v) in [(horizontal, vertical), (horizontal, nil), (nil, vertical)] as [(Resampler.Weights?, Resampler.Weights?)] {
            let c = Resampler.convolve(pixels, width: width, height: height, horizontal: h, vertical: v)
            let swift: [UInt8] = Resampler.convolveInSwift(pixels, width: width, height: height, horizontal: h, vertical: v)
            #expect(c == swift, "\(width)×\(height) → \(newWidth)×\(newHeight)")
        }
        let blurH = Resampler.Weights.gaussian(size: width, sigma: 2.5), blurV = Resampler.Weights.gaussian(size: height, sigma: 2.5)
        let blurred: [UInt8] = Resampler.convolveInSwift(pixels, width: width, height: height, horizontal: blurH, vertical: blurV)
        #expect(Resampler.convolve(pixels, width: width, height: height, horizontal: blurH, vertical: blurV) == blurred)
    }
}
