import Foundation
import Imago
import ImagoTestSupport
import Testing

/// Each format added beside JPEG, PNG, WebP and GIF, from a file of the fuzz seeds, through the
/// three ways a user meets it: the pipeline from an origin, `imago fetch` and `imago convert`.
@Suite("New formats end to end", .timeLimit(.minutes(6)))
struct FormatsEndToEndTests {
    struct Sample: Sendable, CustomTestStringConvertible {
        var seed: String
        var format: ImageFormat
        var testDescription: String { seed }
    }

    static let samples: [Sample] = {
        var samples = [
            Sample(seed: "pnm/ppm-binary.ppm", format: .pnm), Sample(seed: "bmp/alpha.bmp", format: .bmp),
            Sample(seed: "tga/alpha-rle.tga", format: .tga), Sample(seed: "ico/two-sizes.ico", format: .ico),
        ]
        #if TIFF
            samples.append(Sample(seed: "tiff/jpeg.tif", format: .tiff))
        #endif
        #if AVIF
            samples.append(Sample(seed: "avif/sequence.avif", format: .avif))
        #endif
        #if HEIF
            samples.append(Sample(seed: "heif/alpha.heic", format: .heif))
        #endif
        #if JXL
            samples.append(Sample(seed: "jxl/animation.jxl", format: .jxl))
        #endif
        return samples
    }()

    static func seed(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/seeds/\(name)"))
    }

    @Test("the pipeline decodes it from an origin, fetch reports it, convert writes it as PNG", arguments: samples)
    func endToEnd(sample: Sample) async throws {
        let data = try Self.seed(sample.seed)
        let direct = try DecoderRegistry.standard().decode(data)
        #expect(direct.metadata.format == sample.format)
        try await withOrigin { origin, pipeline in
            let url = origin.serve(data, at: "/image")
            let loaded = try await pipeline.image(for: url)
            #expect((loaded.metadata.format, loaded.width, loaded.height) == (sample.format, direct.width, direct.height))
            #expect(loaded.frames.count == direct.frames.count)

            let fetched = try await imago(["fetch", "--json", "--no-disk-cache", url.absoluteString])
            #expect(fetched.status == 0)
            let report = try JSONSerialization.jsonObject(with: fetched.output) as? [String: Any]
            let image = (report?["images"] as? [[String: Any]])?.first
            #expect(image?["format"] as? String == sample.format.rawValue)
            #expect(image?["width"] as? Int == direct.width)
        }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent(URL(fileURLWithPath: sample.seed).lastPathComponent)
        let output = directory.appendingPathComponent("out.png")
        try data.write(to: input)
        #expect(try await imago(["convert", input.path, output.path]).status == 0)
        let written = try PNGDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
        #expect((written.width, written.height) == (direct.width, direct.height))
        #expect(written.pixels == direct.pixels)
    }
}
