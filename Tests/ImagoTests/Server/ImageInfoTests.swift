import Foundation
import Imago
import Testing

@testable import ImagoServer

/// `/info` URLs, imgproxy Pro's syntax: the facts checked against the library's own hashes and
/// against coreutils' digests and plain sums of the pixels.
@Suite("imago serve /info")
struct ImageInfoTests {
    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func path(_ source: String, _ options: [String] = []) -> String {
        "/info" + ServerHarness.path(source, options)
    }

    @Test("by default: the source's bytes, format, media type, size and orientation; a repeat comes from memory")
    func defaults() async throws {
        let data = try Corpus.data("jpeg/video-001.jpeg")
        try await withServer { server in
            let photo = server.origin.serve(data, at: "/photo.jpg")
            let answer = try await server.get(Self.path(photo.absoluteString))
            #expect(answer.status == 200 && answer.header("Content-Type") == "application/json")
            #expect(answer.header("Content-Disposition") == nil && answer.header("ETag") != nil)
            let facts = try Self.json(answer.body)
            #expect(Set(facts.keys) == ["size", "format", "mime_type", "width", "height", "orientation"])
            #expect(facts["size"] as? Int == data.count)
            #expect(facts["format"] as? String == "jpeg" && facts["mime_type"] as? String == "image/jpeg")
            #expect(facts["width"] as? Int == 150 && facts["height"] as? Int == 103 && facts["orientation"] as? Int == 1)
            let again = try await server.get(Self.path(photo.absoluteString))
            #expect(again.body == answer.body)
            #expect(server.origin.log.requests.count == 1)
            let sizeOnly = try Self.json(try await server.get(Self.path(photo.absoluteString, ["f:0", "d:false"])).body)
            #expect(Set(sizeOnly.keys) == ["size"])
        }
    }

    @Test("every fact asked: colour space, sample format, frames, alpha, average, BlurHash, ThumbHash and digests")
    func everything() async throws {
        let data = try Corpus.data("png/basn6a08.png")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("alpha.png")
        try data.write(to: file)
        let image = try DecoderRegistry.standard().decode(data)
        try await withServer { server in
            let source = server.origin.serve(data, at: "/alpha.png")
            let options = ["cs:1", "sf:1", "pn:1", "a:1:1", "avg:1:0", "bh:4:3", "th:1", "chs:md5:sha256", "cb:2"]
            let facts = try Self.json(try await server.get(Self.path(source.absoluteString, options)).body)
            #expect(facts["colorspace"] as? String == "srgb" && facts["sample_format"] as? String == "uchar")
            #expect(facts["pages_number"] as? Int == 1)
            #expect(facts["alpha"] as? Bool == true && facts["transparent"] as? Bool == true)
            #expect(facts["blurhash"] as? String == (try BlurHash(image: image, components: (4, 3))).string)
            #expect(facts["thumb_hash"] as? String == (try ThumbHash(image: image)).bytes.map { String(format: "%02X", $0) }.joined())
            let average = try #require(facts["average"] as? [String: Int])
            for (channel, name) in ["R", "G", "B", "A"].enumerated() {
                let values = stride(from: channel, to: image.pixels.count, by: 4).map { Double(image.pixels[$0]) }
                #expect(average[name] == Int((values.reduce(0, +) / Double(values.count)).rounded()), "\(name)")
            }
            let sums = try #require(facts["hashsums"] as? [String: String])
            for (tool, name) in [("/usr/bin/md5sum", "md5"), ("/usr/bin/sha256sum", "sha256")] {
                let output = try await runProcess(URL(fileURLWithPath: tool), [file.path]).output
                #expect(sums[name] == String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init))
            }
            #expect(sums.count == 2)
        }
    }

    @Test("unknown or malformed info options are a 400 naming them; a bad signature 403, a missing source 404")
    func refused() async throws {
        let signer = try URLSigner(hexKeys: ["736563726574"], hexSalts: ["68656C6C6F"])
        try await withServer { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            for (option, message) in [
                ("zz:1", "unknown info option 'zz'"), ("bh:10:3", "invalid info option 'bh'"), ("s:maybe", "invalid info option 's'"),
                ("chs:crc32", "invalid info option 'chs'"),
            ] {
                let answer = try await server.get(Self.path(photo.absoluteString, [option]))
                #expect(answer.status == 400 && String(decoding: answer.body, as: UTF8.self) == message + "\n", "\(option)")
            }
            #expect(try await server.get(Self.path(server.origin.url("/missing.jpg").absoluteString)).status == 404)
        }
        try await withServer({ $0.signer = signer }) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let unsigned = ServerHarness.path(photo.absoluteString, ["th:1"])
            #expect(try await server.get("/info" + unsigned).status == 403)
            let part = String(unsigned.dropFirst(2))
            let signed = "/info/" + URLSigner.signature(for: part, pair: signer.pairs[0]) + part
            let answer = try await server.get(signed)
            let facts = try Self.json(answer.body)
            #expect(answer.status == 200 && facts["thumb_hash"] != nil)
        }
    }
}
