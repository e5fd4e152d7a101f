import Foundation
@testable import Imago
import Testing

@Suite("Hostile input: decoders")
struct HostileInputTests {
    static func decodeError(
        _ name: String, options: DecodingOptions = DecodingOptions(), sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ImagoError? {
        do {
            let image = try DecoderRegistry.standard().decode(HostileFiles.data(name), options: options)
            Issue.record("decoded \(name) as \(image.width)×\(image.height), \(image.frames.count) frames", sourceLocation: sourceLocation)
            return nil
        } catch let error as ImagoError {
            return error
        }
    }

    @Test("every file in Tests/Hostile decodes or fails with an ImagoError, never a trap", arguments: try HostileFiles.all())
    func noTrap(file: URL) async throws {
        let data = try Data(contentsOf: file)
        // On a GCD thread: a 64-megapixel PNG or an SVG's first text (fontconfig's scan of the
        // fonts) takes long under the sanitizers, too long to hold one of the pool's two threads.
        let decoders = DecoderRegistry.standard(families: Set(ImageFormatInfo.Family.allCases))
        // A deadline, as the server's work timeout gives: a file that makes a library loop ends there.
        var limited = DecodingOptions()
        limited.maxDecodeDuration = .seconds(5)
        let options = limited
        let decoded = await offThePool { Result { () throws(ImagoError) -> Image in try decoders.decode(data, options: options) } }
        switch decoded {
        case .success(let image): #expect(image.width > 0 && image.height > 0)
        case .failure(let error): #expect(!error.description.isEmpty)
        }
    }

    #if Video
        @Test("a video without its movie box is refused; one whose sample entry claims 65535² is read at its stream's own size")
        func videos() throws {
            let decoders = DecoderRegistry.standard(families: [.video])
            #expect {
                _ = try decoders.decode(HostileFiles.data("video-mp4-cut-before-moov.mp4"))
            } throws: { ($0 as? ImagoError)?.code.kind == .invalidImage }
            let claimed = try decoders.decode(HostileFiles.data("video-mp4-claims-65535-square.mp4"))
            #expect((claimed.width, claimed.height) == (64, 48))
        }
    #endif

    #if PDF
        @Test("a PDF page of 14400² points is refused before Poppler renders it; an image bomb is stopped at the deadline")
        func pdfs() throws {
            let decoders = DecoderRegistry.standard(families: [.document])
            #expect {
                _ = try decoders.decode(HostileFiles.data("pdf-page-14400-square.pdf"))
            } throws: { ($0 as? ImagoError)?.code == .imageTooLarge(width: 14_400, height: 14_400, limit: .pixels(100_000_000)) }
            var options = DecodingOptions()
            options.maxDecodeDuration = .seconds(2)
            #expect {
                _ = try decoders.decode(HostileFiles.data("pdf-image-bomb.pdf"), options: options)
            } throws: { ($0 as? ImagoError)?.code == .timedOut }
        }
    #endif

    #if RAW
        @Test("a DNG without its sensor data or with a claimed 65535² is refused; a preview past the end is never read")
        func raws() throws {
            let decoders = DecoderRegistry.standard(families: [.raw])
            for name in ["raw-dng-cut-in-half.dng", "raw-dng-claims-65535-square.dng"] {
                #expect {
                    _ = try decoders.decode(HostileFiles.data(name))
                } throws: { ($0 as? ImagoError)?.code.kind == .invalidImage }
            }
            var options = DecodingOptions()
            options.usesEmbeddedThumbnail = true
            let image = try decoders.decode(HostileFiles.data("raw-dng-preview-past-the-end.dng"), options: options)
            #expect((image.width, image.height) == (32, 48))
            #expect(image.metadata.raw?.developed == .full)
            #expect(image.metadata.raw?.previewWidth == nil)
            // A CR3 box whose 64-bit size is 0: LibRaw 0.20's parser loops; its reads stop it at the deadline.
            var limited = DecodingOptions()
            limited.maxDecodeDuration = .milliseconds(500)
            #expect {
                _ = try decoders.decode(HostileFiles.data("fuzz-raw-cr3-box-of-size-zero.cr3"), options: limited)
            } throws: { ($0 as? ImagoError)?.code == .timedOut }
        }
    #endif

    @Test("a GIF frame outside the canvas with disposal 'background' is drawn clipped, as Pillow does")
    func gifFrameOutsideCanvas() throws {
        let image = try GIFDecoder().decode(HostileFiles.data("gif-frame-outside-canvas.gif"), options: DecodingOptions())
        #expect((image.width, image.height) == (10, 10))
        #expect(image.frames.count == 2)
        // Frame 0 lies wholly outside: nothing drawn. Frame 1 is one red pixel at (0, 0).
        #expect(image.frames[0].pixels.allSatisfy { $0 == 0 })
        #expect(Array(image.frames[1].pixels[0..<4]) == [255, 0, 0, 255])
        #expect(Array(image.frames[1].pixels[4..<8]) == [0, 0, 0, 0])
    }

    @Test("a GIF cut right after an image descriptor is an invalid-image error (giflib reports code 0)")
    func gifCutAfterDescriptor() throws {
        let error = try Self.decodeError("gif-cut-after-descriptor.gif")
        #expect(error?.code == .invalidImage("GIF: data ends early or is corrupt"))
    }

    @Test("an animated WebP whose running timestamp passes Int32 keeps every frame's own duration")
    func webpTimestampsPastInt32() throws {
        let image = try WebPDecoder().decode(HostileFiles.data("webp-timestamps-past-int32.webp"), options: DecodingOptions())
        #expect(image.frames.count == 130)
        #expect(image.frames.allSatisfy { $0.duration == .milliseconds(16_777_215) })
    }

    @Test("WebP frame durations from wrapped timestamps")
    func webpDurations() {
        #expect(WebPDecoder.duration(from: 0, to: 100) == 100)
        #expect(WebPDecoder.duration(from: Int32.max - 10, to: Int32.min + 89) == 100)
        #expect(WebPDecoder.duration(from: 100, to: 50) == 0xFF_FFFF)
    }

    @Test(
        "tiny animations with a huge canvas are refused by the per-decode memory budget",
        arguments: [
            ("gif-huge-canvas-five-frames.gif", 10_000), ("webp-huge-canvas-five-frames.webp", 10_000), ("gif-thousand-frames.gif", 707),
        ])
    func memoryBudget(name: String, side: Int) throws {
        let error = try Self.decodeError(name)
        #expect(error?.code == .imageTooLarge(width: side, height: side, limit: .decodedBytes(512 << 20)))
        #expect(error?.description.contains("maxDecodedBytes") == true)
    }

    @Test("the budget counts the canvas and every frame held: three frames need three buffers")
    func budgetCountsFrames() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("three.gif")
        let frame = Corpus.root.appendingPathComponent("gif/video-001.gif").path
        try await runTool("/usr/bin/gifsicle", ["-m", frame, frame, frame, "-o", output.path])
        let data = try Data(contentsOf: output)
        var options = DecodingOptions()
        options.maxDecodedBytes = 3 * 150 * 103 * 4
        #expect(try GIFDecoder().decode(data, options: options).frames.count == 3)
        options.maxDecodedBytes -= 1
        do {
            _ = try GIFDecoder().decode(data, options: options)
            Issue.record("decoded three frames in the budget of two")
        } catch {
            #expect(error.code == .imageTooLarge(width: 150, height: 103, limit: .decodedBytes(options.maxDecodedBytes)))
        }
    }

    @Test("limit messages name the limit and its value")
    func limitMessages() throws {
        var options = DecodingOptions()
        options.maxFrames = 3
        let frames = try #require(try Self.decodeError("gif-thousand-frames.gif", options: options))
        #expect(frames.code == .imageTooLarge(width: 707, height: 707, limit: .frames(3)))
        #expect(frames.description.contains("the limit of 3 frames (maxFrames)"))
        do {
            _ = try PNGDecoder().decode(PNGBytes.png(width: 0, height: 0, colorType: 6), options: DecodingOptions())
            Issue.record("decoded a 0×0 PNG")
        } catch {
            #expect(error.code == .emptyImage(width: 0, height: 0))
            #expect(error.description.contains("image of 0×0 has no pixels"))
        }
    }
}

