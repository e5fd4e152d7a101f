import CJPEGDC
import CTurboJPEG
import Foundation
import Imago
import Testing

/// Imago's DC-only decoder (Sources/CJPEGDC), which `JPEGDecoder` uses at 1/8 scale, checked against
/// libjpeg-turbo's own 1/8 output: identical wherever libjpeg-turbo replicates chroma too, within the
/// corpus's lossy tolerance where it rebuilds 2×2-subsampled chroma from AC coefficients.
@Suite("JPEG at 1/8 from DC coefficients")
struct JPEGEighthScaleTests {
    struct Eighth {
        var width: Int, height: Int, pixels: [UInt8]
    }

    struct Header {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
    }

    static func header(_ data: Data) -> Header {
        guard let handle = tjInitDecompress() else { return Header() }
        defer { tjDestroy(handle) }
        var header = Header()
        _ = data.withUnsafeBytes { bytes in
            tjDecompressHeader3(
                handle, bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count),
                &header.width, &header.height, &header.subsampling, &header.colorspace)
        }
        return header
    }

    /// libjpeg-turbo at 1/8, RGBA, chroma replicated where it upsamples (TJFLAG_FASTUPSAMPLE, as
    /// JPEGDecoder asks for).
    static func turboJPEG(_ data: Data) throws -> Eighth {
        let header = header(data)
        let width = (Int(header.width) + 7) / 8, height = (Int(header.height) + 7) / 8
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let status = data.withUnsafeBytes { bytes in
            tjDecompress2(
                handle, bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), &pixels,
                Int32(width), 0, Int32(height), Int32(TJPF_RGBA.rawValue), TJFLAG_FASTUPSAMPLE)
        }
        #expect(status == 0 || tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue))
        return Eighth(width: width, height: height, pixels: pixels)
    }

    static func dcOnly(_ data: Data, width: Int32? = nil) -> (status: imago_jpeg_dc_status, image: Eighth) {
        let header = header(data)
        let frameWidth = width ?? header.width
        let outputWidth = (Int(frameWidth) + 7) / 8, outputHeight = (Int(header.height) + 7) / 8
        var pixels = [UInt8](repeating: 0, count: max(outputWidth * outputHeight * 4, 0))
        let status = data.withUnsafeBytes { bytes in
            imago_jpeg_decode_dc(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, frameWidth, header.height, &pixels)
        }
        return (status, Eighth(width: outputWidth, height: outputHeight, pixels: pixels))
    }

    /// Through the public API: a 1×1 target picks the 1/8 scale.
    static func jpegDecoder(_ data: Data) throws(ImagoError) -> Image {
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 1, height: 1)
        return try JPEGDecoder().decode(data, options: options)
    }

    /// Mean absolute difference per colour channel, in 1/255 units (rounded down).
    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var sum = 0, count = 0
        for index in a.indices where index % 4 != 3 {
            sum += abs(Int(a[index]) - Int(b[index]))
            count += 1
        }
        return sum / max(count, 1)
    }

    /// libjpeg-turbo scales 2×2-subsampled chroma (4:2:0, 4:1:0) with a 2×2 inverse DCT, which uses
    /// AC coefficients; every other layout it replicates, as the DC decoder does.
    static func expectMatchesTurboJPEG(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (status, image) = dcOnly(data)
        #expect(status == IMAGO_JPEG_DC_OK, sourceLocation: sourceLocation)
        let reference = try turboJPEG(data)
        #expect((image.width, image.height) == (reference.width, reference.height), sourceLocation: sourceLocation)
        let subsampling = header(data).subsampling
        if subsampling == Int32(TJSAMP_420.rawValue) || subsampling == -1 {
            #expect(meanDifference(image.pixels, reference.pixels) <= 8, sourceLocation: sourceLocation)
        } else {
            #expect(Corpus.samePixels(image.pixels, reference.pixels), sourceLocation: sourceLocation)
        }
        #expect(try jpegDecoder(data).pixels == image.pixels, "JPEGDecoder takes the DC path", sourceLocation: sourceLocation)
    }

    static let corpusFiles = ((try? Corpus.files("jpeg", extension: "jpeg")) ?? [])
        .filter { !$0.lastPathComponent.contains(".cmyk.") && !$0.lastPathComponent.contains(".rgb.") }

    @Test("every YCbCr and gray corpus JPEG (baseline, progressive, each subsampling, truncated) matches libjpeg-turbo at 1/8", arguments: corpusFiles)
    func corpus(file: URL) throws {
        try Self.expectMatchesTurboJPEG(Data(contentsOf: file))
    }

    /// cjpeg (libjpeg-turbo-progs) options for layouts the corpus lacks: restart intervals in MCUs
    /// and in rows, optimized Huffman tables, quality 100 (long codes, large values), progressive
    /// with restarts, gray, 2×1 and 1×2 sampling.
    static let cjpegOptions: [[String]] = [
        ["-restart", "1B"], ["-restart", "3B", "-sample", "2x2"], ["-restart", "1", "-sample", "1x2"],
        ["-optimize", "-sample", "2x1"], ["-quality", "100", "-sample", "1x1"], ["-quality", "100", "-sample", "2x2", "-optimize"],
        ["-progressive", "-restart", "2B"], ["-progressive", "-sample", "1x1", "-quality", "95"], ["-grayscale", "-restart", "1B"],
        ["-grayscale", "-progressive"],
    ]

    /// The corpus picture as a PPM for cjpeg.
    static func ppm(_ source: String, in directory: URL) throws -> URL {
        let image = try DecoderRegistry.standard().decode(Corpus.data(source))
        var data = Data("P6\n\(image.width) \(image.height)\n255\n".utf8)
        for offset in stride(from: 0, to: image.pixels.count, by: 4) { data.append(contentsOf: image.pixels[offset..<offset + 3]) }
        let url = directory.appendingPathComponent("source.ppm")
        try data.write(to: url)
        return url
    }

    static func cjpeg(_ options: [String], source: String) async throws -> Data {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.jpg")
        try await runTool("/usr/bin/cjpeg", options + ["-outfile", output.path, ppm(source, in: directory).path])
        return try Data(contentsOf: output)
    }

    @Test("JPEGs made by cjpeg with restart intervals, optimized tables, quality 100 and other samplings match libjpeg-turbo", arguments: cjpegOptions)
    func cjpegLayouts(options: [String]) async throws {
        for source in ["jpeg/video-001.png", "jpeg/go-turns-two-280x360.jpeg"] {
            try await Self.expectMatchesTurboJPEG(Self.cjpeg(options, source: source))
        }
    }

    @Test("what the DC decoder leaves alone (arithmetic coding, RGB, CMYK) is decoded by libjpeg-turbo at 1/8")
    func fallbacks() async throws {
        let arithmetic = try await Self.cjpeg(["-arithmetic"], source: "jpeg/video-001.png")
        #expect(Self.dcOnly(arithmetic).status == IMAGO_JPEG_DC_UNSUPPORTED)
        #expect(try Self.jpegDecoder(arithmetic).pixels == Self.turboJPEG(arithmetic).pixels)

        let cmyk = try Corpus.data("jpeg/video-001.cmyk.jpeg")
        #expect(Self.dcOnly(cmyk).status == IMAGO_JPEG_DC_UNSUPPORTED)
        let cmykImage = try Self.jpegDecoder(cmyk)
        #expect((cmykImage.width, cmykImage.height) == (19, 13))

        // Three components, coded as RGB: JPEGDecoder reads the colorspace first and never asks.
        let rgb = try Corpus.data("jpeg/video-001.rgb.jpeg")
        #expect(Self.header(rgb).colorspace == Int32(TJCS_RGB.rawValue))
        #expect(try Self.jpegDecoder(rgb).pixels == Self.turboJPEG(rgb).pixels)
    }

    @Test("a truncated baseline JPEG or a frame of another size is damaged, and JPEGDecoder shows what libjpeg-turbo shows")
    func damaged() throws {
        let data = try Corpus.data("jpeg/video-001.q50.420.jpeg")
        let truncated = data.prefix(data.count * 6 / 10)
        #expect(Self.dcOnly(truncated).status == IMAGO_JPEG_DC_DAMAGED)
        #expect(try Self.jpegDecoder(truncated).pixels == Self.turboJPEG(truncated).pixels)
        #expect(Self.dcOnly(data, width: 151).status == IMAGO_JPEG_DC_DAMAGED)
    }

    @Test("a progressive JPEG with hundreds of scans is refused at 1/8 too")
    func scanLimit() throws {
        let bomb = try Corpus.progressiveScanBomb()
        #expect(Self.dcOnly(bomb).status == IMAGO_JPEG_DC_UNSUPPORTED)
        #expect(throws: ImagoError.self) { try Self.jpegDecoder(bomb) }
    }

    /// Deterministic mutations (bit flips, random bytes, truncation, inserted markers) of files in
    /// each layout: every outcome is an image of the 1/8 size or an ImagoError, never a crash. Longer
    /// runs under ASan and UBSan belong to `make fuzz-jpeg-dc` (libFuzzer).
    @Test(
        "mutated JPEGs decode at 1/8 to an image of the right size or a typed error",
        arguments: [
            "jpeg/video-001.jpeg", "jpeg/video-001.q50.420.progressive.jpeg", "jpeg/video-005.gray.q50.jpeg",
            "jpeg/video-001.separate.dc.progression.progressive.jpeg", "jpeg/video-001.q50.410.jpeg",
        ])
    func mutations(path: String) throws {
        let original = try Corpus.data(path)
        var random = SeededRandom(seed: UInt64(path.utf8.count) &* 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<150 {
            var data = original
            switch random.next() % 4 {
            case 0: for _ in 0..<(1 + random.next() % 8) { data[Int(random.next() % UInt64(data.count))] ^= UInt8(1 << (random.next() % 8)) }
            case 1: data = data.prefix(Int(random.next() % UInt64(data.count)))
            case 2: for _ in 0..<(1 + random.next() % 4) { data[Int(random.next() % UInt64(data.count))] = UInt8(truncatingIfNeeded: random.next()) }
            default:
                let at = Int(random.next() % UInt64(data.count - 1))
                data[at] = 0xFF
                data[at + 1] = UInt8(truncatingIfNeeded: random.next())
            }
            let status = Self.dcOnly(data).status
            #expect([IMAGO_JPEG_DC_OK, IMAGO_JPEG_DC_UNSUPPORTED, IMAGO_JPEG_DC_DAMAGED].contains(status))
            do {
                let image = try Self.jpegDecoder(data)
                let header = Self.header(data)
                #expect(image.width * image.height == ((Int(header.width) + 7) / 8) * ((Int(header.height) + 7) / 8))
            } catch {
                #expect(error.stage == .decoding)
            }
        }
    }
}

/// xorshift64: the same mutations on every run.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 1 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
