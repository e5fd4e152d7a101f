import CLCMSSupport
import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// Colour profiles are attacker input like any byte: one that does not fit the pixels, that Little
/// CMS refuses, that is too large, or whose tables would take too much memory is ignored, and the
/// image decodes as sRGB, as stored; JPEG profile chunks with a gap or a repeat are unusable.
@Suite("Colour: hostile profiles")
struct ColorHostileTests {
    typealias Reference = ColorReference

    /// A PNG of the corpus picture whose `iCCP` holds `profile` (compressed by zlib through Imago's
    /// own encoder), and the stored pixels.
    static func png(with profile: Data) throws -> (png: Data, stored: Image) {
        var options = DecodingOptions()
        options.colorProfileHandling = .keep
        var image = try PNGDecoder().decode(try Corpus.data("png/basn2c08.png"), options: options)
        image.metadata.hasAlpha = false
        // ColorProfile's own check is passed by patching the size and signature: the bytes reach Little CMS.
        var bytes = [UInt8](profile)
        if bytes.count >= 40 {
            let size = bytes.count
            bytes.replaceSubrange(0..<4, with: [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        }
        image.metadata.colorProfile = ColorProfile(iccData: Data(bytes))
        let png = try PNGEncoder().encode(image)
        image.metadata.colorProfile = nil
        return (png, image)
    }

    /// Expects `png` to decode as its stored pixels, its profile stated but not used.
    static func expectIgnored(_ png: Data, _ stored: Image, options: DecodingOptions = DecodingOptions(), _ comment: Comment) throws {
        let image = try PNGDecoder().decode(png, options: options)
        #expect(image.pixels == stored.pixels, comment)
        #expect(image.metadata.colorProfile == nil, comment)
        var keeping = options
        keeping.colorProfileHandling = .keep
        #expect(try PNGDecoder().decode(png, options: keeping).metadata.colorProfile == nil, "\(comment): not kept either")
    }

    @Test("a CMYK profile on RGB pixels (sharp #237), and a gray one, are ignored: the pixels as stored")
    func mismatchedProfiles() async throws {
        let cmyk = try Data(contentsOf: URL(fileURLWithPath: Reference.swop))
        let (png, stored) = try Self.png(with: cmyk)
        try Self.expectIgnored(png, stored, "CMYK profile on RGB")
        #expect(try PNGDecoder().decode(png, options: DecodingOptions()).metadata.sourceColorProfile?.kind == .cmyk, "stated, not used")
        // An RGB profile on a CMYK JPEG: the default CMYK profile is used instead.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mixed = directory.appendingPathComponent("mixed.jpg")
        try await runTool(
            "/usr/bin/exiftool",
            ["-q", "-o", mixed.path, "-ICC_Profile<=\(Reference.adobeRGB)", Corpus.root.appendingPathComponent("jpeg/video-001.cmyk.jpeg").path])
        let image = try JPEGDecoder().decode(try Data(contentsOf: mixed), options: DecodingOptions())
        let plain = try JPEGDecoder().decode(try Corpus.data("jpeg/video-001.cmyk.jpeg"), options: DecodingOptions())
        #expect(image.metadata.sourceColorProfile?.kind == .rgb)
        #expect(image.pixels == plain.pixels, "converted as a CMYK JPEG without a profile")
    }

    @Test("damaged profiles are ignored: tags past the end, a truncated CLUT, random bytes after a header")
    func damagedProfiles() throws {
        let adobe = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB)))
        // The tag table points past the end: the profile cut to its first 400 bytes.
        let (cut, stored) = try Self.png(with: Data(adobe.prefix(400)))
        try Self.expectIgnored(cut, stored, "cut")
        // A header and a tag count, then noise.
        var generator = SplitMix(seed: 7)
        let noise = Array(adobe.prefix(132)) + (0..<4000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let (noisy, _) = try Self.png(with: Data(noise))
        try Self.expectIgnored(noisy, stored, "noise")
        // An A2B0 lookup table declaring a 255-point grid of 3 inputs and 3 outputs (99 MB of
        // entries) in a 2 KB profile: refused by the memory limit before Little CMS allocates it.
        let (clut, _) = try Self.png(with: Self.absurdLookupTable())
        try Self.expectIgnored(clut, stored, "absurd CLUT")
        let profile = try #require(ColorProfile(iccData: Self.absurdLookupTable()))
        guard case .failure(.unreadable) = ColorTransform.make(profile: profile, layout: .rgba8, maxProfileSize: 4 << 20, maxMemory: 64 << 20) else {
            Issue.record("the absurd CLUT made a transform")
            return
        }
        // What the limit saves: in a context allowed 1 GiB, Little CMS allocates the whole grid
        // before it finds the data missing; under the default 64 MiB it never holds more.
        #expect(Self.peakWhileReading(profile.data, limit: 1 << 30) > 90_000_000)
        #expect(Self.peakWhileReading(profile.data, limit: 64 << 20) <= 64 << 20)
    }

