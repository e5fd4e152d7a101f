import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's fallback image (`IMGPROXY_FALLBACK_IMAGE_DATA`, `_PATH`, `_URL`, `_HTTP_CODE`,
/// `_TTL`), as its documentation gives it: a source that cannot be had answers the fallback made
/// with the URL's options, 200 unless the code says otherwise, with `Fallback-Image: 1`, and is
/// never kept as the URL's variant.
@Suite("imgproxy's fallback image")
struct ImgproxyFallbackTests {
    static func decode(_ data: Data) throws -> Image { try DecoderRegistry.standard().decode(data) }

    /// A 40×30 PNG of one colour: the fallback.
    static let fallbackPNG: Data = {
        let pixels = [UInt8]((0..<(40 * 30)).flatMap { _ in [UInt8(200), 20, 20, 255] })
        let metadata = ImageMetadata(format: .png, originalWidth: 40, originalHeight: 30, orientationApplied: .up, hasAlpha: false)
        return (try? PNGEncoder().encode(Image(width: 40, height: 30, frames: [.init(pixels: pixels)], metadata: metadata))) ?? Data()
    }()

    /// A server configured by imgproxy's `variables` alone.
    static func serving(_ variables: [String: String], _ body: (ServerHarness) async throws -> Void) async throws {
        let configuration = try ServerSettings.configuration(variables.merging(["IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1"]) { $1 }).configuration
        try await withServer({ $0 = configuration }, body)
    }

    @Test(
        "FALLBACK_IMAGE_DATA: a missing source answers the fallback at the URL's size and format, 200, Fallback-Image: 1; once the source exists it is answered"
    )
    func missingSourceThenFound() async throws {
        try await Self.serving(["IMGPROXY_FALLBACK_IMAGE_DATA": Self.fallbackPNG.base64EncodedString()]) { server in
            let path = ServerHarness.path(server.origin.url("/later.jpg").absoluteString, ["rs:fill:10:6"], extension: "webp")
            let fallback = try await server.get(path)
            #expect(fallback.status == 200 && fallback.header("Fallback-Image") == "1" && fallback.header("Content-Type") == "image/webp")
            let image = try Self.decode(fallback.body)
            #expect((image.width, image.height) == (10, 6))
            let pixel = image.frames[0].pixels
            #expect(pixel[0] > 150 && pixel[1] < 60, "the fallback's red, not another image")
            // Again: still the fallback (from memory), the source asked again.
            #expect(try await server.get(path).header("Fallback-Image") == "1")
            #expect(server.origin.log.requests.filter { $0.path == "/later.jpg" }.count == 2)
            // The source appears: its own image, not the fallback kept under the URL.
            server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/later.jpg")
            let found = try await server.get(path)
            #expect(found.status == 200 && found.header("Fallback-Image") == nil)
            #expect(found.body != fallback.body)
            #expect(found.header("Cache-Control") == fallback.header("Cache-Control"))
        }
    }

