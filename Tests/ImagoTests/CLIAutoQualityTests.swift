import Foundation
import Imago
import Testing

@Suite("imago convert and thumbnail --quality auto", .timeLimit(.minutes(6)))
struct CLIAutoQualityTests {
    struct Converted: Decodable {
        var bytes: Int
        var quality: Int?
        var score: Double?
    }

    struct Thumbnails: Decodable {
        struct Result: Decodable {
            var status: String
            var output: String?
            var quality: Int?
            var score: Double?
        }
        var images: [Result]
    }

    @Test("convert --quality auto:TARGET writes the quality it chose and its score, which the file itself scores")
    func convert() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Corpus.root.appendingPathComponent("png/benchRGB.png")
        let output = directory.appendingPathComponent("out.jpg")
        let run = try await imago(["convert", "--json", "--quality", "auto:45", source.path, output.path])
        #expect(run.status == 0)
        let summary = try JSONDecoder().decode(Converted.self, from: run.output)
        let quality = try #require(summary.quality), score = try #require(summary.score)
        #expect((1...100).contains(quality) && score >= 44.5)
        let written = try Data(contentsOf: output)
        #expect(summary.bytes == written.count)
        let original = try DecoderRegistry.standard().decode(try Data(contentsOf: source))
        #expect(abs(try SSIMULACRA2.score(original: original, distorted: try DecoderRegistry.standard().decode(written)) - score) < 1e-9)
        // A fixed quality reports itself and no score.
        let fixed = try await imago(["convert", "--json", "--quality", "70", source.path, directory.appendingPathComponent("q70.jpg").path])
        let fixedSummary = try JSONDecoder().decode(Converted.self, from: fixed.output)
        #expect(fixedSummary.quality == 70 && fixedSummary.score == nil)
    }

    @Test("thumbnail --quality auto gives each thumbnail its own quality and score")
    func thumbnail() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sources = ["png/benchRGB.png", "jpeg/video-001.png"].map { Corpus.root.appendingPathComponent($0).path }
        let run = try await imago(["thumbnail", "--json", "--size", "96x96", "--format", "webp", "--quality", "auto:40", "--out", directory.path] + sources)
        #expect(run.status == 0)
        let report = try JSONDecoder().decode(Thumbnails.self, from: run.output)
        #expect(report.images.count == 2)
        for image in report.images {
            #expect(image.status == "ok" && image.quality != nil && (image.score ?? 0) >= 39.5, "\(image)")
        }
    }

    @Test("a quality that is neither 1…100 nor auto[:0…100] is a usage error", arguments: ["0", "101", "auto:", "auto:x", "auto:120", "best"])
    func refused(quality: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Corpus.root.appendingPathComponent("png/benchRGB.png").path
        let run = try await imago(["convert", "--quality", quality, source, directory.appendingPathComponent("x.jpg").path], withStandardError: true)
        #expect(run.status != 0)
        #expect(String(decoding: run.output, as: UTF8.self).contains("--quality"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("x.jpg").path))
    }
}
