import Foundation
import Imago
import Testing

/// Processor parameters are checked when a processor is made, and again when it runs (its
/// properties are public), so no parameter can trap or allocate without bound.
@Suite("Processor parameters")
struct ProcessorValidationTests {
    static func reason(_ make: () throws(ImagoError) -> any ImageProcessing, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        do {
            let processor = try make()
            Issue.record("made \(processor.identifier)", sourceLocation: sourceLocation)
            return nil
        } catch {
            guard error.code.kind == .processingFailed, let reason = error.code.message else {
                Issue.record("got \(error)", sourceLocation: sourceLocation)
                return nil
            }
            #expect(error.stage == .processing, sourceLocation: sourceLocation)
            return reason
        }
    }

    @Test("blur radii that are not finite, negative or over 250 are refused", arguments: [1e300, 1e8, 250.5, -1, .nan, .infinity])
    func blur(radius: Double) {
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.GaussianBlur(radius: radius) }?.contains("from 0 to 250") == true)
    }

    @Test(
        "resize targets of 0, over 65,535 a side or over 100 megapixels are refused",
        arguments: [
            (0, 10), (10, -1), (65_536, 1), (20_000, 20_000), (Int.max, Int.max),
        ])
    func resize(width: Int, height: Int) {
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.Resize(size: PixelSize(width: width, height: height), upscale: true) } != nil)
    }

    @Test(
        "crops with empty sides or values past ±2^31 are refused",
        arguments: [(0, 0, 0, 5), (0, 0, 5, -1), (Int.max, 0, 5, 5), (0, Int.min, 5, 5), (0, 0, Int.max, 5)])
    func crop(x: Int, y: Int, width: Int, height: Int) {
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.Crop(x: x, y: y, width: width, height: height) } != nil)
    }

    @Test("corner radii and border widths that are not finite or negative are refused")
    func corners() {
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.RoundedCorners(radius: .nan) } != nil)
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.RoundedCorners(radius: -2) } != nil)
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.RoundedCorners(radius: 4, border: .init(width: .infinity)) } != nil)
        #expect(Self.reason { () throws(ImagoError) in try ImageProcessors.Circle(border: .init(width: -1)) } != nil)
    }

    @Test("a property set out of range after init is refused when the processor runs")
    func changedAfterInit() throws {
        var blur = try ImageProcessors.GaussianBlur(radius: 2)
        blur.radius = 1e8
        var resize = try ImageProcessors.Resize(size: PixelSize(width: 4, height: 4))
        resize.size = PixelSize(width: 60_000, height: 60_000)
        resize.upscale = true
        let image = Image(
            width: 2, height: 2, frames: [Image.Frame(pixels: [UInt8](repeating: 200, count: 16))],
            metadata: ImageMetadata(format: .png, originalWidth: 2, originalHeight: 2, hasAlpha: false))
        #expect(throws: ImagoError.self) { try blur.process(image) }
        #expect(throws: ImagoError.self) { try resize.process(image) }
    }

    @Test("a thumbnail's box is brought within 65,535 a side and 100 megapixels whatever its size and scale")
    func thumbnailBox() {
        let huge = ImageRequest.Thumbnail(maxPixelSize: Int.max).pixelSize
        #expect(huge.width <= 65_535 && huge.width * huge.height <= 100_000_000 && huge.width >= 1)
        let badScale = ImageRequest.Thumbnail(size: PixelSize(width: 100, height: 50), scale: .nan).pixelSize
        #expect(badScale == PixelSize(width: 100, height: 50))
        let zero = ImageRequest.Thumbnail(size: PixelSize(width: 0, height: -5)).pixelSize
        #expect(zero == PixelSize(width: 1, height: 1))
    }

    @Test(
        "imago convert refuses --blur 1e300 and 1e8 and a huge --resize with a usage error",
        arguments: [
            ["--blur", "1e300"], ["--blur", "1e8"], ["--resize", "100000x100000"], ["--round", "nan"],
        ])
    func cli(arguments: [String]) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.png")
        let run = try await imago(
            ["convert", Corpus.root.appendingPathComponent("jpeg/video-001.jpeg").path, output.path] + arguments, withStandardError: true)
        #expect(run.status != 0)
        #expect(String(decoding: run.output, as: UTF8.self).contains("Error:"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("the short names make the processors their types make, and refuse what they refuse")
    func shortNames() throws {
        let short: [any ImageProcessing] = [
            try .resize(width: 300, height: 200, contentMode: .aspectFill, crop: true), try .crop(x: 1, y: 2, width: 3, height: 4),
            try .gaussianBlur(radius: 2), .grayscale, try .roundedCorners(radius: 12, border: .init(width: 2)), try .circle(),
        ]
        let full: [any ImageProcessing] = [
            try ImageProcessors.Resize(size: PixelSize(width: 300, height: 200), contentMode: .aspectFill, crop: true),
            try ImageProcessors.Crop(x: 1, y: 2, width: 3, height: 4), try ImageProcessors.GaussianBlur(radius: 2), ImageProcessors.Grayscale(),
            try ImageProcessors.RoundedCorners(radius: 12, border: .init(width: 2)), try ImageProcessors.Circle(),
        ]
        #expect(short.map(\.identifier) == full.map(\.identifier))
        #expect(Self.reason { () throws(ImagoError) -> any ImageProcessing in try .resize(width: 0, height: 10) } != nil)
        #expect(Self.reason { () throws(ImagoError) -> any ImageProcessing in try .gaussianBlur(radius: .nan) } != nil)
    }
}