    /// The most bytes Little CMS held while opening `bytes` and making a transform to sRGB from
    /// it, in a context of `limit`.
    static func peakWhileReading(_ bytes: Data, limit: Int) -> Int {
        guard let context = imago_lcms_context_create(limit) else { return -1 }
        defer { imago_lcms_context_delete(context) }
        let profile = bytes.withUnsafeBytes { cmsOpenProfileFromMemTHR(context, $0.baseAddress, cmsUInt32Number($0.count)) }
        if let profile {
            if let target = cmsCreate_sRGBProfileTHR(context) {
                let format = cmsUInt32Number(4 << 16 | 3 << 3 | 1)  // TYPE_RGB_8
                if let transform = cmsCreateTransformTHR(context, profile, format, target, format, 1, 0) { cmsDeleteTransform(transform) }
                cmsCloseProfile(target)
            }
            cmsCloseProfile(profile)
        }
        return imago_lcms_context_peak(context)
    }

    @Test("a profile over maxColorProfileSize, or needing more than maxColorTransformMemory, is ignored")
    func limits() throws {
        let adobe = try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB))
        let (png, stored) = try Self.png(with: adobe)
        var small = DecodingOptions()
        small.maxColorProfileSize = 1000
        try Self.expectIgnored(png, stored, options: small, "over maxColorProfileSize")
        var tight = DecodingOptions()
        tight.maxColorTransformMemory = 4096
        try Self.expectIgnored(png, stored, options: tight, "over maxColorTransformMemory")
        // Within the default limits the same file is converted.
        #expect(try PNGDecoder().decode(png, options: DecodingOptions()).pixels != stored.pixels)
    }

    @Test("JPEG profile chunks with a gap or a repeat make the profile unusable, not the image")
    func brokenChunks() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("plain.jpg")
        try await runTool(Reference.convert, [try Reference.source(in: directory).path, "-quality", "95", plain.path])
        let jpeg = try Data(contentsOf: plain)
        let profile = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB)))
        func chunk(_ sequence: UInt8, of count: UInt8, _ bytes: ArraySlice<UInt8>) -> [UInt8] {
            let length = 2 + 14 + bytes.count
            return [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE\0".utf8) + [sequence, count] + bytes
        }
        let half = profile.count / 2
        let whole = chunk(1, of: 2, profile[..<half]) + chunk(2, of: 2, profile[half...])
        let gap = chunk(1, of: 3, profile[..<half]) + chunk(3, of: 3, profile[half...])
        let repeated = chunk(1, of: 2, profile[..<half]) + chunk(1, of: 2, profile[..<half]) + chunk(2, of: 2, profile[half...])
        func with(_ segments: [UInt8]) -> Data { Data(jpeg.prefix(2)) + Data(segments) + jpeg.dropFirst(2) }
        let reference = try JPEGDecoder().decode(jpeg, options: DecodingOptions())
        let joined = try JPEGDecoder().decode(with(whole), options: DecodingOptions())
        #expect(joined.metadata.sourceColorProfile?.data == Data(profile), "two chunks joined in order")
        for (segments, name) in [(gap, "gap"), (repeated, "repeat")] {
            let image = try JPEGDecoder().decode(with(segments), options: DecodingOptions())
            #expect(image.metadata.sourceColorProfile == nil, "\(name)")
            #expect(image.pixels == reference.pixels, "\(name): decoded as sRGB")
        }
    }

    /// A 2 KB RGB profile whose A2B0 is an `mft2` lookup table declaring a 255-point grid.
    static func absurdLookupTable() -> Data {
        var bytes = [UInt8](repeating: 0, count: 2048)
        func put32(_ value: UInt32, at offset: Int) {
            bytes.replaceSubrange(offset..<(offset + 4), with: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
        }
        func put(_ text: String, at offset: Int) { bytes.replaceSubrange(offset..<(offset + text.utf8.count), with: Array(text.utf8)) }
        put32(UInt32(bytes.count), at: 0)
        put32(0x0220_0000, at: 8)  // version 2.2
        put("mntr", at: 12)
        put("RGB ", at: 16)
        put("Lab ", at: 20)
        put("acsp", at: 36)
        put32(1, at: 128)  // one tag
        put("A2B0", at: 132)
        put32(144, at: 136)
        put32(UInt32(bytes.count - 144), at: 140)
        put("mft2", at: 144)
        bytes[152] = 3  // inputs
        bytes[153] = 3  // outputs
        bytes[154] = 255  // grid points
        put32(0x0001_0000, at: 156)  // identity matrix
        put32(0x0001_0000, at: 172)
        put32(0x0001_0000, at: 188)
        bytes[192] = 0
        bytes[193] = 2  // input table entries
        bytes[194] = 0
        bytes[195] = 2  // output table entries
        return Data(bytes)
    }
}
