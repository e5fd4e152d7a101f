import Foundation
import Imago
import Testing

/// A decoder for a made-up format, as an app would register one.
private struct SolidDecoder: ImageDecoding {
    let format = ImageFormat(rawValue: "solid")
    func canDecode(_ data: Data) -> Bool { data.starts(with: Array("SOLID".utf8)) }
    func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        try options.check(width: 2, height: 2)
        return Image(
            width: 2, height: 2, frames: [.init(pixels: [UInt8](repeating: 200, count: 16))],
            metadata: ImageMetadata(format: format, originalWidth: 2, originalHeight: 2, hasAlpha: false))
    }
}

@Suite("Decoder registry")
struct DecoderRegistryTests {
    @Test("the decoder is chosen by sniffing the bytes")
    func sniffing() throws {
        let registry = DecoderRegistry.standard()
        #expect(try registry.decode(Corpus.data("png/basn2c08.png")).metadata.format == .png)
        #expect(try registry.decode(Corpus.data("jpeg/video-001.jpeg")).metadata.format == .jpeg)
    }

    @Test(
        "unknown bytes are unsupportedFormat, naming the first bytes seen",
        arguments: [
            (Data("<html><body>".utf8), "3c 68 74 6d 6c 3e 3c 62 6f 64 79 3e"), (Data(), "none"),
        ])
    func unsupported(data: Data, firstBytes: String) {
        do {
            _ = try DecoderRegistry.standard().decode(data)
            Issue.record("decoded garbage")
        } catch {
            #expect(error.code == .unsupportedFormat(firstBytes: firstBytes))
            #expect(error.stage == .decoding)
            #expect(error.description.contains(firstBytes))
        }
    }

    @Test("a user decoder is used for its bytes; the latest registered is asked first")
    func userDecoder() throws {
        let registry = DecoderRegistry.standard()
        registry.register(SolidDecoder())
        let image = try registry.decode(Data("SOLID!".utf8))
        #expect(image.metadata.format.rawValue == "solid")
        #expect(image.pixel(x: 1, y: 1) == (200, 200, 200, 200))
        #expect(try registry.decode(Corpus.data("png/basn2c08.png")).metadata.format == .png)
    }
}
