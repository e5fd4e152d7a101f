import Foundation
import Imago
import Testing

@Suite("JPEG decoding (TurboJPEG)")
struct JPEGDecoderTests {
    static let files = (try? Corpus.files("jpeg", extension: "jpeg")) ?? []

    @Test("the corpus has JPEGs to test")
    func corpusPresent() {
        #expect(Self.files.count >= 25, "corpus missing at \(Corpus.root.path)")
    }

    /// Files whose reference is the PNG of their own stem: every channel within 8/255 (Go's
    /// decode_test.go, per pixel).
    /// (The CMYK photo's PNG is Go's naive conversion; Imago converts CMYK through a CMYK profile,
    /// which ColorDecodingTests compares with Little CMS's jpgicc.)
    static let ownReference = files.filter {
        Corpus.reference(for: $0)?.deletingPathExtension().lastPathComponent == $0.deletingPathExtension().lastPathComponent
            && !$0.lastPathComponent.contains(".cmyk.")
    }
    /// Re-encodings (q50, subsamplings, separate DC progression) compared with the original picture's
    /// PNG: lossy by design, so the mean per channel is within 8/255 (djpeg itself differs by up to
    /// 146/255 on single channels of these files).
    static let variants = files.filter {
        Corpus.reference(for: $0) != nil && !ownReference.contains($0) && !$0.lastPathComponent.contains(".cmyk.")
    }

    @Test("every corpus JPEG with its own reference matches it within 8/255 per channel", arguments: ownReference)
    func conformance(file: URL) throws {
        let image = try JPEGDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        let reference = try PNGDecoder().decode(Data(contentsOf: #require(Corpus.reference(for: file))), options: DecodingOptions())
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(Corpus.maxDifference(image, reference) <= 8)
        #expect(image.metadata.format == .jpeg)
        #expect(!image.metadata.hasAlpha)
        #expect(image.pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
    }

    @Test("every re-encoded variant is within 8/255 of the original on average per channel", arguments: variants)
    func variantConformance(file: URL) throws {
        let image = try JPEGDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        let reference = try PNGDecoder().decode(Data(contentsOf: #require(Corpus.reference(for: file))), options: DecodingOptions())
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(Corpus.meanDifference(image, reference) <= 8)
        #expect(image.metadata.format == .jpeg)
        #expect(!image.metadata.hasAlpha)
        #expect(image.pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
    }

    @Test(
        "a progressive variant decodes to exactly the pixels of its baseline twin",
        arguments: files.filter { $0.lastPathComponent.hasSuffix(".progressive.jpeg") && !$0.lastPathComponent.hasPrefix("video-001.progressive") })
    func progressiveEqualsBaseline(file: URL) throws {
        let baseline = file.deletingLastPathComponent().appendingPathComponent(
            file.lastPathComponent.replacingOccurrences(of: ".progressive.jpeg", with: ".jpeg"))
        let progressive = try JPEGDecoder().decode(Data(contentsOf: file), options: DecodingOptions())
        let twin = try JPEGDecoder().decode(Data(contentsOf: baseline), options: DecodingOptions())
        #expect(Corpus.samePixels(progressive.pixels, twin.pixels))
    }

    @Test("a JPEG without a reference decodes to its declared size")
    func noReference() throws {
        let image = try JPEGDecoder().decode(Corpus.data("jpeg/go-turns-two-280x360.jpeg"), options: DecodingOptions())
        #expect((image.width, image.height) == (280, 360))
        #expect(image.cost == 280 * 360 * 4)
    }

    @Test("DCT-scaled decode picks the smallest scale that still covers the target")
    func scaled() throws {
        let data = try Corpus.data("jpeg/video-001.jpeg")
        let full = try JPEGDecoder().decode(data, options: DecodingOptions())
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: full.width / 4, height: full.height / 4)
        let quarter = try JPEGDecoder().decode(data, options: options)
        #expect(quarter.width >= full.width / 4 && quarter.height >= full.height / 4)
        #expect(quarter.width < full.width / 2)
        #expect(quarter.metadata.originalWidth == full.width)
        options.targetSize = PixelSize(width: 1, height: 1)
        let eighth = try JPEGDecoder().decode(data, options: options)
        #expect(eighth.width == (full.width + 7) / 8 && eighth.height == (full.height + 7) / 8)
    }

    @Test("garbage after the JPEG signature is a clear invalidImage error")
    func corrupt() throws {
        var data = Data([0xFF, 0xD8, 0xFF, 0xE0])
        data.append(Data(repeating: 0x41, count: 100))
        #expect(throws: ImagoError.self) { try JPEGDecoder().decode(data, options: DecodingOptions()) }
        do {
            _ = try JPEGDecoder().decode(data, options: DecodingOptions())
        } catch {
            switch error.code.kind {
            case .invalidImage: #expect(error.code.message?.hasPrefix("JPEG:") == true)
            case .emptyImage: break  // libjpeg may read a 0×0 header out of the garbage
            default: Issue.record("got \(error)")
            }
            #expect(error.stage == .decoding)
        }
    }

    @Test("a progressive JPEG with hundreds of scans (the progressive-JPEG DoS) is refused")
    func scanLimit() throws {
        let bomb = try Corpus.progressiveScanBomb()
        do {
            _ = try JPEGDecoder().decode(bomb, options: DecodingOptions())
            Issue.record("decoded 600 extra scans")
        } catch {
            guard error.code.kind == .invalidImage, let message = error.code.message else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.contains("scans"))
        }
    }

    @Test("a JPEG over the pixel limit is refused from its header")
    func limits() throws {
        var options = DecodingOptions()
        options.maxPixels = 1000
        #expect {
            try JPEGDecoder().decode(Corpus.data("jpeg/video-001.jpeg"), options: options)
        } throws: { error in
            guard (error as? ImagoError)?.code.kind == .imageTooLarge else { return false }
            return true
        }
    }
}

/// `DecodingOptions.smoothsChroma`: libjpeg's smooth chroma upsampling, as djpeg (and Pillow,
/// libvips) decode by default; replication, as `djpeg -nosmooth`, otherwise.
@Suite("JPEG chroma upsampling against djpeg")
struct JPEGChromaUpsamplingTests {
    @Test(
        "smoothsChroma decodes djpeg's exact pixels; the default decodes djpeg -nosmooth's; the two differ",
        arguments: ["video-001.q50.420.jpeg", "video-001.q50.422.jpeg", "video-001.q50.420.progressive.jpeg"])
    func againstDjpeg(name: String) async throws {
        let file = Corpus.root.appendingPathComponent("jpeg/\(name)")
        let data = try Data(contentsOf: file)
        var smooth = DecodingOptions()
        smooth.smoothsChroma = true
        let smoothed = try JPEGDecoder().decode(data, options: smooth)
        let replicated = try JPEGDecoder().decode(data, options: DecodingOptions())
        func djpeg(_ arguments: [String]) async throws -> Image {
            let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/djpeg"), arguments + ["-ppm", file.path])
            #expect(run.status == 0)
            return try DecoderRegistry.standard().decode(run.output)
        }
        let reference = try await djpeg([]), nosmooth = try await djpeg(["-nosmooth"])
        #expect(Corpus.samePixels(smoothed.pixels, reference.pixels))
        #expect(Corpus.samePixels(replicated.pixels, nosmooth.pixels))
        #expect(!Corpus.samePixels(smoothed.pixels, replicated.pixels))
    }
}
