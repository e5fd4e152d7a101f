import Foundation
import Imago
import Testing

/// Netpbm output: binary PPM for opaque images, PAM with alpha, as netpbm's own tools read them.
@Suite("PNM and PAM output")
struct PNMEncoderTests {
    @Test("an opaque image is a P6 PPM and one with alpha a P7 PAM, which netpbm's pamtopng reads to the same pixels")
    func againstNetpbm() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, source) in [("opaque", "png/basn2c08.png"), ("alpha", "png/basn6a08.png")] {
            let image = try DecoderRegistry.standard().decode(try Corpus.data(source))
            let written = try #require(ImageFormat.pnm.encoder(quality: 80)).encode(image)
            #expect(written.starts(with: Data((name == "alpha" ? "P7\n" : "P6\n").utf8)), "\(name)")
            #expect(try DecoderRegistry.standard().decode(written).pixels == image.pixels, "\(name): read back")
            let pam = directory.appendingPathComponent("\(name).pam")
            try written.write(to: pam)
            let png = try await runProcess(URL(fileURLWithPath: "/usr/bin/pamtopng"), [pam.path])
            #expect(png.status == 0, "\(name)")
            #expect(try PNGDecoder().decode(png.output, options: DecodingOptions()).pixels == image.pixels, "\(name): netpbm's reading")
        }
    }

    @Test("imago convert writes .ppm and .pam; imago serve answers @pnm")
    func cliAndServer() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.ppm")
        let run = try await imago(["convert", Corpus.root.appendingPathComponent("png/basn2c08.png").path, output.path])
        #expect(run.status == 0)
        #expect(try DecoderRegistry.standard().decode(try Data(contentsOf: output)).width == 32)
        try await withServer { server in
            let url = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let answer = try await server.get(ServerHarness.path(url, ["w:40"], extension: "pnm"))
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/x-portable-anymap")
            #expect(try DecoderRegistry.standard().decode(answer.body).width == 40)
        }
    }
}
