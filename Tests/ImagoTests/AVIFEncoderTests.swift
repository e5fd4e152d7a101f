#if AVIF
    import Foundation
    import Imago
    import Testing

    /// AVIFEncoder's files read back by libavif's own `avifdec` and by AVIFDecoder.
    @Suite("AVIF encoder")
    struct AVIFEncoderTests {
        @Test("a photo stays close to its source, read by avifdec and by AVIFDecoder alike; quality sets the size")
        func photo() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let photo = try EncoderTests.photo()
            let data = try AVIFEncoder(quality: 80, speed: 8).encode(photo)
            let file = directory.appendingPathComponent("photo.avif"), reference = directory.appendingPathComponent("reference.png")
            try data.write(to: file)
            try await runTool("/usr/bin/avifdec", [file.path, reference.path])
            let decoded = try AVIFDecoder().decode(data, options: DecodingOptions())
            let expected = try PNGDecoder().decode(try Data(contentsOf: reference), options: DecodingOptions())
            #expect((decoded.width, decoded.height, decoded.metadata.hasAlpha) == (photo.width, photo.height, false))
            #expect(Corpus.maxDifference(decoded, expected) <= 1)
            #expect(Corpus.meanDifference(decoded, photo) <= 4)
            let low = try AVIFEncoder(quality: 20, speed: 10).encode(photo)
            #expect(low.count < data.count)
            #expect(try AVIFDecoder().decode(low, options: DecodingOptions()).width == photo.width)
        }

        @Test("alpha is kept exactly")
        func alpha() throws {
            let image = try EncoderTests.withAlpha()
            let decoded = try AVIFDecoder().decode(try AVIFEncoder(quality: 60, speed: 8).encode(image), options: DecodingOptions())
            let alpha = { (pixels: [UInt8]) in stride(from: 3, to: pixels.count, by: 4).map { pixels[$0] } }
            #expect(decoded.metadata.hasAlpha)
            #expect(alpha(decoded.pixels) == alpha(image.pixels))
        }

        @Test("an animated GIF becomes a sequence with its frames and durations")
        func animation() async throws {
            let gif = try await GIFDecoderTests.animation(disposal: "none").animation
            let decoded = try AVIFDecoder().decode(try AVIFEncoder(quality: 70, speed: 10).encode(gif), options: DecodingOptions())
            #expect(decoded.frames.count == gif.frames.count)
            #expect(decoded.frames.map(\.duration) == gif.frames.map(\.duration))
            #expect(Corpus.meanDifference(decoded, gif) <= 6)
        }

        @Test("imago convert and imago thumbnail write AVIF from the extension and --format")
        func cli() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("out.avif")
            let input = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg").path
            #expect(try await imago(["convert", "--quality", "70", "--speed", "9", input, output.path]).status == 0)
            let converted = try AVIFDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
            #expect((converted.width, converted.height) == (150, 103))
            #expect(try await imago(["convert", "--speed", "11", input, output.path]).status != 0)
            let thumbnails = directory.appendingPathComponent("thumbnails")
            #expect(try await imago(["thumbnail", "--size", "64x64", "--format", "avif", "--out", thumbnails.path, input]).status == 0)
            let thumbnail = try AVIFDecoder().decode(try Data(contentsOf: thumbnails.appendingPathComponent("video-001.avif")), options: DecodingOptions())
            #expect(thumbnail.width == 64)
        }
    }
#endif
