import Foundation
import Testing

@testable import Imago

/// BMPEncoder and ICOEncoder read back by ImageMagick (a reader nobody here wrote) and by Imago's
/// own decoders: every pixel, alpha, odd row lengths, the colour profile, ICO's 256 bound.
@Suite("BMP and ICO encoders")
struct BMPICOEncoderTests {
    static let magick = URL(fileURLWithPath: "/usr/bin/convert")

    /// The images `PNGEncoderTests` uses: photos, alpha, noise, and one-pixel-wide shapes whose
    /// BMP rows need padding.
    static func images() throws -> [(String, Image)] {
        try PNGEncoderTests.images()
    }

    @Test("BMP: 24-bit rows for opaque images, 32-bit with alpha; ImageMagick and BMPDecoder read every pixel back")
    func bmpRoundTrip() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, image) in try Self.images() {
            let data = try BMPEncoder().encode(image)
            // The bits per pixel at offset 28 say which layout was written.
            #expect(data[28] == (image.metadata.hasAlpha ? 32 : 24), "\(name)")
            let back = try BMPDecoder().decode(data, options: DecodingOptions())
            #expect((back.width, back.height, back.metadata.hasAlpha) == (image.width, image.height, image.metadata.hasAlpha), "\(name)")
            #expect(back.pixels == image.pixels, "\(name)")
            let file = directory.appendingPathComponent("\(name).bmp")
            try data.write(to: file)
            let magick = try await runProcess(Self.magick, [file.path, "-depth", "8", "rgba:-"])
            #expect(magick.status == 0 && [UInt8](magick.output) == image.pixels, "ImageMagick reads \(name)")
        }
    }

    @Test("BMP: a kept colour profile is embedded (V5 PROFILE_EMBEDDED) and read back by ImageMagick and BMPDecoder")
    func bmpProfile() async throws {
        try await Self.profileSurvives(BMPEncoder(), BMPDecoder(), fileExtension: "bmp")
    }

    /// A photo carrying Adobe RGB's profile written by `encoder`: `decoder` keeps the profile, and
    /// ImageMagick extracts it byte for byte.
    static func profileSurvives(_ encoder: any ImageEncoding, _ decoder: any ImageDecoding, fileExtension: String) async throws {
        let profileData = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/AdobeRGB1998.icc"))
        var image = try EncoderTests.photo()
        image.metadata.colorProfile = ColorProfile(iccData: profileData)
        let data = try encoder.encode(image)
        var keep = DecodingOptions()
        keep.colorProfileHandling = .keep
        #expect(try decoder.decode(data, options: keep).metadata.colorProfile?.data == profileData)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("profile.\(fileExtension)"), extracted = directory.appendingPathComponent("profile.icc")
        try data.write(to: file)
        #expect(try await runProcess(magick, [file.path, extracted.path]).status == 0)
        #expect(try Data(contentsOf: extracted) == profileData)
    }

    @Test("ICO: one PNG entry; ImageMagick reads it, 256 is written as 0; over 256 a side is refused")
    func icoRoundTrip() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, image) in try Self.images() where image.width <= 256 && image.height <= 256 {
            let data = try ICOEncoder().encode(image)
            #expect(Array(data.prefix(6)) == [0, 0, 1, 0, 1, 0] && data[22...].starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name)")
            let back = try ICODecoder().decode(data, options: DecodingOptions())
            #expect((back.width, back.height) == (image.width, image.height) && back.pixels == image.pixels, "\(name)")
            let file = directory.appendingPathComponent("\(name).ico")
            try data.write(to: file)
            let magick = try await runProcess(Self.magick, [file.path, "-depth", "8", "rgba:-"])
            #expect(magick.status == 0 && [UInt8](magick.output) == image.pixels, "ImageMagick reads \(name)")
        }
        let largest = Image.test(256, 256, [UInt8](repeating: 200, count: 256 * 256 * 4), alpha: true)
        let data = try ICOEncoder().encode(largest)
        #expect(data[6] == 0 && data[7] == 0)
        let file = directory.appendingPathComponent("256.ico")
        try data.write(to: file)
        let size = try await runProcess(URL(fileURLWithPath: "/usr/bin/identify"), ["-format", "%w %h", file.path])
        #expect(String(decoding: size.output, as: UTF8.self) == "256 256")
        let tooWide = Image.test(257, 1, [UInt8](repeating: 0, count: 257 * 4))
        #expect(throws: ImagoError.self) { try ICOEncoder().encode(tooWide) }
    }

    @Test("BMP and ICO are in the format table as written formats: names, extensions and encoders")
    func table() {
        #expect(ImageFormat(fileExtension: "bmp") == .bmp && ImageFormat(fileExtension: "ico") == .ico)
        #expect(ImageFormat.bmp.encoder(quality: 80) is BMPEncoder && ImageFormat.ico.encoder(quality: 80) is ICOEncoder)
    }
}
