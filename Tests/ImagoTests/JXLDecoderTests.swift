#if JXL
    import Foundation
    @testable import Imago
    import ImagoTestSupport
    import Testing

    /// JPEG XL files made by libjxl's `cjxl` (lossy, lossless, alpha, 16 bits, a transcoded JPEG with
    /// an EXIF orientation, an animation from a GIF) compared with `djxl`'s own decode; truncated and
    /// mutated copies; limits.
    @Suite("JPEG XL decoder")
    struct JXLDecoderTests {
        /// (input, ImageMagick options making it, or nil to use the file as it is; cjxl options).
        static let variants: [(String, [String]?, [String])] = [
            ("png/basn2c08.png", ["png24"], ["-d", "1"]),
            ("png/basn2c08.png", ["png24"], ["-d", "0"]),
            ("png/basn6a08.png", ["png32"], ["-d", "0"]),
            ("png/basn6a08.png", ["png32"], ["-d", "2"]),
            ("png/basn2c16.png", nil, ["-d", "0"]),
            ("jpeg/video-001.jpeg", nil, []),
        ]

        static func make(_ source: String, _ magick: [String]?, _ options: [String], in directory: URL) async throws -> URL {
            var input = Corpus.root.appendingPathComponent(source)
            if let magick {
                let converted = directory.appendingPathComponent("in.png")
                try await runTool("/usr/bin/convert", [input.path, "\(magick[0]):\(converted.path)"])
                input = converted
            }
            let jxl = directory.appendingPathComponent("out.jxl")
            try await runTool("/usr/bin/cjxl", [input.path, jxl.path, "--num_threads=0"] + options)
            return jxl
        }

        @Test("cjxl's files decode to djxl's pixels", arguments: variants.indices)
        func conformance(index: Int) async throws {
            let (source, magick, options) = Self.variants[index]
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let jxl = try await Self.make(source, magick, options, in: directory)
            let reference = directory.appendingPathComponent("reference.png")
            // djxl writes the file's own depth (its --bits_per_sample=8 garbles a linear 16-bit image).
            try await runTool("/usr/bin/djxl", [jxl.path, reference.path, "--num_threads=0"])
            let expected = try PNGDecoder().decode(try Data(contentsOf: reference), options: DecodingOptions())
            let data = try Data(contentsOf: jxl)
            #expect(DecoderRegistry.standard().decoder(for: data) is JXLDecoder)
            let image = try DecoderRegistry.standard().decode(data)
            #expect(image.metadata.format == .jxl)
            #expect(image.metadata.hasAlpha == source.contains("6a"))
            #expect((image.width, image.height) == (expected.width, expected.height))
            #expect(Corpus.maxDifference(image, expected) <= 1, "\(source) \(options)")
            expectCleanFailures(JXLDecoder(), data)
        }

        @Test("a transcoded JPEG keeps its EXIF orientation, applied")
        func orientation() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let jpeg = directory.appendingPathComponent("turned.jpg")
            try FileManager.default.copyItem(at: Corpus.root.appendingPathComponent("jpeg/video-001.jpeg"), to: jpeg)
            try await runTool("/usr/bin/exiftool", ["-q", "-overwrite_original", "-Orientation=6", "-n", jpeg.path])
            let jxl = directory.appendingPathComponent("turned.jxl")
            try await runTool("/usr/bin/cjxl", [jpeg.path, jxl.path, "--num_threads=0"])
            let image = try JXLDecoder().decode(try Data(contentsOf: jxl), options: DecodingOptions())
            let upright = try JPEGDecoder().decode(try Data(contentsOf: jpeg), options: DecodingOptions())
            #expect(image.metadata.orientationApplied == .right)
            #expect((image.width, image.height) == (upright.width, upright.height))
            #expect((image.width, image.height) == (103, 150))
            #expect(Corpus.maxDifference(image, upright) <= 8)
            var asStored = DecodingOptions()
            asStored.appliesOrientation = false
            let stored = try JXLDecoder().decode(try Data(contentsOf: jxl), options: asStored)
            #expect((stored.width, stored.height, stored.metadata.orientationApplied) == (150, 103, .up))
            #expect(JXLDecoder().estimate(try Data(contentsOf: jxl), options: asStored)?.width == 150)
        }

        @Test("an animation from a GIF keeps its frames and durations")
        func animation() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let source = Corpus.root.appendingPathComponent("png/basn2c08.png").path
            let gif = directory.appendingPathComponent("a.gif"), jxl = directory.appendingPathComponent("a.jxl")
            try await runTool("/usr/bin/convert", ["-delay", "20", source, "-delay", "50", "(", source, "-negate", ")", "-loop", "0", gif.path])
            try await runTool("/usr/bin/cjxl", [gif.path, jxl.path, "-d", "0", "--num_threads=0"])
            let image = try JXLDecoder().decode(try Data(contentsOf: jxl), options: DecodingOptions())
            let original = try GIFDecoder().decode(try Data(contentsOf: gif), options: DecodingOptions())
            #expect(image.frames.count == 2)
            #expect(image.frames.map(\.duration) == [.milliseconds(200), .milliseconds(500)])
            #expect(image.frames.map(\.pixels) == original.frames.map(\.pixels))
            var few = DecodingOptions()
            few.maxFrames = 1
            #expect(throws: ImagoError.self) { _ = try JXLDecoder().decode(try Data(contentsOf: jxl), options: few) }
        }

        @Test("a size over the limits is refused before pixels are allocated; other files are not JPEG XL")
        func limits() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try await Data(contentsOf: try Self.make("png/basn2c08.png", ["png24"], ["-d", "1"], in: directory))
            var small = DecodingOptions()
            small.maxPixels = 1_000
            do {
                _ = try JXLDecoder().decode(data, options: small)
                Issue.record("a 32 × 32 image passed a 1,000-pixel limit")
            } catch {
                #expect(error.code.imageSize?.width == 32)
            }
            #expect(JXLDecoder().estimate(data, options: small)?.bytes == 0)
            #expect(JXLDecoder().estimate(data, options: DecodingOptions())?.bytes == 32 * 32 * 4)
            #expect(!JXLDecoder().canDecode(try Corpus.data("png/basn2c08.png")))
        }
    }
#endif
