import Foundation
import Imago
import Testing

@testable import ImagoServer

/// imgproxy's processing as `ImgproxySteps` plans it and `PlanProcessor` runs it: result sizes worked out by imgproxy's
/// arithmetic (where imgproxy's documentation gives a result, that result), and where each step
/// puts the picture. Serialized, its work on GCD threads: 28 cases of megapixel images at once took
/// the two cores from the network tests beside them (under the sanitizers, past their timeouts).
@Suite("imgproxy's processing pipeline", .serialized)
struct ImgproxyStepsTests {
    /// A `width × height` opaque image whose red channel is the column (mod 256) and green the
    /// row, so a crop's position can be read back.
    static func ramp(_ width: Int, _ height: Int, alpha: Bool = false) -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let o = (y * width + x) * 4
                (pixels[o], pixels[o + 1], pixels[o + 2]) = (UInt8(x % 256), UInt8(y % 256), 128)
            }
        }
        return Image(
            width: width, height: height, frames: [.init(pixels: pixels)],
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: alpha))
    }

    /// `image` through imgproxy's processing as `segments` ask, computed on a GCD thread: these
    /// images take seconds under the sanitizers, which would starve the tests beside them of the
    /// cooperative pool's two threads.
    static func process(_ segments: [String], _ image: Image, maxResultDimension: Int = 0) async throws -> Image {
        try await offThePool {
            let options = try ProcessingOptions(parsing: segments)
            return try PlanProcessor(ImgproxySteps(options: options, maxResultDimension: maxResultDimension, watermark: nil)).process(image)
        }
    }

    @Test(
        "result sizes follow imgproxy's arithmetic",
        arguments: [
            (["rs:fit:300:300"], 1000, 500, 300, 150),
            (["rs:fill:300:300"], 1000, 500, 300, 300),
            (["rs:fill-down:300:300"], 200, 100, 100, 100),  // not enlarged: cropped to the box's shape
            (["rs:fill-down:300:300:1"], 200, 100, 300, 300),
            (["rs:force:300:100"], 1000, 500, 300, 100),
            (["rs:force:300:0"], 1000, 500, 300, 500),  // force with 0 keeps that side
            (["rs:auto:300:100"], 1000, 500, 300, 100),  // both landscape: fill
            (["rs:auto:100:300"], 1000, 500, 100, 50),  // landscape into portrait: fit
            (["rs:fit:300:300:0:1"], 1000, 500, 300, 300),  // extend
            (["rs:fit:300:300", "exar:1"], 1000, 500, 300, 300),
            (["rs:fit:300:200", "exar:1"], 1000, 300, 300, 200),
            (["rs:force:100:200", "pd:10"], 1000, 500, 120, 220),  // imgproxy's documented padding example
            (["rs:force:100:200", "pd:10", "dpr:2"], 1000, 500, 240, 440),
            (["w:100", "mh:100"], 1000, 500, 100, 100),
            (["w:100", "z:2"], 1000, 500, 200, 100),
            (["w:100", "z:2:1"], 1000, 500, 200, 50),
            (["w:100", "dpr:2"], 1000, 500, 200, 100),
            (["w:2000"], 1000, 500, 1000, 500),  // not enlarged
            (["w:2000", "el:1"], 1000, 500, 2000, 1000),
            (["w:2000", "dpr:3"], 1000, 500, 1000, 500),  // dpr does not enlarge either
            (["c:500:500", "rs:fit:100:100"], 1000, 500, 100, 100),
            (["c:0.5:0.5"], 1000, 500, 500, 250),
            (["c:500"], 1000, 500, 500, 500),
            (["rot:90", "w:100"], 1000, 500, 100, 200),
            (["rot:180", "w:100"], 1000, 500, 100, 50),
            (["mrd:200"], 1000, 500, 200, 100),
            (["rs:fit:300:300:0:1", "mrd:200"], 1000, 500, 200, 200),
            (["h:100", "mw:400"], 1000, 500, 400, 100),  // min-width scales to 400×200, then height crops (imgproxy's warning)
        ] as [([String], Int, Int, Int, Int)])
    func sizes(segments: [String], width: Int, height: Int, expectedWidth: Int, expectedHeight: Int) async throws {
        let result = try await Self.process(segments, Self.ramp(width, height))
        #expect((result.width, result.height) == (expectedWidth, expectedHeight))
    }

    @Test("a crop to the box keeps the part the gravity names, offsets included")
    func gravity() async throws {
        let image = Self.ramp(400, 200)
        func left(_ segments: [String]) async throws -> (x: UInt8, y: UInt8) {
            let pixel = try await Self.process(segments, image).pixel(x: 0, y: 0)
            return (pixel.r, pixel.g)
        }
        #expect(try await left(["c:100:100:nowe"]) == (0, 0))
        #expect(try await left(["c:100:100:soea"]) == (44, 100))  // x 300 (mod 256), y 100
        #expect(try await left(["c:100:100:ce"]) == (150, 50))
        #expect(try await left(["c:100:100:nowe:10:20"]) == (10, 20))
        #expect(try await left(["c:100:100:soea:10:20"]) == (34, 80))  // offsets point inward from the named edge
        #expect(try await left(["c:100:100:ce:0.1:0"]) == (190, 50))  // a fraction of the width
        #expect(try await left(["c:100:100:fp:1:0"]) == (44, 0))  // focus point at the top right: kept inside
        #expect(try await left(["c:100:100:fp:0.25:0.5"]) == (50, 50))
        #expect(try await left(["c:100:100", "g:we"]) == (0, 50))  // crop takes the gravity option when it has none
        let east = try await Self.process(["rs:fill:100:100", "g:ea"], image)  // after the resize: 200×100, its right half
        #expect((east.width, east.height) == (100, 100) && abs(Int(east.pixel(x: 50, y: 0).r) - Int(UInt8(300 % 256))) <= 2, "\(east.pixel(x: 50, y: 0))")
    }

    @Test("extend, extend_aspect_ratio and padding place the image at their gravity on a canvas of the background")
    func canvas() async throws {
        let image = Self.ramp(100, 50)
        let extended = try await Self.process(["rs:fit:200:200:0:1:no", "bg:ff0000"], image)
        #expect((extended.width, extended.height) == (200, 200))
        #expect(extended.pixel(x: 50, y: 0) == (0, 0, 128, 255) && extended.pixel(x: 0, y: 199) == (255, 0, 0, 255))
        let transparent = try await Self.process(["rs:fit:200:200:0:1:so"], image)
        #expect(transparent.metadata.hasAlpha && transparent.pixel(x: 0, y: 0).a == 0 && transparent.pixel(x: 50, y: 150) == (0, 0, 128, 255))
        let padded = try await Self.process(["pd:1:2:3:4", "bg:00ff00"], image)
        #expect((padded.width, padded.height) == (106, 54))
        #expect(padded.pixel(x: 4, y: 1) == (0, 0, 128, 255) && padded.pixel(x: 3, y: 1) == (0, 255, 0, 255))
    }

    @Test("rotate, flip and auto-rotate turn the picture as imgproxy does")
    func turns() async throws {
        let image = Self.ramp(4, 2)
        let rotated = try await Self.process(["rot:90"], image)
        #expect((rotated.width, rotated.height) == (2, 4))
        #expect(rotated.pixel(x: 1, y: 0).r == 0 && rotated.pixel(x: 0, y: 0) == image.pixel(x: 0, y: 1))
        let flipped = try await Self.process(["fl:1:1"], image)
        #expect(flipped.pixel(x: 0, y: 0) == image.pixel(x: 3, y: 1))
        // A picture the decode turned upright by EXIF 6 is turned back when auto_rotate is off.
        var upright = try ImageProcessors.Rotate(degrees: 90)!.process(image)  // 4×2: cheap
        upright.metadata.orientationApplied = .right
        let stored = try await Self.process(["ar:0"], upright)
        #expect((stored.width, stored.height) == (4, 2) && stored.pixels == image.pixels)
    }

    @Test("trim cuts a border of background, by colour or the corner pixel, equal sides when asked")
    func trim() async throws {
        var pixels = [UInt8](repeating: 255, count: 20 * 10 * 4)
        for y in 2..<6 { for x in 3..<15 { paint(&pixels, width: 20, x, y, (0, 0, 255)) } }
        let image = Image.test(20, 10, pixels)
        let trimmed = try await Self.process(["t:10"], image)
        #expect((trimmed.width, trimmed.height) == (12, 4))
        #expect((try await Self.process(["t:10:ffffff:1:1"], image)).width == 14)  // 3 left, 5 right: 3 from each
        #expect((try await Self.process(["t:10:ffffff:1:1"], image)).height == 6)  // 2 top, 4 bottom: 2 from each
        #expect((try await Self.process(["t:10:0000ff"], image)).width == 20)  // the border is not that colour: all of it is picture
    }

    @Test("sharpen raises edge contrast and leaves flat areas; pixelate averages squares; blur softens")
    func effects() async throws {
        var pixels = [UInt8](repeating: 255, count: 20 * 4 * 4)
        for y in 0..<4 { for x in 0..<10 { paint(&pixels, width: 20, x, y, (100, 100, 100)) } }
        let edge = Image.test(20, 4, pixels)
        let sharp = try await Self.process(["sh:1"], edge)
        #expect(sharp.pixel(x: 9, y: 1).r < 100 && sharp.pixel(x: 10, y: 1).r == 255 && sharp.pixel(x: 2, y: 1).r == 100)
        let blurred = try await Self.process(["bl:2"], edge)
        #expect(blurred.pixel(x: 9, y: 1).r > 100 && blurred.pixel(x: 10, y: 1).r < 255)
        let blocks = try await Self.process(["pix:4"], Self.ramp(8, 8))
        #expect(blocks.pixel(x: 0, y: 0) == blocks.pixel(x: 3, y: 3) && blocks.pixel(x: 0, y: 0).r == 2 && blocks.pixel(x: 4, y: 0).r == 6)
    }

    @Test("a reduced decode gives the picture a full decode gives")
    func reducedDecode() async throws {
        let data = try Corpus.data("jpeg/video-001.jpeg")
        let options = try ProcessingOptions(parsing: ["rs:fill:40:30", "g:nowe:4:2", "pd:2"])
        let processor = PlanProcessor(ImgproxySteps(options: options, maxResultDimension: 0, watermark: nil))
        let full = try await offThePool { try JPEGDecoder().decode(data, options: DecodingOptions()) }
        let required = try #require(processor.requiredDecodeSize(width: full.width, height: full.height))
        #expect(required.width < full.width && required.height < full.height)
        var reducedOptions = DecodingOptions()
        reducedOptions.targetSize = required
        let reduced = try await offThePool { [reducedOptions] in try JPEGDecoder().decode(data, options: reducedOptions) }
        #expect(reduced.width < full.width)
        let fromFull = try await offThePool { try processor.process(full) }
        let fromReduced = try await offThePool { try processor.process(reduced) }
        #expect((fromFull.width, fromFull.height) == (44, 34) && (fromReduced.width, fromReduced.height) == (44, 34))
        let difference = zip(fromFull.pixels, fromReduced.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +) / fromFull.pixels.count
        #expect(difference <= 8)  // DCT scaling filters a little differently from Lanczos
        // Through a pipeline, where the decode is reduced for it.
        let pipeline = ImagePipeline(configuration: .init())
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("variant-\(UUID().uuidString).jpeg")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let made = try await pipeline.image(for: ImageRequest(url: url, processors: [processor]))
        #expect((made.width, made.height) == (44, 34))
        let trims = PlanProcessor(ImgproxySteps(options: try ProcessingOptions(parsing: ["t:10", "w:10"]), maxResultDimension: 0, watermark: nil))
        #expect(trims.requiredDecodeSize(width: 100, height: 100) == nil)
    }
}

