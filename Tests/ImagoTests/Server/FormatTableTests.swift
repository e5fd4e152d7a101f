import Foundation
import Imago
import Testing

@testable import ImagoServer

/// One table says what a format is; the CLI, the server's formats, auto quality and the size bound
/// read it: a format without a quality is encoded once under `max_bytes`, every format with one
/// (JPEG XL and HEIC too) gets auto quality.
@Suite("the format table")
struct FormatTableTests {
    @Test("the server writes exactly the table's written formats, plus SVG and JSON; each has the table's MIME type and extension")
    func outputFormats() {
        for row in ImageFormat.table where row.format != .svg {
            let output = OutputFormat(row.format)
            #expect((output != nil) == row.isWritten, "\(row.format)")
            guard let output else { continue }
            #expect(output.mimeType == row.mimeType && output.fileExtension == row.extensions[0])
            #expect(OutputFormat(mimeType: row.mimeType) == output)
            for name in row.extensions { #expect(OutputFormat(extension: name) == output, "\(name)") }
            #expect(output.takesQuality == row.takesQuality)
        }
        #expect(OutputFormat(extension: "svg") == .svg && OutputFormat(rawValue: "json") == .json && OutputFormat(rawValue: "tga") == nil)
    }

    @Test("max_bytes on a format without a quality is one encode, answered once", arguments: ["tiff", "bmp", "gif", "png", "ico"])
    func maxBytesWithoutQuality(format: String) async throws {
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let answer = try await server.get(ServerHarness.path(url, ["mb:100", "f:\(format)"]))
            #expect(answer.status == 200 && answer.body.count > 100)
            #expect(server.service.metrics.exposition().contains("imago_serve_encodes_total 1\n"), "\(format)")
        }
    }

    @Test("max_bytes on a format with a quality lowers it, in more than one encode")
    func maxBytesWithQuality() async throws {
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let full = try await server.get(ServerHarness.path(url, ["q:90", "f:jxl"]))
            let bounded = try await server.get(ServerHarness.path(url, ["q:90", "f:jxl", "mb:\(full.body.count / 2)"]))
            #expect(bounded.status == 200 && bounded.body.count <= full.body.count / 2)
            let encodes = server.service.metrics.exposition().split(separator: "\n").first { $0.hasPrefix("imago_serve_encodes_total ") }
            #expect(Int(encodes?.split(separator: " ").last ?? "") ?? 0 > 2)
        }
    }

    @Test("auto quality (aq:ssimulacra2) reaches its target in JPEG XL and HEIC answers", arguments: ["jxl", "heic"])
    func autoQuality(format: String) async throws {
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data(AutoQualityServerTests.source), at: "/photo.png").absoluteString
            let options = ["aq:ssimulacra2:75:10:95:0.5", "f:\(format)"]
            let answer = try await server.get(ServerHarness.path(url, options))
            #expect(answer.status == 200 && answer.header("Content-Type") == ImageFormat.named(format)?.mimeType)
            #expect(try await AutoQualityServerTests.score(server, url, options, answer: answer.body) >= 74.5)
            let top = try await server.get(ServerHarness.path(url, ["q:95", "f:\(format)"]))
            #expect(answer.body.count < top.body.count)
        }
    }

    @Test("imago convert --quality auto:75 to JPEG XL and HEIC chooses a quality whose file scores 75")
    func cliAutoQuality() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Corpus.root.appendingPathComponent("png/benchRGB.png")
        let original = try DecoderRegistry.standard().decode(try Data(contentsOf: source))
        for name in ["out.jxl", "out.heic"] {
            let output = directory.appendingPathComponent(name)
            let run = try await imago(["convert", "--json", "--quality", "auto:75", source.path, output.path])
            #expect(run.status == 0, "\(name)")
            let summary = try JSONDecoder().decode(CLIAutoQualityTests.Converted.self, from: run.output)
            let score = try #require(summary.score, "\(name)")
            #expect(summary.quality != nil && score >= 74.5, "\(name)")
            let written = try DecoderRegistry.standard().decode(try Data(contentsOf: output))
            #expect(abs(try SSIMULACRA2.score(original: original, distorted: written) - score) < 1e-9, "\(name)")
        }
    }

    @Test("imago convert's help names every format the table says Imago writes")
    func help() async throws {
        let run = try await imago(["convert", "--help"])
        let text = String(decoding: run.output, as: UTF8.self).replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        for format in ImageFormat.written { #expect(text.contains(format.preferredExtension), "\(format)") }
    }
}
