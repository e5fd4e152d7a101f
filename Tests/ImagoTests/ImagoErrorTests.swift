import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Imago
import ImagoTestSupport
import Testing

@Suite("ImagoError")
struct ImagoErrorTests {
    @Test("codes compare with their details, name their kind, and expose their details")
    func codes() {
        let notFound = ImagoError.Code.httpStatus(404)
        #expect(notFound == .httpStatus(404))
        #expect(notFound != .httpStatus(500))
        #expect(notFound != .timedOut)
        #expect(notFound.name == "httpStatus")
        #expect(notFound.httpStatus == 404)
        #expect(ImagoError.Code.timedOut.httpStatus == nil)
        let tooLarge = ImagoError.Code.imageTooLarge(width: 70_000, height: 10, limit: .side(65_535))
        #expect(tooLarge.imageSize == PixelSize(width: 70_000, height: 10))
        #expect(tooLarge.limit == .side(65_535))
        #expect(ImagoError.Code.invalidImage("JPEG: bad Huffman table").message == "JPEG: bad Huffman table")
        #expect(ImagoError.Code.truncated(received: 10, expected: 20).receivedBytes?.expected == 20)
        let error = ImagoError(.httpStatus(404), url: URL(string: "https://user:secret@example.com/a.jpg"))
        #expect(error.kind == .httpStatus && error.kind.name == "httpStatus")
        #expect(error.description == "loading https://user:***@example.com/a.jpg failed: HTTP status 404")
        // LocalizedError: the sentence, not "The operation could not be completed".
        #expect((error as any Error).localizedDescription == error.description)
    }

    @Test("messages in the user's words: a refused connection names the host, port and why; a relative URL says it is not absolute")
    func readableMessages() async throws {
        let (port, socket) = try refusingPort()
        defer { close(socket) }
        let pipeline = ImagePipeline()
        let refused = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "http://127.0.0.1:\(port)/a.jpg")!)))
        #expect(refused.code == .connectionFailed)
        #expect(refused.description == "loading http://127.0.0.1:\(port)/a.jpg failed: could not connect to 127.0.0.1:\(port): connection refused")
        #expect(refused.localizedDescription == refused.description)
        #expect(refused.underlying != nil)

        let relative = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "images/a.jpg")!)))
        #expect(relative.code == .noLoader)
        #expect(relative.description == "loading images/a.jpg failed: not an absolute URL: it has no scheme such as https:")
        let unknown = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "gopher://example.com/a.jpg")!)))
        #expect(unknown.description.hasSuffix("no loader for the scheme 'gopher'"))
        await pipeline.waitUntilIdle()
    }
}
