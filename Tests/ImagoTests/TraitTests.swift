import Foundation
import Imago
import Testing

/// The optional codecs this test run was built with. Their suites are compiled only with their
/// trait, so without it they would vanish from the output without a word: here each trait's test
/// is skipped with the reason instead, and with the trait it checks the decoder is registered.
@Suite("Optional codecs (traits)")
struct TraitTests {
    #if TIFF
        static let tiff = true
    #else
        static let tiff = false
    #endif
    #if AVIF
        static let avif = true
    #else
        static let avif = false
    #endif
    #if HEIF
        static let heif = true
    #else
        static let heif = false
    #endif
    #if JXL
        static let jxl = true
    #else
        static let jxl = false
    #endif

    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/seeds").standardized

    /// Decodes a seed file of `format` through the standard registry.
    static func expectDecoded(_ path: String, as format: ImageFormat) throws {
        let image = try DecoderRegistry.standard().decode(try Data(contentsOf: seeds.appendingPathComponent(path)))
        #expect(image.metadata.format == format && image.width > 0)
    }

    @Test("TIFF: the decoder is registered, and the TIFF suites run", .enabled(if: tiff, "built without the TIFF trait: the TIFF suites are left out"))
    func tiffBuilt() throws { try Self.expectDecoded("tiff/rgb.tif", as: .tiff) }

    @Test("AVIF: the decoder is registered, and the AVIF suites run", .enabled(if: avif, "built without the AVIF trait: the AVIF suites are left out"))
    func avifBuilt() throws { try Self.expectDecoded("avif/lossy.avif", as: .avif) }

    @Test("HEIF: the decoder is registered, and the HEIF suites run", .enabled(if: heif, "built without the HEIF trait: the HEIF suites are left out"))
    func heifBuilt() throws { try Self.expectDecoded("heif/lossy.heic", as: .heif) }

    @Test("JPEG XL: the decoder is registered, and the JPEG XL suites run", .enabled(if: jxl, "built without the JXL trait: the JPEG XL suites are left out"))
    func jxlBuilt() throws { try Self.expectDecoded("jxl/codestream.jxl", as: .jxl) }
}
