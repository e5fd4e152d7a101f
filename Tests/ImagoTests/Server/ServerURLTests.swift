import Foundation
import ImagoServer
import Testing

/// imgproxy's URL format and signatures, without a server.
@Suite("imgproxy URLs and signatures")
struct ServerURLTests {
    /// imgproxy's documented example: key "secret", salt "hello".
    static let documented = try! URLSigner(hexKeys: ["736563726574"], hexSalts: ["68656C6C6F"])
    static let documentedPath =
        "/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"

    @Test("imgproxy's signing example verifies, and its path splits into options, source and extension")
    func documentedExample() throws {
        let path = try ProcessingPath(parsing: Self.documentedPath)
        #expect(path.signature == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(path.options == ["rs:fill:300:400:0", "g:sm"])
        #expect(path.source == "http://example.com/images/curiosity.jpg")
        #expect(path.outputExtension == "png")
        #expect(Self.documented.verify(path.signature, for: path.signedPart))
        #expect(URLSigner.signature(for: path.signedPart, pair: Self.documented.pairs[0]) == path.signature)
    }

    @Test("a tampered path, another key, a damaged signature fail; a rotated-in key passes; without keys anything passes")
    func signatures() throws {
        let path = try ProcessingPath(parsing: Self.documentedPath)
        let tampered = path.signedPart.replacingOccurrences(of: "300", with: "301")
        #expect(!Self.documented.verify(path.signature, for: tampered))
        let other = try URLSigner(hexKeys: ["6f74686572"], hexSalts: ["68656C6C6F"])
        #expect(!other.verify(path.signature, for: path.signedPart))
        #expect(!Self.documented.verify(String(path.signature.dropLast()), for: path.signedPart))
        #expect(!Self.documented.verify("not base64!", for: path.signedPart))
        let rotated = try URLSigner(hexKeys: ["6f74686572", "736563726574"], hexSalts: ["00", "68656C6C6F"])
        #expect(rotated.verify(path.signature, for: path.signedPart))
        #expect(URLSigner(pairs: []).verify("insecure", for: path.signedPart))
        #expect(throws: ServerError.self) { try URLSigner(hexKeys: ["abc"], hexSalts: ["00"]) }
        #expect(throws: ServerError.self) { try URLSigner(hexKeys: ["00"], hexSalts: []) }
    }

    @Test("plain sources are percent-decoded, with or without encoding their slashes; @ names the extension")
    func plainSources() throws {
        let encoded = try ProcessingPath(parsing: "/_/w:100/plain/http%3A%2F%2Fexample.com%2Fa%20b.jpg@webp")
        #expect((encoded.options, encoded.source, encoded.outputExtension) == (["w:100"], "http://example.com/a b.jpg", "webp"))
        let raw = try ProcessingPath(parsing: "/_/plain/https://example.com/images/cat.jpg")
        #expect((raw.options, raw.source, raw.outputExtension) == ([], "https://example.com/images/cat.jpg", nil))
        #expect(raw.signedPart == "/plain/https://example.com/images/cat.jpg")
    }

    @Test("malformed paths are 400s that say what is wrong", arguments: ["", "nothing", "/", "/sig", "/sig/w:10", "/sig/w:10/!!!", "/sig/plain/%zz"])
    func malformed(path: String) {
        #expect { try ProcessingPath(parsing: path) } throws: { ($0 as? ServerError)?.status == 400 }
    }
}
