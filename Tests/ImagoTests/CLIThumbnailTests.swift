import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("imago thumbnail", .timeLimit(.minutes(6)))
struct CLIThumbnailTests {
    struct Report: Decodable {
        struct Result: Decodable {
            var input: String
            var status: String
            var error: String?
            var output: String?
            var width: Int?
            var height: Int?
            var bytes: Int?
        }
        struct Totals: Decodable {
            var images: Int
            var errors: Int
        }
        var images: [Result]
        var totals: Totals
    }

    @Test("a folder, a URL and a missing path: each image fitted into the box and written in the format asked, the missing one its own error")
    func folderURLAndMissing() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputs = directory.appendingPathComponent("in/nested")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        try Corpus.data("jpeg/video-001.jpeg").write(to: inputs.appendingPathComponent("photo.jpeg"))
        try Corpus.data("png/basn6a08.png").write(to: inputs.appendingPathComponent("alpha.png"))
        try Data("not an image".utf8).write(to: inputs.appendingPathComponent("notes.txt"))
        let origin = try await TestOrigin.start()
        let url = origin.serve(try Corpus.data("gif/video-001.gif"), at: "/remote.gif")
        let out = directory.appendingPathComponent("out")

        let run = try await imago([
            "thumbnail", "--json", "--size", "40x30", "--format", "webp", "--out", out.path,
            directory.appendingPathComponent("in").path, url.absoluteString, directory.appendingPathComponent("missing.jpg").path,
        ])
        try await origin.shutdown()
        #expect(run.status == 1)  // the missing input
        let report = try JSONDecoder().decode(Report.self, from: run.output)
        #expect(report.images.map(\.status) == ["ok", "ok", "ok", "error"])
        #expect(report.totals.images == 4 && report.totals.errors == 1)
        #expect(report.images[3].error?.contains("missing.jpg") == true)
        // Sorted folder walk (alpha.png, photo.jpeg), then the URL; .txt is skipped.
        #expect(report.images[0].input.hasSuffix("alpha.png") && report.images[1].input.hasSuffix("photo.jpeg"))
        for result in report.images.prefix(3) {
            let output = try #require(result.output)
            #expect(output.hasSuffix(".webp"))
            let written = try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(result.bytes == written.count)
            let image = try DecoderRegistry.standard().decode(written)
            #expect(image.metadata.format == .webp)
            #expect((image.width, image.height) == (result.width, result.height))
            #expect(image.width <= 40 && image.height <= 30 && (image.width == 40 || image.height == 30))
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out.path)) == ["alpha.webp", "photo.webp", "remote.webp"])
    }

    @Test("a size or a format it cannot make is a usage error, and nothing is written")
    func usageErrors() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let input = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg").path
        #expect(try await imago(["thumbnail", "--size", "0x10", "--out", out.path, input]).status == 64)
        #expect(try await imago(["thumbnail", "--size", "10x10", "--format", "tga", "--out", out.path, input]).status == 64)
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }
}
