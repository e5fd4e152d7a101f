import Foundation
import Imago
import Testing

@testable import ImagoServer

/// The one executor of both dialects' pixel work: the decode a plan's steps need, derived from
/// its first resize; the canvas budget checked before any step; boxes in full-decode pixels cut
/// from a reduced decode; thumbor's `meta/` read from the steps.
@Suite("One executor: plan steps, the decode they need, the canvas budget")
struct PlanProcessorTests {
    /// A plan of fixed steps.
    struct FixedSteps: StepPlanning {
        let steps: [PixelStep]
        var identifier: String { "fixed" }

        func plan(_ source: SourceFacts, look: PixelLook) throws(ImagoError) -> StepPlan? {
            var plan = StepPlan(source: source.size)
            for step in steps { plan.append(step) }
            return plan
        }
    }

    /// A filter that fails if it ever runs.
    struct MustNotRun: PixelFilter {
        func apply(to image: Image) throws(ImagoError) -> Image {
            throw ImagoError(.processingFailed("a step ran before the budget was checked"), url: nil, stage: .processing)
        }
    }

    /// A `width × height` opaque picture whose red channel is half the column and green the row.
    static func ramp(_ width: Int, _ height: Int) -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width { (pixels[(y * width + x) * 4], pixels[(y * width + x) * 4 + 1]) = (UInt8(x / 2), UInt8(y)) }
        }
        return Image.test(width, height, pixels)
    }

    @Test("the decode is reduced to the first resize's scale, in the upright axes; a step before it that adds pixels takes the full decode")
    func decodeSize() {
        let cropThenResize = PlanProcessor(FixedSteps(steps: [.crop(PixelBox(x: 100, y: 0, width: 800, height: 500)), .resize(width: 200, height: 125)]))
        #expect(cropThenResize.requiredDecodeSize(width: 1000, height: 500) == PixelSize(width: 250, height: 125))
        // A quarter turn first: the resize's 0.2 × 0.1 is 0.1 × 0.2 of the upright source.
        let turned = PlanProcessor(FixedSteps(steps: [.rotate(degrees: 90), .resize(width: 100, height: 100)]))
        #expect(turned.requiredDecodeSize(width: 1000, height: 500) == PixelSize(width: 100, height: 100))
        let extendFirst = PlanProcessor(
            FixedSteps(steps: [.extend(width: 1100, height: 600, x: 50, y: 50, background: .white), .resize(width: 110, height: 60)]))
        #expect(extendFirst.requiredDecodeSize(width: 1000, height: 500) == nil)
        let filterFirst = PlanProcessor(FixedSteps(steps: [.filter(MustNotRun()), .resize(width: 100, height: 50)]))
        #expect(filterFirst.requiredDecodeSize(width: 1000, height: 500) == nil)
        // Enlarging: a raster is decoded whole, a vector rendered at the size asked.
        let enlarge = PlanProcessor(FixedSteps(steps: [.resize(width: 2000, height: 1000)]))
        #expect(enlarge.requiredDecodeSize(width: 1000, height: 500) == nil)
        #expect(enlarge.vectorRenderSize(width: 1000, height: 500) == PixelSize(width: 2000, height: 1000))
    }

    @Test("imgproxy and thumbor plans ask for the decode their resize needs either way up; trim, smart and a manual crop take the full one")
    func dialectDecodeSizes() throws {
        func imgproxy(_ segments: [String]) throws -> PlanProcessor {
            PlanProcessor(ImgproxySteps(options: try ProcessingOptions(parsing: segments), maxResultDimension: 0, watermark: nil))
        }
        func thumbor(_ path: String) throws -> PlanProcessor {
            let url = try ThumborURL(parsing: path)
            return PlanProcessor(ThumborTransformation(url: url, filters: ThumborFilter.parse(url.filters)))
        }
        #expect(try imgproxy(["rs:fit:100:100"]).requiredDecodeSize(width: 1000, height: 500) == PixelSize(width: 100, height: 50))
        #expect(try imgproxy(["t:10", "w:100"]).requiredDecodeSize(width: 1000, height: 500) == nil)
        // Without auto-rotation the picture is worked on as stored: 100 wide either way it is.
        #expect(try imgproxy(["ar:0", "w:100"]).requiredDecodeSize(width: 1000, height: 500) == PixelSize(width: 200, height: 100))
        #expect(try thumbor("/unsafe/100x100/a.png").requiredDecodeSize(width: 1000, height: 500) == PixelSize(width: 200, height: 100))
        #expect(try thumbor("/unsafe/100x100/smart/a.png").requiredDecodeSize(width: 1000, height: 500) == nil)
        #expect(try thumbor("/unsafe/10x10:500x400/100x100/a.png").requiredDecodeSize(width: 1000, height: 500) == nil)
        #expect(try thumbor("/unsafe/trim/100x100/a.png").requiredDecodeSize(width: 1000, height: 500) == nil)
    }

    @Test("the canvas budget refuses a plan before any of its steps runs")
    func budget() throws {
        let plan = PlanProcessor(
            FixedSteps(steps: [.filter(MustNotRun()), .extend(width: 10_000, height: 10_000, x: 0, y: 0, background: .white)]), maxPixels: 1_000_000)
        let error = try #require(throws: ImagoError.self) { try plan.process(Self.ramp(20, 10)) }
        #expect("\(error)".contains("10000×10000, over 1000000 pixels"))
        // An imgproxy URL whose padding and extension pass the box check but not the budget.
        let options = try ProcessingOptions(parsing: ["rs:fit:900:900:1:1", "pd:200"])
        let imgproxy = PlanProcessor(ImgproxySteps(options: options, maxResultDimension: 0, watermark: nil), maxPixels: 1_000_000)
        let refused = try #require(throws: ImagoError.self) { try imgproxy.process(Self.ramp(20, 10)) }
        #expect("\(refused)".contains("over 1000000 pixels"))
    }

    @Test("a box in full-decode pixels cuts the same part of a reduced decode")
    func reducedBoxes() throws {
        let full = Self.ramp(400, 200)
        var reduced = try ImageProcessors.Resize(size: PixelSize(width: 200, height: 100), contentMode: .fill, upscale: false).process(full)
        reduced = Image(width: reduced.width, height: reduced.height, frames: reduced.frames, metadata: full.metadata)
        let plan = PlanProcessor(FixedSteps(steps: [.crop(PixelBox(x: 100, y: 50, width: 200, height: 100)), .resize(width: 100, height: 50)]))
        #expect(plan.requiredDecodeSize(width: 400, height: 200) == PixelSize(width: 200, height: 100))
        let fromFull = try plan.process(full), fromReduced = try plan.process(reduced)
        #expect((fromFull.width, fromFull.height) == (100, 50) && (fromReduced.width, fromReduced.height) == (100, 50))
        // The crop starts at column 100, row 50 of the full picture: red 50, green 50.
        #expect(abs(Int(fromReduced.pixel(x: 0, y: 0).r) - 50) <= 2 && abs(Int(fromReduced.pixel(x: 0, y: 0).g) - 50) <= 2)
        let difference = zip(fromFull.pixels, fromReduced.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(difference <= 3)
    }

    @Test("thumbor's meta/ is the plan's steps in thumbor's words: its crops, resizes and flips, not its filters")
    func metaFromSteps() throws {
        let metadata = ImageMetadata(format: .png, originalWidth: 400, originalHeight: 300, hasAlpha: false)
        let image = Image(width: 400, height: 300, frames: [.init(pixels: [UInt8](repeating: 128, count: 400 * 300 * 4))], metadata: metadata)
        let url = try ThumborURL(parsing: "/unsafe/fit-in/-200x100/filters:rotate(90):proportion(0.5)/a.png")
        let made = try ThumborTransformation(url: url, filters: ThumborFilter.parse(url.filters)).run(image)
        #expect(ThumborMeta.operations(of: made.plan) == [.resize(width: 133, height: 100), .flipHorizontally])
        // The rotation and the proportion ran: 133 × 100 turned, then halved.
        #expect((made.image.width, made.image.height) == (50, 66))
    }
}
