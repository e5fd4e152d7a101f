import Foundation
import Imago
import Testing

@testable import ImagoServer

/// Each encoder states the memory it allocates beyond the image before it starts, and an encode
/// holds that much of the pipeline's memory budget: one that alone needs more than the budget is
/// refused before anything is allocated, the others wait their turn as decodes do.
@Suite("Encoders' memory, bounded before it is allocated")
struct EncoderMemoryTests {
    /// A 50 MP image of 7,072 × 7,072 (its 200 MB of pixels are the only allocation).
    static let fiftyMegapixels = Image(
        width: 7072, height: 7072, frames: [.init(pixels: [UInt8](repeating: 0, count: 7072 * 7072 * 4))],
        metadata: ImageMetadata(format: .png, originalWidth: 7072, originalHeight: 7072, orientationApplied: .up, hasAlpha: false))

    @Test("every encoder states its working memory per pixel, above what a 53 MP photo measured")
    func statedPerEncoder() throws {
        let image = Self.fiftyMegapixels
        let pixels = image.width * image.height
        var perPixel: [ImageFormat: Int] = [:]
        for format in ImageFormat.table.map(\.format) {
            guard let encoder = format.encoder(ImageFormat.EncoderSettings()) else { continue }
            let bytes = encoder.workingBytes(for: image)
            #expect(bytes > 0, "\(format)")
            perPixel[format] = bytes / pixels
        }
        // Measured with `imago convert` from a 53 MP JPEG (docs/LIMITS.md): libjxl 40 bytes a
        // pixel, aom 20, x265 16, libwebp 5; the ICO encoder never writes more than 256 × 256.
        // PNG's 7 is 2.5 times its filtered RGB rows: the rows, then its two streams together
        // stopped at 1.5 times them.
        #expect(perPixel[.jpeg] == 3 && perPixel[.png] == 7 && perPixel[.webp] == 7)
        #if JXL
            #expect(perPixel[.jxl] == 48)
        #endif
        #if AVIF
            #expect(perPixel[.avif] == 24)
        #endif
        #if HEIF
            #expect(perPixel[.heif] == 20)
        #endif
        #expect(try #require(ImageFormat.ico.encoder(ImageFormat.EncoderSettings())).workingBytes(for: image) == 256 * 256 * 8)
    }

    #if JXL
        @Test("a JPEG XL encode of 50 MP alone needs more than the default 1 GiB budget: refused at once, naming the image, nothing run or held")
        func overTheBudget() async throws {
            // A budget of the default's size of its own: the shared one is held by whatever else the
            // process decodes meanwhile (the other tests), and what it holds is asserted below.
            var configuration = ImagePipeline.Configuration()
            configuration.decodeMemoryBudget = DecodeMemoryBudget(bytes: DecodeMemoryBudget.shared.bytes)
            let pipeline = ImagePipeline(configuration: configuration)
            let image = Self.fiftyMegapixels
            let working = JXLEncoder().workingBytes(for: image)
            #expect(working > pipeline.configuration.decodeMemoryBudget.bytes)
            let ran = Locked(false)
            do {
                _ = try await pipeline.runOnCPUStage(reserving: working, for: image) { ran.withLock { $0 = true } }
                Issue.record("the encode was not refused")
            } catch let error as ImagoError {
                #expect(error.code.kind == .imageTooLarge && error.code.imageSize == PixelSize(width: 7072, height: 7072))
                #expect(error.code.limit == .decodeMemoryBudget(1 << 30))
            }
            #expect(!ran.withLock { $0 } && pipeline.configuration.decodeMemoryBudget.held == 0)
            // A PNG encode of the same image fits, and holds its memory while it runs.
            let png = PNGEncoder().workingBytes(for: image)
            let held = try await pipeline.runOnCPUStage(reserving: png, for: image) { pipeline.configuration.decodeMemoryBudget.held }
            #expect(held >= png && pipeline.configuration.decodeMemoryBudget.held == 0)
        }

        @Test("imago serve: a result whose encoder needs more than the budget is a 422 saying so; a smaller format of it is answered")
        func servedOverTheBudget() async throws {
            try await withServer(
                pipeline: { configuration in
                    var pipeline = try ImageService.makePipeline(configuration).configuration
                    pipeline.decodeMemoryBudget = DecodeMemoryBudget(bytes: 64 << 20)
                    return ImagePipeline(configuration: pipeline)
                }
            ) { server in
                // 2,000 × 2,000: 16 MB decoded, 192 MB for libjxl, 40 MB for the PNG encoder (RGBA, as the server counts it).
                let pixels = [UInt8](repeating: 90, count: 2000 * 2000 * 4)
                let metadata = ImageMetadata(format: .png, originalWidth: 2000, originalHeight: 2000, orientationApplied: .up, hasAlpha: false)
                let png = try PNGEncoder().encode(Image(width: 2000, height: 2000, frames: [.init(pixels: pixels)], metadata: metadata))
                let source = server.origin.serve(png, at: "/large.png")
                let refused = try await server.get(ServerHarness.path(source.absoluteString, extension: "jxl"))
                #expect(refused.status == 422)
                // Refused before the decode: its reservation counts the encode's working bytes.
                #expect(String(decoding: refused.body, as: UTF8.self) == "the image is too large for this server's memory\n")
                let answered = try await server.get(ServerHarness.path(source.absoluteString, extension: "png"))
                #expect(answered.status == 200)
                #expect(try DecoderRegistry.standard().decode(answered.body).width == 2000)
                #expect(server.service.pipeline.configuration.decodeMemoryBudget.held == 0)
            }
        }
    #endif
}
