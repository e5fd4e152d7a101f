#if JXL
    import Foundation
    import Testing

    @testable import Imago

    /// JXLEncoder read back by libjxl's own `djxl` (to PNG, read by PNGDecoder) and by JXLDecoder:
    /// lossless exactly, lossy close and smaller at lower quality, alpha, the profile, and the
    /// quality-to-distance mapping libvips uses.
    @Suite("JPEG XL encoder")
    struct JXLEncoderTests {
        static let djxl = URL(fileURLWithPath: "/usr/bin/djxl")

        /// `data` decoded by djxl to PNG and read back.
        static func throughDJXL(_ data: Data, _ name: String) async throws -> Image {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = directory.appendingPathComponent("\(name).jxl"), output = directory.appendingPathComponent("\(name).png")
            try data.write(to: input)
            let run = try await runProcess(djxl, [input.path, output.path], withStandardError: true)
            #expect(run.status == 0, "djxl: \(String(decoding: run.output, as: UTF8.self))")
            return try PNGDecoder().decode(Data(contentsOf: output), options: DecodingOptions())
        }

        @Test("lossless: djxl and JXLDecoder give back every pixel, with and without alpha")
        func lossless() async throws {
            for (name, image) in try PNGEncoderTests.images() where image.width * image.height <= 64 * 48 {
                let data = try JXLEncoder(lossless: true).encode(image)
                let reference = try await Self.throughDJXL(data, name)
                #expect((reference.width, reference.height) == (image.width, image.height), "\(name)")
                #expect(reference.pixels == image.pixels, "djxl reads \(name)")
                let back = try JXLDecoder().decode(data, options: DecodingOptions())
                #expect(back.pixels == image.pixels && back.metadata.hasAlpha == image.metadata.hasAlpha, "\(name)")
            }
        }

        @Test("lossy: close to the source as djxl reads it, smaller at a lower quality")
        func lossy() async throws {
            let photo = try EncoderTests.photo()
            let high = try JXLEncoder(quality: 90).encode(photo), low = try JXLEncoder(quality: 40).encode(photo)
            #expect(low.count < high.count && high.count < photo.width * photo.height * 3)
            let reference = try await Self.throughDJXL(high, "photo")
            #expect((reference.width, reference.height) == (photo.width, photo.height))
            let difference = zip(reference.pixels, photo.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +) / photo.pixels.count
            #expect(difference <= 3)
            let alpha = try EncoderTests.withAlpha()
            let transparent = try await Self.throughDJXL(try JXLEncoder(quality: 80).encode(alpha), "alpha")
            #expect((transparent.width, transparent.height, transparent.metadata.hasAlpha) == (alpha.width, alpha.height, true))
        }

        @Test("quality maps to distance as libvips' jxlsave: 100 → 0.1, 90 → 1.0, 30 → 6.4, below 30 on cjxl's curve")
        func distance() {
            #expect(abs(JXLEncoder.distance(quality: 100) - 0.1) < 1e-5 && abs(JXLEncoder.distance(quality: 90) - 1.0) < 1e-5)
            #expect(abs(JXLEncoder.distance(quality: 30) - 6.4) < 1e-5 && JXLEncoder.distance(quality: 1) > JXLEncoder.distance(quality: 29))
            #expect(ImageFormat(fileExtension: "jxl") == .jxl && ImageFormat.jxl.encoder(quality: 80) is JXLEncoder)
        }

        @Test("a kept colour profile is written and read back")
        func profile() throws {
            let profileData = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/AdobeRGB1998.icc"))
            var image = try EncoderTests.photo()
            image.metadata.colorProfile = ColorProfile(iccData: profileData)
            let data = try JXLEncoder(lossless: true).encode(image)
            var keep = DecodingOptions()
            keep.colorProfileHandling = .keep
            let back = try JXLDecoder().decode(data, options: keep)
            #expect(back.metadata.colorProfile != nil && back.pixels == image.pixels)
        }
    }
#endif