/// The watermark as imgproxy places it, and `max_bytes`' search.
@Suite("imgproxy's watermark and max_bytes", .serialized)
struct WatermarkAndMaxBytesTests {
    /// A 10×10 opaque red PNG with a transparent top row.
    static func markData() throws -> Data {
        var pixels = [UInt8](repeating: 0, count: 10 * 10 * 4)
        for index in 10..<100 { (pixels[index * 4], pixels[index * 4 + 3]) = (255, 255) }
        return try PNGEncoder().encode(Image.test(10, 10, pixels, alpha: true))
    }

    static func white(_ width: Int, _ height: Int) -> Image {
        Image(
            width: width, height: height, frames: [.init(pixels: [UInt8](repeating: 255, count: width * height * 4))],
            metadata: .init(format: .jpeg, originalWidth: width, originalHeight: height, hasAlpha: false))
    }

    static func place(_ segments: [String], on image: Image, baseOpacity: Double = 1) async throws -> Image {
        try await offThePool {
            let options = try ProcessingOptions(parsing: segments)
            let watermark = try Watermark(data: markData(), baseOpacity: baseOpacity)
            return try PlanProcessor(ImgproxySteps(options: options, maxResultDimension: 0, watermark: watermark)).process(image)
        }
    }

    @Test("positions, offsets, opacity, scale and tiling")
    func placement() async throws {
        let image = Self.white(100, 50)
        let corner = try await Self.place(["wm:1:soea"], on: image)
        #expect(corner.pixel(x: 95, y: 45) == (255, 0, 0, 255) && corner.pixel(x: 89, y: 45) == (255, 255, 255, 255))
        #expect(corner.pixel(x: 95, y: 40) == (255, 255, 255, 255))  // the watermark's transparent row shows the image
        let offset = try await Self.place(["wm:1:nowe:5:7"], on: image)
        #expect(offset.pixel(x: 5, y: 8) == (255, 0, 0, 255) && offset.pixel(x: 4, y: 8) == (255, 255, 255, 255))
        let centre = try await Self.place(["wm:1:ce"], on: image)
        #expect(centre.pixel(x: 50, y: 25) == (255, 0, 0, 255) && centre.pixel(x: 44, y: 25) == (255, 255, 255, 255))
        let half = try await Self.place(["wm:0.5:ce"], on: image)
        #expect(half.pixel(x: 50, y: 25) == (255, 128, 128, 255))
        let quarter = try await Self.place(["wm:0.5:ce"], on: image, baseOpacity: 0.5)
        #expect(quarter.pixel(x: 50, y: 25) == (255, 191, 191, 255))
        let scaled = try await Self.place(["wm:1:nowe:0:0:0.4"], on: image)  // fits 40×20: 20×20
        #expect(scaled.pixel(x: 19, y: 19) == (255, 0, 0, 255) && scaled.pixel(x: 21, y: 19) == (255, 255, 255, 255))
        let tiled = try await Self.place(["wm:1:re"], on: image)
        #expect(tiled.pixel(x: 5, y: 5) == (255, 0, 0, 255) && tiled.pixel(x: 95, y: 45) == (255, 0, 0, 255))
        #expect(tiled.pixel(x: 45, y: 20) == (255, 255, 255, 255))
        let spaced = try await Self.place(["wm:1:re:10:0"], on: image)  // tiles 20 wide: columns 5–14 marked, 0–4 and 15–19 not
        #expect(spaced.pixel(x: 7, y: 5) == (255, 0, 0, 255))
        #expect(spaced.pixel(x: 2, y: 5) == (255, 255, 255, 255) && spaced.pixel(x: 17, y: 5) == (255, 255, 255, 255))
        let none = try await ImgproxyStepsTests.process(["wm:1"], image)
        #expect(none.pixels == image.pixels)  // no watermark configured: nothing placed, as imgproxy
    }

