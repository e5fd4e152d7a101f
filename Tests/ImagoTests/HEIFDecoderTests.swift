#if HEIF
    import Foundation
    @testable import Imago
    import ImagoServer
    import ImagoTestSupport
    import Testing

    /// HEIC files made by libheif's `heif-enc` (x265) from corpus PNGs (lossy, lossless, alpha)
    /// compared with `heif-convert`'s own decode; the thumbnail item chosen for a small target;
    /// rotation and mirror applied (libheif reads them from an AVIF file just as from a HEIC one);
    /// truncated and mutated copies; limits; AVIF left to its own decoder.
    @Suite("HEIF decoder")
    struct HEIFDecoderTests {
        /// (source PNG, ImageMagick options making the input, heif-enc options).
        static let variants: [(String, [String], [String])] = [
            ("basn2c08.png", ["-resize", "64x48!"], ["-q", "50"]),
            ("basn2c08.png", [], ["-L"]),
            ("basn6a08.png", [], []),
        ]

        static func make(_ source: String, _ magick: [String], _ options: [String], in directory: URL) async throws -> Data {
            let input = directory.appendingPathComponent("in.png"), heic = directory.appendingPathComponent("out.heic")
            try await runTool(
                "/usr/bin/convert",
                [Corpus.root.appendingPathComponent("png/\(source)").path] + magick + ["\(source.contains("6a") ? "png32" : "png24"):\(input.path)"])
            try await runTool("/usr/bin/heif-enc", options + [input.path, "-o", heic.path])
            return try Data(contentsOf: heic)
        }

        @Test("heif-enc's files decode to heif-convert's pixels", arguments: variants.indices)
        func conformance(index: Int) async throws {
            let (source, magick, options) = Self.variants[index]
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try await Self.make(source, magick, options, in: directory)
            let reference = directory.appendingPathComponent("reference.png")
            try await runTool("/usr/bin/heif-convert", [directory.appendingPathComponent("out.heic").path, reference.path])
            let expected = try PNGDecoder().decode(try Data(contentsOf: reference), options: DecodingOptions())
            #expect(DecoderRegistry.standard().decoder(for: data) is HEIFDecoder)
            let image = try DecoderRegistry.standard().decode(data)
            #expect(image.metadata.format == .heif)
            #expect(image.metadata.hasAlpha == source.contains("6a"))
            #expect((image.width, image.height) == (expected.width, expected.height))
            #expect(Corpus.maxDifference(image, expected) == 0, "\(source) \(options)")
            expectCleanFailures(HEIFDecoder(), data)
        }

        @Test("a small target decodes the file's thumbnail when it covers the target, else the image")
        func thumbnail() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try await Self.make("basn2c08.png", ["-resize", "256x256"], ["-t", "64"], in: directory)
            func width(_ target: Int?) throws -> Int {
                var options = DecodingOptions()
                options.targetSize = target.map { PixelSize(width: $0, height: $0) }
                #expect(HEIFDecoder().estimate(data, options: options)?.width == (try HEIFDecoder().decode(data, options: options).width))
                return try HEIFDecoder().decode(data, options: options).width
            }
            #expect(try width(nil) == 256)
            #expect(try width(48) == 64)
            #expect(try width(64) == 64)
            #expect(try width(100) == 256)
            // usesEmbeddedThumbnail: the thumbnail whatever the target, as heif-convert's own decode of it.
            var embedded = DecodingOptions()
            embedded.usesEmbeddedThumbnail = true
            for target in [nil, 100, 400] {
                embedded.targetSize = target.map { PixelSize(width: $0, height: $0) }
                #expect(try HEIFDecoder().decode(data, options: embedded).width == 64)
                #expect(HEIFDecoder().estimate(data, options: embedded)?.width == 64)
            }
            let plain = try await Self.make("basn2c08.png", ["-resize", "256x256"], [], in: directory)
            #expect(try HEIFDecoder().decode(plain, options: embedded).width == 256)
        }

        @Test("imgproxy's enforce_thumbnail and IMGPROXY_ENFORCE_THUMBNAIL: the thumbnail is the source, so a 128 px fit without enlarging is 64 px")
        func enforcedThumbnail() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try await Self.make("basn2c08.png", ["-resize", "256x256"], ["-t", "64"], in: directory)
            try data.write(to: directory.appendingPathComponent("t.heic"))
            for (enforced, option, width) in [(false, [], 128), (false, ["eth:1"], 64), (true, [], 64), (true, ["eth:0"], 128)] {
                try await withServer({
                    $0.localRoot = directory
                    $0.output.enforcesThumbnail = enforced
                }) { server in
                    let answer = try await server.get(ServerHarness.path("local:///t.heic", ["rs:fit:128:128"] + option, extension: "png"))
                    #expect(answer.status == 200)
                    #expect(try PNGDecoder().decode(answer.body, options: DecodingOptions()).width == width, "\(enforced) \(option)")
                }
            }
        }

        @Test(
            "rotation and mirror are applied: an irot/imir file reads as AVIFDecoder reads it",
            arguments: [["--irot", "1"], ["--imir", "1"], ["--irot", "3", "--imir", "0"]])
        func transformations(options: [String]) async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let source = directory.appendingPathComponent("s.png"), avif = directory.appendingPathComponent("o.avif")
            try await runTool(
                "/usr/bin/convert", [Corpus.root.appendingPathComponent("png/basn2c08.png").path, "-crop", "32x20+0+0", "+repage", "png24:\(source.path)"])
            try await runTool("/usr/bin/avifenc", ["-s", "10", "-l"] + options + [source.path, avif.path])
            let data = try Data(contentsOf: avif)
            #expect(!HEIFDecoder().canDecode(data))
            let byLibheif = try HEIFDecoder().decode(data, options: DecodingOptions())
            let byLibavif = try AVIFDecoder().decode(data, options: DecodingOptions())
            #expect((byLibheif.width, byLibheif.height) == (byLibavif.width, byLibavif.height))
            #expect(Corpus.maxDifference(byLibheif, byLibavif) == 0, "\(options)")
        }

        @Test("a size over the limits is refused before decoding; other files are not HEIF")
        func limits() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try await Self.make("basn2c08.png", ["-resize", "64x48!"], [], in: directory)
            var small = DecodingOptions()
            small.maxPixels = 1_000
            do {
                _ = try HEIFDecoder().decode(data, options: small)
                Issue.record("a 64 × 48 image passed a 1,000-pixel limit")
            } catch {
                #expect(error.code.imageSize?.width == 64)
            }
            #expect(HEIFDecoder().estimate(data, options: small)?.bytes == 0)
            #expect(!HEIFDecoder().canDecode(try Corpus.data("png/basn2c08.png")))
        }

        /// Expects `data` to be refused by Imago's own item check, with `reason`, at the decoding stage.
        static func expectRefused(_ data: Data, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                _ = try HEIFDecoder().decode(data, options: DecodingOptions())
                Issue.record("decoded, where it should be refused: \(reason)", sourceLocation: sourceLocation)
            } catch {
                #expect(error.code == .invalidImage("HEIF: " + reason) && error.stage == .decoding, sourceLocation: sourceLocation)
            }
        }

        @Test("a grid made of itself (dimg 2 → 2) is refused before libheif follows it; the same grid made of its tile is left to libheif")
        func gridMadeOfItself() throws {
            let hostile = try HostileFiles.data("fuzz-heif-grid-made-of-itself.heic")
            Self.expectRefused(hostile, "an image made of itself")
            #expect(HEIFDecoder().estimate(hostile, options: DecodingOptions()) == nil)
            // The reference pointed at the tile (item 1) instead: no cycle, left to libheif (decoded
            // or refused, never a trap).
            var bytes = [UInt8](hostile)
            let reference: [UInt8] = Array("dimg".utf8) + [0, 2, 0, 1, 0, 2]
            let at = try #require((0...(bytes.count - reference.count)).first { Array(bytes[$0..<($0 + reference.count)]) == reference })
            bytes[at + 9] = 1
            do {
                _ = try HEIFDecoder().decode(Data(bytes), options: DecodingOptions())
            } catch {
                #expect(error.code != .invalidImage("HEIF: an image made of itself"))
            }
        }

        @Test("an item past its idat is refused before libheif reads it; a grid's declared canvas is held to the limits")
        func itemChecks() throws {
            let hostile = try HostileFiles.data("fuzz-heif-grid-past-idat.heic")
            Self.expectRefused(hostile, "an item lies outside the file")
            #expect(HEIFDecoder().estimate(hostile, options: DecodingOptions()) == nil)
            // The grid item's base offset into the idat, 7, made 0: the grid now lies inside it.
            var bytes = [UInt8](hostile)
            let entry: [UInt8] = [0, 3, 0, 1, 0, 0, 0, 0, 0, 7]
            let at = try #require((0...(bytes.count - entry.count)).first { Array(bytes[$0..<($0 + entry.count)]) == entry })
            bytes[at + 9] = 0
            // Decoded or refused by libheif, never a trap.
            _ = try? HEIFDecoder().decode(Data(bytes), options: DecodingOptions())
            // The grid's 16-bit output size (after version, flags, rows and columns) made 65535 × 65535.
            let idat = try #require((0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == Array("idat".utf8) }) + 4
            for index in (idat + 4)..<(idat + 8) { bytes[index] = 0xFF }
            do {
                _ = try HEIFDecoder().decode(Data(bytes), options: DecodingOptions())
                Issue.record("a 65535 × 65535 grid decoded")
            } catch {
                #expect(error.code.imageSize == PixelSize(width: 65_535, height: 65_535))
            }
        }
    }
#endif
