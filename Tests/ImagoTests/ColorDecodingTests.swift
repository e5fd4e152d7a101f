import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// Every decoder honours the colour its file states, compared with Little CMS's own tools and
/// ImageMagick's `-profile` on fixtures made here from Debian's profiles: within a mean ΔE2000 of 1
/// and a largest of 5, where the untreated pixels are far off.
@Suite("Colour: decoders to sRGB")
struct ColorDecodingTests {
    typealias Reference = ColorReference

    static func keeping() -> DecodingOptions {
        var options = DecodingOptions()
        options.colorProfileHandling = .keep
        return options
    }

    /// Decodes `file` by default (to sRGB) and as stored, and checks the first against `reference`
    /// and the stored pixels far from it.
    static func expectConverted(_ file: URL, _ reference: Image, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let data = try Data(contentsOf: file)
        let image = try DecoderRegistry.standard().decode(data)
        Reference.expectClose(image, reference, comment, sourceLocation: sourceLocation)
        #expect(image.metadata.colorProfile == nil, sourceLocation: sourceLocation)
        #expect(image.metadata.sourceColorProfile != nil, sourceLocation: sourceLocation)
        let stored = try DecoderRegistry.standard().decode(data, options: keeping())
        Reference.expectFar(stored, reference, comment, sourceLocation: sourceLocation)
        #expect(stored.metadata.colorProfile == image.metadata.sourceColorProfile, sourceLocation: sourceLocation)
    }

