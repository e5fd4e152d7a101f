#if HEIF
    import Foundation
    import Testing

    @testable import Imago

    /// HEIFEncoder read back by libheif's own `heif-convert` (to PNG) and by HEIFDecoder: the size,
    /// the picture (HEVC is lossy: close, and smaller at a lower quality), alpha, the profile.
    @Suite("HEIC encoder")
    struct HEIFEncoderTests {
        /// `data` converted by heif-convert to PNG and read back.
        static func throughHeifConvert(_ data: Data, _ name: String) async throws -> Image {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = directory.appendingPathComponent("\(name).heic"), output = directory.appendingPathComponent("\(name).png")
            try data.write(to: input)
            let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/heif-convert"), [input.path, output.path], withStandardError: true)
            #expect(run.status == 0, "heif-convert: \(String(decoding: run.output, as: UTF8.self))")
            return try PNGDecoder().decode(Data(contentsOf: output), options: DecodingOptions())
        }

        static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
            zip(a, b).map { abs(Int($0) - Int($1)) }.reduce(0, +) / max(1, a.count)
        }

        @Test("a photo and an image with alpha: heif-convert and HEIFDecoder read them close to the source; lower quality is smaller")
        func roundTrip() async throws {
            let photo = try EncoderTests.photo()
            let high = try HEIFEncoder(quality: 90).encode(photo), low = try HEIFEncoder(quality: 30).encode(photo)
            #expect(low.count < high.count)
            let reference = try await Self.throughHeifConvert(high, "photo")
            #expect((reference.width, reference.height) == (photo.width, photo.height))
            #expect(Self.meanDifference(reference.pixels, photo.pixels) <= 4)
            let back = try HEIFDecoder().decode(high, options: DecodingOptions())
            #expect((back.width, back.height, back.metadata.format) == (photo.width, photo.height, .heif))
            #expect(Self.meanDifference(back.pixels, photo.pixels) <= 4)
            let alpha = try EncoderTests.withAlpha()
            let transparent = try await Self.throughHeifConvert(try HEIFEncoder(quality: 90).encode(alpha), "alpha")
            #expect((transparent.width, transparent.height, transparent.metadata.hasAlpha) == (alpha.width, alpha.height, true))
            #expect(Self.meanDifference(transparent.pixels, alpha.pixels) <= 6)
        }

        @Test("odd sides, the colour profile, and the table's encoder")
        func oddSidesAndProfile() async throws {
            var pixels = [UInt8](repeating: 255, count: 33 * 17 * 4)
            for index in stride(from: 0, to: pixels.count, by: 4) { pixels[index] = UInt8(index / 4 % 33 * 7) }
            let odd = Image.test(33, 17, pixels)
            let reference = try await Self.throughHeifConvert(try HEIFEncoder(quality: 95).encode(odd), "odd")
            #expect((reference.width, reference.height) == (33, 17))
            let profileData = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/AdobeRGB1998.icc"))
            var image = try EncoderTests.photo()
            image.metadata.colorProfile = ColorProfile(iccData: profileData)
            var keep = DecodingOptions()
            keep.colorProfileHandling = .keep
            #expect(try HEIFDecoder().decode(HEIFEncoder().encode(image), options: keep).metadata.colorProfile?.data == profileData)
            #expect(ImageFormat(fileExtension: "heic") == .heif && ImageFormat.heif.encoder(quality: 80) is HEIFEncoder)
            #expect(throws: ImagoError.self) { try HEIFEncoder().encode(Image.test(16_385, 1, [UInt8](repeating: 0, count: 16_385 * 4))) }
        }
    }
#endif
