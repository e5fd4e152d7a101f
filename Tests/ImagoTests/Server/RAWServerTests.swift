#if RAW
    import Foundation
    import Imago
    import ImagoTestSupport
    import Testing

    @testable import ImagoServer

    /// Camera RAW sources through `imago serve` (imgproxy Pro's RAW support): off by default, then
    /// a DNG processed as any image, its preview serving a small size, beside LibRaw's dcraw_emu.
    @Suite("imago serve: camera RAW sources", .timeLimit(.minutes(6)))
    struct RAWServerTests {
        @Test("off by default: 422; on: a DNG fitted as any image, from its preview or its development")
        func rawSources() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let dng = try await RAWDecoderTests.make(in: root, orientation: 6, preview: true)
            let name = dng.lastPathComponent
            let small = ServerHarness.path("local:///\(name)", ["rs:fit:100:150"], extension: "png")
            try await withServer({ $0.localRoot = root }) { server in
                let refused = try await server.get(small)
                #expect(refused.status == 422, "\(String(decoding: refused.body.prefix(200), as: UTF8.self))")
            }
            try await withServer({
                $0.localRoot = root
                $0.output.readsRAW = true
            }) { server in
                let answer = try await server.get(small)
                #expect(answer.status == 200, "\(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect((image.width, image.height) == (100, 150))

                // At the developed picture's own size: dcraw_emu's picture.
                let full = try await server.get(ServerHarness.path("local:///\(name)", [], extension: "png"))
                #expect(full.status == 200)
                let developed = try PNGDecoder().decode(full.body, options: DecodingOptions())
                let expected = try await RAWDecoderTests.dcrawEmu(dng)
                #expect((developed.width, developed.height) == (400, 600))
                #expect(Corpus.maxDifference(developed, expected) <= 1)
            }
        }

        @Test("IMGPROXY_ENABLE_RAW_FORMATS turns RAW sources on")
        func settings() throws {
            #expect(try ServerSettings.configuration(["IMGPROXY_ENABLE_RAW_FORMATS": "true"]).configuration.output.readsRAW)
            #expect(try !ServerSettings.configuration([:]).configuration.output.readsRAW)
            #expect(try ServerSettings.configuration(["IMAGO_RAW_FORMATS": "1"]).configuration.output.decoderFamilies.contains(.raw))
        }
    }
#endif
