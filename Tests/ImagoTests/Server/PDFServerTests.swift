#if PDF
    import Foundation
    import Imago
    import ImagoTestSupport
    import Testing

    @testable import ImagoServer

    /// PDF sources through `imago serve` (imgproxy Pro's PDF support): off by default, then a page
    /// processed as any image, `page`/`pg` and `pages`/`pgs` as imgproxy Pro names them, `/info`'s
    /// page count, and IMGPROXY_PDF_NO_BACKGROUND; pixels beside pdftoppm's.
    @Suite("imago serve: PDF sources", .timeLimit(.minutes(6)))
    struct PDFServerTests {
        @Test("off by default: 422; on: pages fitted as any image, chosen and stacked by page and pages")
        func pdfSources() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let pdf = try await PDFDecoderTests.make(in: root)
            let first = ServerHarness.path("local:///three.pdf", ["rs:fit:200:200"], extension: "png")
            try await withServer({ $0.localRoot = root }) { server in
                let refused = try await server.get(first)
                #expect(refused.status == 422, "\(String(decoding: refused.body.prefix(200), as: UTF8.self))")
            }
            try await withServer({
                $0.localRoot = root
                $0.output.readsPDF = true
            }) { server in
                let answer = try await server.get(first)
                #expect(answer.status == 200, "\(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect((image.width, image.height) == (200, 150))
                // Rendered at the size asked, not scaled down from a larger one: pdftoppm's at 200×150.
                #expect(Corpus.maxDifference(image, try await PDFDecoderTests.pdftoppm(pdf, page: 1, width: 200, height: 150)) <= 1)

                let second = try await server.get(ServerHarness.path("local:///three.pdf", ["pg:1"], extension: "png"))
                #expect(second.status == 200)
                let page = try PNGDecoder().decode(second.body, options: DecodingOptions())
                #expect((page.width, page.height) == (150, 375))

                let stacked = try await server.get(ServerHarness.path("local:///three.pdf", ["pgs:2", "rs:fit:0:600"], extension: "png"))
                #expect(stacked.status == 200)
                let both = try PNGDecoder().decode(stacked.body, options: DecodingOptions())
                #expect((both.width, both.height) == (300, 600))

                let info = try await server.get("/info" + ServerHarness.path("local:///three.pdf", ["pn:1", "pg:1"]))
                #expect(info.status == 200)
                let facts = try #require(try JSONSerialization.jsonObject(with: info.body) as? [String: Any])
                #expect(facts["pages_number"] as? Int == 3)
                #expect(facts["width"] as? Int == 150, "the page /info's page option names")
            }
        }

        @Test("thumbor's URLs read a PDF's first page, rendered at the size thumbor's fit asks")
        func thumborDialect() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let pdf = try await PDFDecoderTests.make(in: root)
            try await withServer({
                $0.dialect = .thumbor
                $0.output.readsPDF = true
            }) { server in
                let url = server.origin.serve(try Data(contentsOf: pdf), at: "/three.pdf")
                let answer = try await server.get("/unsafe/fit-in/200x200/filters:format(png)/\(url.host!):\(url.port!)/three.pdf")
                #expect(answer.status == 200, "\(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect((image.width, image.height) == (200, 150))
                #expect(Corpus.maxDifference(image, try await PDFDecoderTests.pdftoppm(pdf, page: 1, width: 200, height: 150)) <= 1)
            }
        }

        @Test("IMGPROXY_PDF_NO_BACKGROUND: a page with no background is transparent where it paints nothing")
        func noBackground() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            _ = try await PDFDecoderTests.make(in: root)
            let settings = try ServerSettings.configuration(["IMGPROXY_PDF_NO_BACKGROUND": "true", "IMAGO_PDF": "1"]).configuration
            #expect(settings.output.pdfTransparentBackground && settings.output.decoderFamilies.contains(.document))
            #expect(try !ServerSettings.configuration([:]).configuration.output.decoderFamilies.contains(.document))
            try await withServer({
                $0.localRoot = root
                $0.output = settings.output
            }) { server in
                let answer = try await server.get(ServerHarness.path("local:///three.pdf", ["pg:2"], extension: "png"))
                #expect(answer.status == 200, "\(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect(image.metadata.hasAlpha && image.pixels[3] == 0)
            }
        }
    }
#endif
