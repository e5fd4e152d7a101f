#if TIFF
    import Foundation
    import Testing

    @testable import Imago

    /// TIFFEncoder read back by libtiff's `tiffinfo` (tags) and ImageMagick (pixels), and by
    /// TIFFDecoder: every pixel, alpha, the colour profile, and the bound on what libtiff may write.
    @Suite("TIFF encoder")
    struct TIFFEncoderTests {
        @Test("RGB and RGBA, deflate with the predictor: tiffinfo reads the tags, ImageMagick and TIFFDecoder every pixel")
        func roundTrip() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            for (name, image) in try PNGEncoderTests.images() {
                let data = try TIFFEncoder().encode(image)
                let back = try TIFFDecoder().decode(data, options: DecodingOptions())
                #expect((back.width, back.height, back.metadata.hasAlpha) == (image.width, image.height, image.metadata.hasAlpha), "\(name)")
                // TIFFDecoder reads through libtiff's RGBA interface, which premultiplies alpha: a
                // colour under alpha a comes back within 255 / a.
                #expect(Self.samePremultiplied(back.pixels, image.pixels), "\(name)")
                let file = directory.appendingPathComponent("\(name).tif")
                try data.write(to: file)
                let info = String(decoding: try await runProcess(URL(fileURLWithPath: "/usr/bin/tiffinfo"), [file.path]).output, as: UTF8.self)
                #expect(info.contains("Image Width: \(image.width) Image Length: \(image.height)"), "\(name): \(info)")
                #expect(info.contains("Compression Scheme: AdobeDeflate") && info.contains("Samples/Pixel: \(image.metadata.hasAlpha ? 4 : 3)"))
                if image.metadata.hasAlpha { #expect(info.contains("Extra Samples: 1<unassoc-alpha>"), "\(name): \(info)") }
                let magick = try await runProcess(URL(fileURLWithPath: "/usr/bin/convert"), [file.path, "-depth", "8", "rgba:-"])
                #expect(magick.status == 0 && [UInt8](magick.output) == image.pixels, "ImageMagick reads \(name)")
            }
        }

        /// Whether `read` is `written` up to what premultiplying by alpha loses (exact where opaque).
        static func samePremultiplied(_ read: [UInt8], _ written: [UInt8]) -> Bool {
            guard read.count == written.count else { return false }
            return stride(from: 0, to: written.count, by: 4).allSatisfy { index in
                let alpha = Int(written[index + 3])
                guard Int(read[index + 3]) == alpha else { return false }
                guard alpha > 0 else { return true }
                let tolerance = (255 + alpha - 1) / alpha
                return (0..<3).allSatisfy { abs(Int(read[index + $0]) - Int(written[index + $0])) <= tolerance }
            }
        }

        @Test("a kept colour profile goes in tag 34675 and comes back byte for byte")
        func profile() async throws {
            try await BMPICOEncoderTests.profileSurvives(TIFFEncoder(), TIFFDecoder(), fileExtension: "tif")
        }

        @Test("TIFF is a written format: the table's encoder, the CLI's and the server's extension")
        func table() {
            #expect(ImageFormat(fileExtension: "tif") == .tiff && ImageFormat.tiff.encoder(quality: 80) is TIFFEncoder)
        }
    }
#endif