    @Test("Adobe RGB (1998) in PNG, JPEG, WebP, TIFF, AVIF and JPEG XL: as ImageMagick converts it")
    func adobeRGB() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = try await Reference.tagged(Reference.adobeRGB, "adobe.png", in: directory)
        let reference = try await Reference.magickSRGB(png, in: directory)
        try Self.expectConverted(png, reference, "PNG iCCP")
        let tiff = try await Reference.tagged(Reference.adobeRGB, "adobe.tif", in: directory)
        try Self.expectConverted(tiff, reference, "TIFF tag 34675")
        let jpeg = try await Reference.tagged(Reference.adobeRGB, "adobe.jpg", in: directory, extra: ["-sampling-factor", "1x1", "-quality", "98"])
        try await Self.expectConverted(jpeg, try Reference.magickSRGB(jpeg, in: directory), "JPEG APP2")
        // The same profile put into other formats by their own tools, the pixels losslessly.
        let icc = directory.appendingPathComponent("adobe.icc")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: Reference.adobeRGB), to: icc)
        let plain = directory.appendingPathComponent("plain.webp"), webp = directory.appendingPathComponent("adobe.webp")
        try await runTool("/usr/bin/cwebp", ["-quiet", "-lossless", "-exact", png.path, "-o", plain.path])
        try await runTool("/usr/bin/webpmux", ["-set", "icc", icc.path, plain.path, "-o", webp.path])
        try Self.expectConverted(webp, reference, "WebP ICCP")
        #if AVIF
            let avif = directory.appendingPathComponent("adobe.avif")
            try await runTool("/usr/bin/avifenc", ["-s", "10", "-j", "1", "-l", "--icc", icc.path, png.path, avif.path])
            try Self.expectConverted(avif, reference, "AVIF colr ICC")
        #endif
        #if JXL
            let jxl = directory.appendingPathComponent("adobe.jxl")
            try await runTool("/usr/bin/cjxl", ["--quiet", "-d", "0", png.path, jxl.path])
            try Self.expectConverted(jxl, reference, "JPEG XL")
        #endif
    }

    @Test("previews of a tagged PNG and WebP come in the colour of the whole decode")
    func previewsConverted() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = try await Reference.tagged(Reference.adobeRGB, "adobe.png", in: directory)
        let icc = directory.appendingPathComponent("adobe.icc"), plain = directory.appendingPathComponent("plain.webp")
        let webp = directory.appendingPathComponent("adobe.webp")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: Reference.adobeRGB), to: icc)
        try await runTool("/usr/bin/cwebp", ["-quiet", "-lossless", "-exact", png.path, "-o", plain.path])
        try await runTool("/usr/bin/webpmux", ["-set", "icc", icc.path, plain.path, "-o", webp.path])
        let split = directory.appendingPathComponent("adobe-split.png")
        try Self.splittingImageData(try Data(contentsOf: png)).write(to: split)
        for file in [split, webp] {
            let data = try Data(contentsOf: file)
            let whole = try DecoderRegistry.standard().decode(data)
            var previews = PreviewDecoder()
            guard let preview = previews.preview(of: data.prefix(data.count * 3 / 4)) else {
                Issue.record("no preview of \(file.lastPathComponent)")
                continue
            }
            #expect(preview.metadata.sourceColorProfile != nil && preview.metadata.colorProfile == nil)
            // The first rows, which every preview of three quarters of the bytes has, as the whole decode has them.
            let rowBytes = whole.width * 4 * 10
            #expect(preview.pixels.prefix(rowBytes) == whole.pixels.prefix(rowBytes), "\(file.lastPathComponent): the first rows differ")
        }
    }

    @Test("HEIC with an ICC profile: its own decode as stored, converted by ImageMagick")
    func heicProfile() async throws {
        #if HEIF
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let png = try await Reference.tagged(Reference.adobeRGB, "adobe.png", in: directory)
            let heic = directory.appendingPathComponent("adobe.heic")
            try await runTool("/usr/bin/heif-enc", ["-q", "90", png.path, "-o", heic.path])
            // HEVC is lossy: the reference is Imago's stored pixels with their profile, converted
            // by ImageMagick, so only the colour conversion is compared.
            let stored = try HEIFDecoder().decode(try Data(contentsOf: heic), options: Self.keeping())
            let profile = try #require(stored.metadata.colorProfile)
            #expect(profile.data == (try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB))))
            let tagged = directory.appendingPathComponent("stored.png")
            try PNGEncoder().encode(stored).write(to: tagged)
            try await Self.expectConverted(heic, try Reference.magickSRGB(tagged, in: directory), "HEIC")
        #endif
    }

    @Test("ProPhoto 16-bit PNG, converted from 16 bits; Display P3 made by Little CMS; SwappedRedAndGreen")
    func widerGamuts() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let proPhoto = try await Reference.tagged(Reference.proPhoto, "prophoto.png", in: directory, extra: ["-depth", "16"])
        let proPhotoData = try Data(contentsOf: proPhoto)
        #expect(proPhotoData[24] == 16, "a 16-bit PNG")
        try await Self.expectConverted(proPhoto, try Reference.magickSRGB(proPhoto, in: directory), "ProPhoto 16-bit")
        let (p3, _) = try await Reference.lcmsProfiles(in: directory)
        let p3PNG = try await Reference.tagged(p3.path, "p3.png", in: directory)
        try await Self.expectConverted(p3PNG, try Reference.magickSRGB(p3PNG, in: directory), "Display P3")
        // Tagged, not converted: the pixels are sRGB's, the profile says red and green are swapped.
        let swapped = directory.appendingPathComponent("swapped.png")
        try await runTool(Reference.convert, [try Reference.source(in: directory).path, "-profile", Reference.swapped, swapped.path])
        let reference = try await Reference.magickSRGB(swapped, in: directory)
        try Self.expectConverted(swapped, reference, "SwappedRedAndGreen")
        let image = try PNGDecoder().decode(try Data(contentsOf: swapped), options: DecodingOptions())
        let source = try await PNGDecoder().decode(try Data(contentsOf: try Reference.source(in: directory)), options: DecodingOptions())
        // The first pixel's red and green come out exchanged (within rounding).
        #expect(abs(Int(image.pixels[0]) - Int(source.pixels[1])) <= 2 && abs(Int(image.pixels[1]) - Int(source.pixels[0])) <= 2)
    }

    /// The largest difference of any colour sample between two images of one size.
    static func largestSampleDifference(_ a: Image, _ b: Image) -> Int {
        guard a.width == b.width, a.height == b.height else { return .max }
        return (0..<a.pixels.count).filter { $0 % 4 != 3 }.map { abs(Int(a.pixels[$0]) - Int(b.pixels[$0])) }.max() ?? 0
    }

    @Test("ProPhoto at 16 bits in PNG, TIFF and JPEG XL, and at 10 bits in HEIC: converted before the samples become 8-bit")
    func wideSamplesConvertedFirst() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = try await Reference.tagged(Reference.proPhoto, "prophoto.png", in: directory, extra: ["-depth", "16"])
        let reference = try await Reference.magickSRGB(png, in: directory)
        // What the same picture gives once it has been cut to 8 bits first: ProPhoto's gamma of 1.8
        // and wide gamut spread each dark 8-bit step over several sRGB steps.
        let narrowed = directory.appendingPathComponent("prophoto-8.tif")
        try await runTool(Reference.convert, [png.path, "-depth", "8", narrowed.path])
        let fromEight = try TIFFDecoder().decode(try Data(contentsOf: narrowed), options: DecodingOptions())
        #expect(Self.largestSampleDifference(fromEight, reference) >= 6, "converted from 8 bits, the picture is visibly off")
        // From 16 bits, within 2 levels: ImageMagick's and Imago's answers are each within 1 of
        // Little CMS's double-precision one (MatrixShaperTests).
        let pngImage = try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
        #expect(Self.largestSampleDifference(pngImage, reference) <= 2, "PNG 16-bit")
        #if TIFF
            let tiff = directory.appendingPathComponent("prophoto-16.tif")
            try await runTool(Reference.convert, [png.path, "-depth", "16", tiff.path])
            let image = try TIFFDecoder().decode(try Data(contentsOf: tiff), options: DecodingOptions())
            #expect(image.metadata.bitsPerSample == 16 && image.metadata.sourceColorProfile != nil)
            #expect(Self.largestSampleDifference(image, reference) <= 2, "TIFF 16-bit")
            // Gray at 16 bits with straight alpha, through a gray profile: gray it stays, alpha as stored.
            let gray = directory.appendingPathComponent("gray16.tif")
            try await runTool(
                Reference.convert,
                [
                    png.path, "-colorspace", "gray", "-alpha", "set", "-channel", "A", "-evaluate", "set", "60%", "+channel", "-depth", "16",
                    "-profile", "\(Reference.profiles)/Gray-CIE_L.icc", gray.path,
                ])
            let grayData = try Data(contentsOf: gray)
            let grayImage = try TIFFDecoder().decode(grayData, options: DecodingOptions())
            let grayStored = try TIFFDecoder().decode(grayData, options: Self.keeping())
            #expect(grayImage.metadata.sourceColorProfile?.kind == .gray && grayImage.metadata.hasAlpha)
            #expect(
                stride(from: 0, to: grayImage.pixels.count, by: 4).allSatisfy {
                    grayImage.pixels[$0] == grayImage.pixels[$0 + 2] && grayImage.pixels[$0 + 3] == 153
                })
            #expect(grayImage.pixels != grayStored.pixels, "the gray profile lightens the picture")
        #endif
        #if JXL
            let jxl = directory.appendingPathComponent("prophoto.jxl")
            try await runTool("/usr/bin/cjxl", ["--quiet", "-d", "0", png.path, jxl.path])
            let jxlImage = try JXLDecoder().decode(try Data(contentsOf: jxl), options: DecodingOptions())
            #expect(jxlImage.metadata.bitsPerSample == 16 && jxlImage.metadata.sourceColorProfile != nil)
            #expect(Self.largestSampleDifference(jxlImage, reference) <= 2, "JPEG XL 16-bit")
        #endif
        #if HEIF
            // HEVC is lossy: the reference is libheif's own 16-bit decode (heif-convert, profile
            // kept), converted by ImageMagick.
            let heic = directory.appendingPathComponent("prophoto.heic"), decoded = directory.appendingPathComponent("heif-convert.png")
            try await runTool("/usr/bin/heif-enc", ["-q", "90", "-b", "10", png.path, "-o", heic.path])
            try await runTool("/usr/bin/heif-convert", ["--quiet", heic.path, decoded.path])
            let heicImage = try HEIFDecoder().decode(try Data(contentsOf: heic), options: DecodingOptions())
            #expect(heicImage.metadata.bitsPerSample == 10 && heicImage.metadata.sourceColorProfile != nil)
            let heicReference = try await Reference.magickSRGB(decoded, in: directory)
            #expect(Self.largestSampleDifference(heicImage, heicReference) <= 2, "HEIC 10-bit")
        #endif
    }

    @Test("alpha comes through a conversion unchanged, from 8 and from 16 bits")
    func alphaKept() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Corpus.root.appendingPathComponent("png/basn6a16.png").path
        for depth in ["8", "16"] {
            let tagged = directory.appendingPathComponent("alpha-\(depth).png")
            try await runTool(Reference.convert, [source, "-profile", Reference.sRGB, "-profile", Reference.adobeRGB, "-depth", depth, "png:\(tagged.path)"])
            let data = try Data(contentsOf: tagged)
            let converted = try PNGDecoder().decode(data, options: DecodingOptions())
            let stored = try PNGDecoder().decode(data, options: Self.keeping())
            #expect(converted.metadata.hasAlpha && converted.metadata.sourceColorProfile != nil, "\(depth)-bit")
            let alphas = { (image: Image) in stride(from: 3, to: image.pixels.count, by: 4).map { image.pixels[$0] } }
            #expect(alphas(converted) == alphas(stored), "\(depth)-bit alpha")
            #expect(Set(alphas(converted)).count > 2, "\(depth)-bit: a gradient of alpha")
            #expect(converted.pixels != stored.pixels, "\(depth)-bit colour converted")
        }
    }

    @Test("gray JPEG with a gray profile: as ImageMagick converts it")
    func grayProfile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A gray picture tagged (not converted) with a gamma-1.0 gray profile, which lightens it.
        let gray = directory.appendingPathComponent("gray.jpg")
        try await runTool(
            Reference.convert,
            [try Reference.source(in: directory).path, "-colorspace", "gray", "-profile", "\(Reference.profiles)/Gray-CIE_L.icc", "-quality", "98", gray.path])
        let reference = try await Reference.magickSRGB(gray, in: directory)
        try Self.expectConverted(gray, reference, "gray")
        let image = try JPEGDecoder().decode(try Data(contentsOf: gray), options: DecodingOptions())
        #expect(image.metadata.sourceColorProfile?.kind == .gray)
    }

    @Test("CMYK JPEG with a SWOP profile and Adobe inversion, and without a profile: as jpgicc converts it")
    func cmykJPEG() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cmyk = try await Reference.tagged(Reference.swop, "cmyk.jpg", in: directory, extra: ["-sampling-factor", "1x1", "-quality", "98"])
        let reference = try await Reference.jpgiccSRGB(cmyk, in: directory)
        let image = try JPEGDecoder().decode(try Data(contentsOf: cmyk), options: DecodingOptions())
        Reference.expectClose(image, reference, "CMYK with SWOP (its profile is 187 KB: three APP2 segments)")
        #expect(image.metadata.sourceColorProfile?.kind == .cmyk)
        #expect(image.metadata.sourceColorProfile?.data.count == 187_484)
        // Kept is not possible for CMYK: it is converted all the same, and carries no profile.
        let kept = try JPEGDecoder().decode(try Data(contentsOf: cmyk), options: Self.keeping())
        #expect(kept.pixels == image.pixels && kept.metadata.colorProfile == nil)
        // The corpus CMYK photo has no profile but the Adobe marker: the default CMYK profile.
        let corpus = Corpus.root.appendingPathComponent("jpeg/video-001.cmyk.jpeg")
        let corpusImage = try JPEGDecoder().decode(try Data(contentsOf: corpus), options: DecodingOptions())
        await Reference.expectClose(corpusImage, try Reference.jpgiccSRGB(corpus, inputProfile: Reference.swop, in: directory), "corpus CMYK, default profile")
        // Without the Adobe marker, CMYK is read as stored (0 = no ink), as jpgicc reads it.
        let stripped = HostileFiles.root.appendingPathComponent("jpeg-cmyk-without-adobe.jpeg")
        let strippedImage = try JPEGDecoder().decode(try Data(contentsOf: stripped), options: DecodingOptions())
        await Reference.expectClose(strippedImage, try Reference.jpgiccSRGB(stripped, inputProfile: Reference.swop, in: directory), "CMYK without Adobe")
    }

    @Test("CMYK TIFF with a SWOP profile and without one: as tificc converts it")
    func cmykTIFF() async throws {
        #if TIFF
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let tagged = try await Reference.tagged(Reference.swop, "cmyk.tif", in: directory)
            let image = try TIFFDecoder().decode(try Data(contentsOf: tagged), options: DecodingOptions())
            await Reference.expectClose(image, try Reference.tificcSRGB(tagged, in: directory), "CMYK TIFF with SWOP")
            let plain = directory.appendingPathComponent("plain.tif")
            try await runTool(Reference.convert, [try Reference.source(in: directory).path, "-colorspace", "CMYK", plain.path])
            let plainImage = try TIFFDecoder().decode(try Data(contentsOf: plain), options: DecodingOptions())
            // tificc will not take a CMYK profile for an untagged TIFF: it converts a copy tagged
            // (not converted) with the SWOP profile.
            let assigned = directory.appendingPathComponent("assigned.tif")
            try await runTool(Reference.convert, [plain.path, "-profile", Reference.swop, assigned.path])
            await Reference.expectClose(plainImage, try Reference.tificcSRGB(assigned, in: directory), "CMYK TIFF, default profile")
        #endif
    }

    @Test("PNG with only gAMA and cHRM: decoded through the profile they describe; gAMA 1/2.2 alone is sRGB")
    func pngGammaChromaticities() throws {
        let source = try PNGDecoder().decode(try Corpus.data("png/basn2c08.png"), options: Self.keeping())
        var plain = source
        plain.metadata.hasAlpha = false
        plain.metadata.colorProfile = nil  // basn2c08's own gAMA of 1.0, which would go in iCCP
        let png = try PNGEncoder().encode(plain)
        // gAMA 1/1.8 with sRGB's chromaticities: each channel decoded with exponent 1.8, re-encoded as sRGB.
        let chrm: [UInt32] = [31_270, 32_900, 64_000, 33_000, 30_000, 60_000, 15_000, 6_000]
        let tagged = Self.inserting([("gAMA", [55_556]), ("cHRM", chrm)], into: png)
        let image = try PNGDecoder().decode(tagged, options: DecodingOptions())
        func expected(_ value: UInt8) -> UInt8 {
            let linear = pow(Double(value) / 255, 1.8)
            let encoded = linear <= 0.003_130_8 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
            return UInt8((encoded * 255).rounded())
        }
        let worst = (0..<image.pixels.count).filter { $0 % 4 != 3 }.map { abs(Int(image.pixels[$0]) - Int(expected(source.pixels[$0]))) }.max() ?? 0
        #expect(worst <= 1, "gamma 1.8: largest difference \(worst)")
        #expect(image.metadata.sourceColorProfile != nil)
        // 1/2.2 without cHRM stands for sRGB (as libpng judges it): nothing is done.
        let srgbish = try PNGDecoder().decode(Self.inserting([("gAMA", [45_455])], into: png), options: DecodingOptions())
        #expect(srgbish.pixels == source.pixels && srgbish.metadata.sourceColorProfile == nil)
        // An sRGB chunk wins over gAMA, as the PNG specification orders them.
        let both = try PNGDecoder().decode(Self.inserting([("sRGB", []), ("gAMA", [55_556])], into: png), options: DecodingOptions())
        #expect(both.pixels == source.pixels)
    }

    /// `png` with chunks inserted after IHDR: each a type and 32-bit big-endian values (a
    /// zero-valued byte for an empty list, the `sRGB` rendering intent).
    static func inserting(_ chunks: [(String, [UInt32])], into png: Data) -> Data {
        var result = Data(png.prefix(33))
        for (type, values) in chunks {
            var body = Data(type.utf8)
            if values.isEmpty { body.append(0) }
            for value in values { body.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }) }
            let length = UInt32(body.count - 4)
            result.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) })
            result.append(body)
            let crc = crc32(body)
            result.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) })
        }
        result.append(png.dropFirst(33))
        return result
    }

    /// `png` with its image data in chunks of at most 1,024 bytes, as encoders that stream write
    /// it: libspng gives the rows of a partial file a whole chunk at a time.
    static func splittingImageData(_ png: Data) -> Data {
        let bytes = [UInt8](png)
        var result = Data(bytes.prefix(8)), imageData: [UInt8] = [], position = 8
        func chunk(_ type: String, _ body: ArraySlice<UInt8>) -> Data {
            let typed = Data(type.utf8) + body
            let length = UInt32(body.count), crc = crc32(typed)
            return Data([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) }) + typed
                + Data([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) })
        }
        while position + 12 <= bytes.count {
            let length = bytes[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            let body = bytes[(position + 8)..<(position + 8 + length)]
            if type == "IDAT" {
                imageData += body
            } else {
                if !imageData.isEmpty {
                    for start in stride(from: 0, to: imageData.count, by: 1024) {
                        result += chunk("IDAT", imageData[start..<min(start + 1024, imageData.count)])
                    }
                    imageData = []
                }
                result += chunk(type, body)
            }
            position += 12 + length
        }
        return result
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
