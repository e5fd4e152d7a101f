#if TIFF
    import Foundation
    @testable import Imago
    import ImagoTestSupport
    import Testing

    /// TIFF files made by ImageMagick and libtiff's own tools from corpus PNGs (compressions, tiles,
    /// strips, planes, 16-bit, palette, grayscale, alpha, JPEG inside TIFF), each compared with
    /// libtiff's reference conversion (`tiff2rgba`) read back by ImageMagick; the eight orientations;
    /// pages; truncated and mutated copies; limits.
    @Suite("TIFF decoder")
    struct TIFFDecoderTests {
        static let convert = "/usr/bin/convert"

        /// (source PNG, ImageMagick options, then `tiffcp` options or none).
        static let variants: [(String, [String], [String]?)] = [
            ("basn2c08.png", [], nil),
            ("basn2c08.png", [], ["-c", "lzw"]),
            ("basn2c08.png", [], ["-c", "zip"]),
            ("basn2c08.png", [], ["-c", "packbits"]),
            ("basn2c08.png", [], ["-c", "jpeg"]),
            ("basn2c08.png", [], ["-t", "-w", "16", "-l", "16"]),
            ("basn2c08.png", [], ["-r", "3"]),
            ("basn2c08.png", [], ["-p", "separate"]),
            ("basn2c16.png", ["-depth", "16"], nil),
            ("basn2c08.png", ["-type", "palette"], nil),
            ("basn0g08.png", ["-type", "grayscale"], nil),
            ("basn0g01.png", ["-type", "bilevel", "-depth", "1"], ["-c", "g4"]),
            ("basn6a08.png", [], nil),
            ("basn6a08.png", [], ["-c", "lzw", "-t", "-w", "16", "-l", "16"]),
        ]

        static func make(_ source: String, _ magick: [String], _ tiffcp: [String]?, in directory: URL) async throws -> (tiff: Data, reference: Image) {
            let input = Corpus.root.appendingPathComponent("png/\(source)").path
            let base = directory.appendingPathComponent("base.tif"), tiff = directory.appendingPathComponent("out.tif")
            let rgba = directory.appendingPathComponent("rgba.tif"), png = directory.appendingPathComponent("reference.png")
            try await runTool(convert, [input] + magick + ["-compress", "none", "tif:\(base.path)"])
            if let tiffcp {
                try await runTool("/usr/bin/tiffcp", tiffcp + [base.path, tiff.path])
            } else {
                try FileManager.default.copyItem(at: base, to: tiff)
            }
            try await runTool("/usr/bin/tiff2rgba", ["-c", "none", tiff.path, rgba.path])
            try await runTool(convert, ["tif:\(rgba.path)", "png32:\(png.path)"])
            return (try Data(contentsOf: tiff), try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions()))
        }

        /// The largest difference of premultiplied samples (a colour under little alpha is imprecise
        /// in any premultiplied format, and libtiff's RGBA interface is one).
        static func maxPremultipliedDifference(_ a: Image, _ b: Image) -> Int {
            var largest = 0
            for index in stride(from: 0, to: a.pixels.count, by: 4) {
                let alphaA = Int(a.pixels[index + 3]), alphaB = Int(b.pixels[index + 3])
                largest = max(largest, abs(alphaA - alphaB))
                for channel in 0..<3 {
                    let valueA = (Int(a.pixels[index + channel]) * alphaA + 127) / 255
                    let valueB = (Int(b.pixels[index + channel]) * alphaB + 127) / 255
                    largest = max(largest, abs(valueA - valueB))
                }
            }
            return largest
        }

        @Test("libtiff's tools' files decode to libtiff's reference conversion", arguments: variants.indices)
        func conformance(index: Int) async throws {
            let (source, magick, tiffcp) = Self.variants[index]
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let (tiff, reference) = try await Self.make(source, magick, tiffcp, in: directory)
            #expect(DecoderRegistry.standard().decoder(for: tiff) is TIFFDecoder)
            let image = try DecoderRegistry.standard().decode(tiff)
            #expect(image.metadata.format == .tiff)
            #expect((image.width, image.height) == (reference.width, reference.height))
            #expect(Self.maxPremultipliedDifference(image, reference) <= 1, "\(source) \(magick) \(tiffcp ?? [])")
            // Where the directory ends the file, its last four bytes only point to a next page, which
            // libtiff rightly does without.
            expectCleanFailures(TIFFDecoder(), tiff, truncatedBelow: tiff.count - 4)
        }

        @Test("all eight orientations are turned upright, as ImageMagick's -auto-orient turns them", arguments: 1...8)
        func orientation(tag: Int) async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = Corpus.root.appendingPathComponent("png/basn2c08.png").path
            let tiff = directory.appendingPathComponent("o.tif"), png = directory.appendingPathComponent("o.png")
            // A non-square image, so a turn that swaps the sides shows.
            try await runTool(Self.convert, [input, "-crop", "32x20+0+0", "+repage", "-compress", "none", "tif:\(tiff.path)"])
            try await runTool("/usr/bin/tiffset", ["-s", "274", "\(tag)", tiff.path])
            try await runTool(Self.convert, ["tif:\(tiff.path)", "-auto-orient", "png32:\(png.path)"])
            let reference = try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
            let image = try TIFFDecoder().decode(try Data(contentsOf: tiff), options: DecodingOptions())
            #expect(image.metadata.orientationApplied == ImageOrientation(rawValue: tag))
            #expect((image.width, image.height) == (tag >= 5 ? (20, 32) : (32, 20)))
            #expect((image.width, image.height) == (reference.width, reference.height))
            #expect(image.pixels == reference.pixels)
            var stored = DecodingOptions()
            stored.appliesOrientation = false
            #expect(try TIFFDecoder().decode(try Data(contentsOf: tiff), options: stored).width == 32)
        }

        @Test("pages: the first by default, any other by number; a page that is not there is an error")
        func pages() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = directory.appendingPathComponent("1.tif"), second = directory.appendingPathComponent("2.tif")
            let both = directory.appendingPathComponent("both.tif")
            try await runTool(Self.convert, [Corpus.root.appendingPathComponent("png/basn2c08.png").path, "-compress", "none", "tif:\(first.path)"])
            try await runTool(
                Self.convert, [Corpus.root.appendingPathComponent("png/basn0g08.png").path, "-resize", "16x8!", "-compress", "none", "tif:\(second.path)"])
            try await runTool("/usr/bin/tiffcp", [first.path, second.path, both.path])
            let data = try Data(contentsOf: both)
            #expect(TIFFDecoder.pageCount(data) == 2)
            #expect(try TIFFDecoder().decode(data, options: DecodingOptions()).width == 32)
            let page = try TIFFDecoder(page: 1).decode(data, options: DecodingOptions())
            #expect((page.width, page.height) == (16, 8))
            #expect(TIFFDecoder(page: 1).estimate(data, options: DecodingOptions())?.width == 16)
            #expect(throws: ImagoError.self) { _ = try TIFFDecoder(page: 2).decode(data, options: DecodingOptions()) }
            #expect(throws: ImagoError.self) { _ = try TIFFDecoder(page: -1).decode(data, options: DecodingOptions()) }
        }

        @Test("a TIFF and an icon from an origin decode through the pipeline; a thumbnail takes the icon's entry that covers it")
        func throughThePipeline() async throws {
            try await withOrigin { origin, pipeline in
                let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/seeds")
                origin.serve(try Data(contentsOf: seeds.appendingPathComponent("tiff/jpeg.tif")), at: "/photo.tif")
                origin.serve(try Data(contentsOf: seeds.appendingPathComponent("ico/two-sizes.ico")), at: "/favicon.ico")
                let tiff = try await pipeline.image(for: origin.url("/photo.tif"))
                #expect((tiff.metadata.format, tiff.width, tiff.height) == (.tiff, 8, 8))
                let icon = try await pipeline.image(for: origin.url("/favicon.ico"))
                #expect((icon.metadata.format, icon.width) == (.ico, 32))
                let small = try await pipeline.image(
                    for: ImageRequest(url: origin.url("/favicon.ico"), thumbnail: .init(size: PixelSize(width: 12, height: 12))))
                #expect(small.width == 12)
                #expect(small.metadata.originalWidth == 16)
            }
        }

        @Test("a header over the limits is refused before the pixels are allocated; other formats are not TIFF")
        func limits() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let tiff = directory.appendingPathComponent("big.tif")
            try await runTool(Self.convert, [Corpus.root.appendingPathComponent("png/basn2c08.png").path, "-compress", "none", "tif:\(tiff.path)"])
            // Declares 60,000 × 60,000 with the 32 × 32 image's strips.
            try await runTool("/usr/bin/tiffset", ["-s", "256", "60000", tiff.path])
            try await runTool("/usr/bin/tiffset", ["-s", "257", "60000", tiff.path])
            let data = try Data(contentsOf: tiff)
            do {
                _ = try TIFFDecoder().decode(data, options: DecodingOptions())
                Issue.record("a 60,000 × 60,000 header decoded")
            } catch {
                #expect(error.code.imageSize?.width == 60_000)
            }
            #expect(TIFFDecoder().estimate(data, options: DecodingOptions())?.bytes == 0)
            #expect(!TIFFDecoder().canDecode(try Corpus.data("png/basn2c08.png")))
            #expect(!(DecoderRegistry.standard().decoder(for: try Corpus.data("jpeg/video-001.jpeg")) is TIFFDecoder))
        }
    }
#endif