@Suite("Hostile input: agreement with libjpeg and giflib")
struct DecoderAgreementTests {
    @Test("an invalid marker (0x80) inside the scan is refused, as djpeg refuses it; a truncated file is still shown")
    func jpegInvalidMarker() async throws {
        let file = HostileFiles.root.appendingPathComponent("jpeg-marker-0x80-in-scan.jpeg")
        #expect(try await runProcess(URL(fileURLWithPath: "/usr/bin/djpeg"), [file.path]).status != 0)
        do {
            let data = try Data(contentsOf: file)
            let image = try JPEGDecoder().decode(data, options: DecodingOptions())
            Issue.record("decoded as \(image.width)×\(image.height)")
        } catch let error as ImagoError {
            #expect(error.code == .invalidImage("JPEG: Unsupported marker type 0x80"))
        }
        // Warnings alone are not errors: the truncated progressive corpus file decodes.
        let truncated = try JPEGDecoder().decode(Corpus.data("jpeg/video-001.progressive.truncated.jpeg"), options: DecodingOptions())
        #expect(truncated.width == 150)
        #expect(JPEGDecoder.isWarning("Premature end of JPEG file"))
        #expect(JPEGDecoder.isWarning("Corrupt JPEG data: premature end of data segment"))
        #expect(!JPEGDecoder.isWarning("Unsupported marker type 0x80"))
    }

    @Test("a CMYK JPEG without an Adobe marker is read as stored (0 = no ink), as libjpeg and jpgicc read it, not inverted")
    func cmykWithoutAdobe() throws {
        let stripped = try JPEGDecoder().decode(HostileFiles.data("jpeg-cmyk-without-adobe.jpeg"), options: DecodingOptions())
        let original = try JPEGDecoder().decode(Corpus.data("jpeg/video-001.cmyk.jpeg"), options: DecodingOptions())
        #expect((stripped.width, stripped.height) == (original.width, original.height))
        // The stored samples are Adobe's inverted ones, so read as stored they are the photo's negative.
        ColorReference.expectFar(stripped, original, "without the marker")
    }

    @Test("a GIF using all 4096 LZW codes with a deferred clear decodes exactly as giflib's gif2rgb does")
    func gifFullCodeTable() async throws {
        let file = HostileFiles.root.appendingPathComponent("gif-4096-codes.gif")
        let image = try GIFDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        #expect((image.width, image.height) == (96, 96))
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = directory.appendingPathComponent("planes").path
        try await runTool("/usr/bin/gif2rgb", ["-o", prefix, file.path])
        let planes = try ["R", "G", "B"].map { try Data(contentsOf: URL(fileURLWithPath: "\(prefix).\($0)")) }
        var expected: [UInt8] = []
        for index in 0..<(96 * 96) { expected += [planes[0][index], planes[1][index], planes[2][index], 255] }
        #expect(image.pixels == expected)
    }
}