    @Test("max_bytes lowers quality until the bytes fit, in at most six encodes, or gives the smallest reached")
    func maxBytes() throws {
        let photo = try JPEGDecoder().decode(try Corpus.data("jpeg/video-001.jpeg"), options: DecodingOptions())
        let full = try SizeBoundEncoding.encode(photo, as: .jpeg, quality: 90, maxBytes: 0)
        #expect(full.encodes == 1 && full.quality == 90)
        let bound = full.data.count / 3
        let fitted = try SizeBoundEncoding.encode(photo, as: .jpeg, quality: 90, maxBytes: bound)
        #expect(fitted.data.count <= bound && fitted.encodes <= SizeBoundEncoding.maxEncodes && fitted.quality < 90)
        // The next quality up would not have fitted: the search found the best, not just a fit.
        if fitted.quality < 89, fitted.encodes < SizeBoundEncoding.maxEncodes {
            #expect(try JPEGEncoder(quality: fitted.quality + 1).encode(photo).count > bound)
        }
        let webp = try SizeBoundEncoding.encode(photo, as: .webp, quality: 80, maxBytes: bound / 2)
        #expect(webp.data.count <= bound / 2 && webp.encodes <= SizeBoundEncoding.maxEncodes)
        let impossible = try SizeBoundEncoding.encode(photo, as: .jpeg, quality: 90, maxBytes: 10)
        let smallest = try JPEGEncoder(quality: 1).encode(photo).count
        #expect(impossible.data.count > 10 && impossible.encodes <= SizeBoundEncoding.maxEncodes && impossible.data.count <= smallest * 2)
        let png = try SizeBoundEncoding.encode(photo, as: .png, quality: 80, maxBytes: 10)
        #expect(png.encodes == 1)
    }
}
