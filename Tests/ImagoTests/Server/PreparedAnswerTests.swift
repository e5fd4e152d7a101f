import Foundation
import HTTPTypes
import Imago
import Testing

@testable import ImagoServer

/// A kept variant's answer is made once and reused: the same fields as the first answer, 304 and
/// HEAD from it, and made anew when the variant under the key has other bytes.
@Suite("kept answers prepared once")
struct PreparedAnswerTests {
    @Test("a repeat carries the first answer's fields; If-None-Match gives 304, HEAD no body; other bytes get new fields")
    func prepared() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        var configuration = ServerConfiguration()
        configuration.localRoot = root
        let service = try ImageService(configuration: configuration)
        let path = "/_/w:30/fn:cat/plain/local:%2F%2F%2Fphoto.jpg"
        let first = await service.respond(to: ServiceRequest(path: path, accept: "image/webp"))
        #expect(first.status == 200)
        let kept = try #require(service.keptResponse(to: ServiceRequest(path: path, accept: "image/webp")))
        let names = ["ETag", "Cache-Control", "Vary", "Content-Type", "Content-Length", "Content-Disposition"]
        for name in names {
            #expect(kept.headerFields[field(name)] == first.headerFields[field(name)], "\(name)")
        }
        #expect(kept.headerFields[field("Content-Disposition")] == "inline; filename=\"cat.webp\"")
        #expect(kept.body == first.body)
        let etag = try #require(first.headerFields[field("ETag")])
        let notModified = try #require(service.keptResponse(to: ServiceRequest(path: path, accept: "image/webp", ifNoneMatch: etag)))
        #expect(notModified.status == 304 && notModified.body.readableBytes == 0 && notModified.headerFields[field("Content-Length")] == nil)
        let head = try #require(service.keptResponse(to: ServiceRequest(method: "HEAD", path: path, accept: "image/webp")))
        #expect(head.status == 200 && head.body.readableBytes == 0)
        #expect(head.headerFields[field("Content-Length")] == String(first.body.readableBytes))

        // The variant under the path's key made again with other bytes: its own fields, not the old ones.
        let answered = try #require(
            service.answeredPaths.value(
                forKey: Negotiation(
                    ServiceRequest(path: path, accept: "image/webp"), auto: service.configuration.output.autoFormats,
                    enforced: service.configuration.output.enforcedFormats
                ).pathKey(path)))
        service.variants.setValue(EncodedVariant(data: Data([1, 2, 3]), format: .webp, etag: "\"other\""), forKey: answered.variantKey, cost: 3)
        let remade = try #require(service.keptResponse(to: ServiceRequest(path: path, accept: "image/webp")))
        #expect(remade.headerFields[field("ETag")] == "\"other\"" && remade.headerFields[field("Content-Length")] == "3")
    }

    @Test("Accept: a type with q=0 (any spelling) is refused, any other quality accepted")
    func acceptedTypes() {
        let accepted = OutputFormat.acceptedTypes("image/webp;q=0, image/avif; q = 0.000, image/png;q=0.5, IMAGE/JPEG;q=0.01, image/gif;q=0.")
        #expect(accepted == ["image/png", "image/jpeg"])
        #expect(OutputFormat.acceptedTypes("image/avif,image/webp,*/*;q=0.8") == ["image/avif", "image/webp", "*/*"])
        #expect(OutputFormat.acceptedTypes(nil).isEmpty)
    }
}

/// A field name for the tests (the names used are valid).
private func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