    @Test("undecodable bytes, a source over the URL's max_src_file_size, a source past the download timeout: each answers the fallback")
    func otherSourceFailures() async throws {
        try await Self.serving(["IMGPROXY_FALLBACK_IMAGE_DATA": Self.fallbackPNG.base64EncodedString(), "IMGPROXY_DOWNLOAD_TIMEOUT": "1"]) { server in
            let garbage = server.origin.serve(Data("this is not an image at all".utf8), at: "/garbage.jpg").absoluteString
            let large = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/large.jpg").absoluteString
            let held = server.origin.url("/held.jpg?gate=never").absoluteString
            server.origin.setRoute("/held.jpg", .init(body: try Corpus.data("jpeg/video-001.jpeg")))
            for path in [
                ServerHarness.path(garbage, ["w:8"]), ServerHarness.path(large, ["w:8", "msfs:100"]), ServerHarness.path(held, ["w:8"]),
            ] {
                let answer = try await server.get(path)
                #expect(
                    answer.status == 200 && answer.header("Fallback-Image") == "1",
                    "\(path): \(answer.status) \(String(decoding: answer.body.prefix(80), as: UTF8.self))")
                #expect(try Self.decode(answer.body).width == 8)
            }
            // Options that cannot be applied are the client's fault, not the source's: no fallback.
            let bad = try await server.get(ServerHarness.path(large, ["rs:fit:0:0", "c:0:0:nowhere"]))
            #expect(bad.header("Fallback-Image") == nil)
        }
    }

    @Test("FALLBACK_IMAGE_HTTP_CODE: 0 answers the failure's own status with the fallback, another code that code; FALLBACK_IMAGE_TTL sets max-age")
    func statusAndTTL() async throws {
        let data = Self.fallbackPNG.base64EncodedString()
        try await Self.serving(["IMGPROXY_FALLBACK_IMAGE_DATA": data, "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "0", "IMGPROXY_FALLBACK_IMAGE_TTL": "60"]) {
            server in
            let missing = try await server.get(ServerHarness.path(server.origin.url("/none.jpg").absoluteString, ["w:8"]))
            #expect(missing.status == 404 && missing.header("Fallback-Image") == "1" && missing.header("Cache-Control") == "public, max-age=60")
            #expect(try Self.decode(missing.body).width == 8)
            let found = try await server.get(ServerHarness.path(server.origin.serve(Self.fallbackPNG, at: "/a.png").absoluteString, ["w:8"]))
            #expect(found.status == 200 && found.header("Cache-Control") == ServerConfiguration().cacheControl)
        }
        try await Self.serving(["IMGPROXY_FALLBACK_IMAGE_DATA": data, "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "503"]) { server in
            let missing = try await server.get(ServerHarness.path(server.origin.url("/none.jpg").absoluteString, ["w:8"]))
            #expect(missing.status == 503 && missing.header("Fallback-Image") == "1")
        }
    }

    @Test("FALLBACK_IMAGE_PATH is read at start; FALLBACK_IMAGE_URL fetched when needed, and when it fails too the source's failure is the answer")
    func pathAndURL() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("fallback.png")
        try Self.fallbackPNG.write(to: file)
        try await Self.serving(["IMGPROXY_FALLBACK_IMAGE_PATH": file.path]) { server in
            try FileManager.default.removeItem(at: file)
            let answer = try await server.get(ServerHarness.path(server.origin.url("/none.jpg").absoluteString, ["w:12"]))
            #expect(answer.status == 200 && answer.header("Fallback-Image") == "1" && answer.header("Content-Type") == "image/png")
            #expect(try Self.decode(answer.body).width == 12)
        }
        let origin = try await TestOrigin.start()
        let fallbackURL = origin.serve(Self.fallbackPNG, at: "/fallback.png")
        try await Self.serving(["IMGPROXY_FALLBACK_IMAGE_URL": fallbackURL.absoluteString]) { server in
            let answer = try await server.get(ServerHarness.path(server.origin.url("/none.jpg").absoluteString, ["w:12"]))
            #expect(answer.status == 200 && answer.header("Fallback-Image") == "1")
            origin.setRoute("/fallback.png", .init(body: Data("gone".utf8)))
            // Other options: a fallback variant not made before, so the fallback is fetched again.
            let both = try await server.get(ServerHarness.path(server.origin.url("/none2.jpg").absoluteString, ["w:13"]))
            #expect(both.status == 404 && both.header("Fallback-Image") == nil)
        }
        try await origin.shutdown()
    }

    @Test("a fallback that cannot be used stops the server naming it: a missing file, bytes that are no image, base64 that is not, two places, a bad code")
    func badSettings() throws {
        func refused(_ variables: [String: String], naming text: String) {
            #expect {
                let configuration = try ServerSettings.configuration(variables).configuration
                _ = try ImageService(configuration: configuration)
            } throws: { error in
                guard let error = error as? ServerError else { return false }
                return error.status == 500 && error.message.contains(text)
            }
        }
        refused(["IMGPROXY_FALLBACK_IMAGE_PATH": "/nonexistent/fallback.png"], naming: "/nonexistent/fallback.png")
        refused(["IMGPROXY_FALLBACK_IMAGE_DATA": Data("no image".utf8).base64EncodedString()], naming: "fallback image")
        refused(["IMGPROXY_FALLBACK_IMAGE_DATA": "%%%"], naming: "IMGPROXY_FALLBACK_IMAGE_DATA")
        refused(["IMGPROXY_FALLBACK_IMAGE_URL": "ftp://example.com/a.png"], naming: "IMGPROXY_FALLBACK_IMAGE_URL")
        refused(["IMAGO_FALLBACK_IMAGE_URL": "https://example.com/a.png", "IMAGO_FALLBACK_IMAGE_PATH": "/a.png"], naming: "set one of")
        refused(["IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "42"], naming: "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE")
        refused(["IMGPROXY_FALLBACK_IMAGE_TTL": "-1"], naming: "IMGPROXY_FALLBACK_IMAGE_TTL")
    }

    @Test("what counts as a source that cannot be had: loading and decoding failures and source limits, not memory, deadlines, queues or options")
    func coveredFailures() {
        let url = URL(string: "https://example.com/a.jpg")
        #expect(FallbackImage.covers(ImagoError(.httpStatus(404), url: url)))
        #expect(FallbackImage.covers(ImagoError(.timedOut, url: url)))
        #expect(FallbackImage.covers(ImagoError(.invalidImage("bad"), url: url, stage: .decoding)))
        #expect(FallbackImage.covers(ImagoError(.imageTooLarge(width: 9000, height: 9000, limit: .pixels(1000)), url: url, stage: .decoding)))
        #expect(FallbackImage.covers(ServerError(status: 422, ServerError.invalidSource)))
        #expect(!FallbackImage.covers(ImagoError(.imageTooLarge(width: 9000, height: 9000, limit: .decodeMemoryBudget(1000)), url: url, stage: .decoding)))
        #expect(!FallbackImage.covers(ImagoError(.processingFailed("crop"), url: url, stage: .processing)))
        #expect(!FallbackImage.covers(ImagoError(.cancelled, url: url)))
        #expect(!FallbackImage.covers(ServerError.workTimedOut))
        #expect(!FallbackImage.covers(ServerError.queueFull))
        #expect(!FallbackImage.covers(ServerError.overloaded))
    }
}
