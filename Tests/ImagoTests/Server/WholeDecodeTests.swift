import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's `IMGPROXY_DISABLE_SHRINK_ON_LOAD` (`--whole-decode`): a JPEG is decoded whole, not
/// reduced to what the result needs.
@Suite("--whole-decode: JPEG and WebP decoded whole", .timeLimit(.minutes(6)))
struct WholeDecodeTests {
    @Test("a 12 MP JPEG to 300 px: reduced it fits a 16 MB decode budget; whole it needs 48 MB and is refused as memory; the pixels differ")
    func wholeDecode() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = root.appendingPathComponent("photo.jpg")
        try await runTool(ColorReference.convert, ["-size", "4000x3000", "gradient:#203040-#f0c080", "-quality", "90", photo.path])
        let path = ServerHarness.path("local:///photo.jpg", ["rs:fit:300:0"], extension: "png")
        var answers: [Bool: ServerHarness.Answer] = [:]
        for whole in [false, true] {
            try await withServer({
                $0.localRoot = root
                $0.decodeMemoryBytes = 16 << 20
                $0.output.decodesWhole = whole
            }) { server in
                answers[whole] = try await server.get(path)
            }
        }
        let reduced = try #require(answers[false]), whole = try #require(answers[true])
        #expect(reduced.status == 200)
        #expect(try DecoderRegistry.standard().decode(reduced.body).width == 300)
        // 4000 × 3000 × 4 bytes cannot be reserved in 16 MB: the memory refusal, before any allocation.
        #expect(whole.status == 422, "\(whole.status) \(String(decoding: whole.body.prefix(200), as: UTF8.self))")

        // With room for it, the whole decode answers too, and its pixels are not the reduced decode's.
        let small = root.appendingPathComponent("small.jpg")
        try await runTool(ColorReference.convert, ["-size", "800x600", "plasma:fractal", "-seed", "7", "-quality", "90", small.path])
        let smallPath = ServerHarness.path("local:///small.jpg", ["rs:fit:90:0"], extension: "png")
        var bodies: [Bool: Data] = [:]
        for decodesWhole in [false, true] {
            try await withServer({
                $0.localRoot = root
                $0.output.decodesWhole = decodesWhole
            }) { server in
                let answer = try await server.get(smallPath)
                #expect(answer.status == 200)
                bodies[decodesWhole] = answer.body
            }
        }
        #expect(bodies[false] != bodies[true])
    }

    @Test("IMGPROXY_DISABLE_SHRINK_ON_LOAD is --whole-decode")
    func variable() throws {
        #expect(try ServerSettings.configuration(["IMGPROXY_DISABLE_SHRINK_ON_LOAD": "true"]).configuration.output.decodesWhole)
        #expect(try !ServerSettings.configuration([:]).configuration.output.decodesWhole)
    }
}
