import Foundation
import Imago
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
        #expect(error.kind == "httpStatus")
        #expect(error.description == "loading https://user:***@example.com/a.jpg failed: HTTP status 404")
        // LocalizedError: the sentence, not "The operation could not be completed".
        #expect((error as any Error).localizedDescription == error.description)
    }
}
