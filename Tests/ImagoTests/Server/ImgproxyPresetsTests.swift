import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's presets and option allow-lists, read under imgproxy's names as its documentation
/// gives them: `PRESETS` split by `PRESETS_SEPARATOR`, `PRESETS_PATH` one per line with comments,
/// `ONLY_PRESETS`, `INFO_ONLY_PRESETS`, `ALLOWED_PROCESSING_OPTIONS`, `ALLOWED_INFO_OPTIONS`.
@Suite("imgproxy's presets and allowed options")
struct ImgproxyPresetsTests {
    static func decode(_ data: Data) throws -> Image { try DecoderRegistry.standard().decode(data) }

    /// A presets file with `text`, and what to remove after.
    static func presetsFile(_ text: String) throws -> URL {
        let file = try temporaryDirectory().appendingPathComponent("presets.conf")
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test("ARGUMENTS_SEPARATOR divides options in URLs, presets, /info and the allow-list; a colon is then no separator")
    func argumentsSeparator() async throws {
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_ARGUMENTS_SEPARATOR": ",", "IMGPROXY_PRESETS": "small=rs,fit,8,8", "IMGPROXY_INFO_PRESETS": "sized=s,1",
            "IMGPROXY_PRESETS_SEPARATOR": ";",
            "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": "rs,pr,w", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]).configuration
        #expect(configuration.presets["small"] == ["rs,fit,8,8"])
        #expect(throws: ServerError.self) {
            try ServerSettings.configuration(["IMGPROXY_ARGUMENTS_SEPARATOR": ",", "IMGPROXY_PRESETS_SEPARATOR": ";", "IMGPROXY_PRESETS": "small=rs:fit:8:8"])
        }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_ARGUMENTS_SEPARATOR": "/"]) }
        try await withServer({ $0 = configuration }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg").absoluteString
            let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
            let fitted = try await server.get("/_/rs,fit,30,30/plain/" + encoded + "@png")
            #expect(fitted.status == 200)
            #expect(try Self.decode(fitted.body).width == 30)
            let preset = try await server.get("/_/pr,small/plain/" + encoded + "@png")
            #expect(try Self.decode(preset.body).width == 8)
            #expect(try await server.get("/_/q,50/plain/" + encoded).status == 404, "q is not allowed")
            // With the separator a comma, rs:fit:30:30 is no option: the source starts there, and is no base64.
            #expect(try await server.get("/_/rs:fit:30:30/plain/" + encoded).status == 400)
            let info = try await server.get("/info/_/pr,sized/plain/" + encoded)
            #expect(info.status == 200 && String(decoding: info.body, as: UTF8.self).contains("\"width\":150"))
        }
    }

    @Test("PRESETS split by PRESETS_SEPARATOR, then PRESETS_PATH's lines (comments, blanks, a preset naming one defined later); a later line wins")
    func presetsFileAndSeparator() async throws {
        let file = try Self.presetsFile(
            """
            # thumbnails
            thumb=rs:fill:10:6/f:png

              square = pr:later/rs:fill:5:5
            later=q:50
            small=rs:fit:4:4
            """)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_PRESETS": "small=rs:fit:8:8;wide=w:12", "IMGPROXY_PRESETS_SEPARATOR": ";", "IMGPROXY_PRESETS_PATH": file.path,
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]).configuration
        #expect(configuration.presets["thumb"] == ["rs:fill:10:6", "f:png"])
        #expect(configuration.presets["square"] == ["pr:later", "rs:fill:5:5"])
        #expect(configuration.presets["small"] == ["rs:fit:4:4"], "the file's line comes after the variable's definition")
        #expect(configuration.presets["wide"] == ["w:12"])
        try await withServer({ $0 = configuration }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let thumb = try await server.get(ServerHarness.path(source, ["pr:thumb"]))
            #expect(thumb.status == 200 && thumb.header("Content-Type") == "image/png")
            let image = try Self.decode(thumb.body)
            #expect((image.width, image.height) == (10, 6))
            let square = try Self.decode(try await server.get(ServerHarness.path(source, ["preset:square"], extension: "png")).body)
            #expect((square.width, square.height) == (5, 5))
        }
    }

    @Test("a presets file with a bad line stops the server naming the line; a missing file names itself")
    func badPresetsFile() throws {
        let file = try Self.presetsFile("thumb=rs:fill:10:6\n# fine\nbroken\n")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        for (text, expected) in [
            ("thumb=rs:fill:10:6\n# fine\nbroken\n", "line 3"), ("a=w:10\nb=rs:nosuchtype:10\n", "line 2: preset b"), ("x=w:5/plain\n", "line 1"),
            ("a=b=c\n", "line 1"), ("=w:4\n", "line 1"), ("a=pr:missing\n", "line 1: preset a"),
        ] {
            try Data(text.utf8).write(to: file)
            #expect {
                _ = try ServerSettings.configuration(["IMAGO_PRESETS_PATH": file.path])
            } throws: { error in
                guard let error = error as? ServerError else { return false }
                return error.status == 500 && error.message.contains("--presets-path (IMAGO_PRESETS_PATH) \(expected)")
            }
        }
        #expect {
            _ = try ServerSettings.configuration(["IMGPROXY_PRESETS_PATH": "/nonexistent/presets.conf"])
        } throws: { error in
            (error as? ServerError)?.message.contains("IMGPROXY_PRESETS_PATH") == true && (error as? ServerError)?.message.contains("/nonexistent") == true
        }
        #expect(throws: ServerError.self) { _ = try ServerSettings.configuration(["IMGPROXY_ONLY_PRESETS": "maybe"]) }
    }

    @Test("ONLY_PRESETS: the first segment is preset names divided by ':', an option there is an unknown preset; the default preset still applies")
    func onlyPresets() async throws {
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_PRESETS": "default=f:png,thumb=rs:fill:10:6,tiny=w:4", "IMGPROXY_ONLY_PRESETS": "true", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]).configuration
        try await withServer({ $0 = configuration }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
            let thumb = try await server.get("/_/thumb/plain/" + encoded)
            #expect(thumb.status == 200 && thumb.header("Content-Type") == "image/png")
            #expect(try Self.decode(thumb.body).height == 6)
            // Two presets: the later wins where they overlap, as options do.
            let both = try Self.decode(try await server.get("/_/thumb:tiny/plain/" + encoded).body)
            #expect(both.width == 4)
            // The base64 form, and an extension (which wins over the default preset's f:png, as in imgproxy).
            let base64 = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let webp = try await server.get("/_/tiny/" + base64 + ".webp")
            #expect(webp.status == 200 && webp.header("Content-Type") == "image/webp")
            // Options are not presets here.
            #expect(try await server.get("/_/w:10/plain/" + encoded).status == 400)
            #expect(try await server.get("/_/nosuch/plain/" + encoded).status == 400)
        }
        #expect(try ServerSettings.configuration(["IMGPROXY_ONLY_PRESETS": "1"]).configuration.onlyPresets)
    }

    @Test("ALLOWED_PROCESSING_OPTIONS: each name as written (rs is not resize); others are imgproxy's 404 before any fetch; presets use any option")
    func allowedProcessingOptions() async throws {
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": "resize, pr, q", "IMGPROXY_PRESETS": "blurred=bl:2/rs:fit:8:8",
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]).configuration
        try await withServer({ $0 = configuration }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            #expect(try await server.get(ServerHarness.path(source, ["resize:fit:16:16", "q:70"])).status == 200)
            #expect(try await server.get(ServerHarness.path(source, ["pr:blurred"])).status == 200)
            let short = try await server.get(ServerHarness.path(source, ["rs:fit:16:16"]))
            #expect(short.status == 404 && String(decoding: short.body, as: UTF8.self).contains("Forbidden processing option rs"))
            #expect(try await server.get(ServerHarness.path(source, ["q:70", "bl:3"])).status == 404)
            // The extension is not an option.
            #expect(try await server.get(ServerHarness.path(source, ["q:70"], extension: "png")).status == 200)
            // Three variants made; the refused ones fetched nothing.
            #expect(server.origin.log.requests.count == 3)
        }
    }

    @Test("INFO_PRESETS and INFO_PRESETS_PATH, ALLOWED_INFO_OPTIONS and INFO_ONLY_PRESETS (following ONLY_PRESETS unless set) for /info")
    func infoPresetsAndOptions() async throws {
        let file = try Self.presetsFile("# info\nhashes=chs:sha256/size:0\n")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let base = [
            "IMGPROXY_INFO_PRESETS": "default=bh:4:3", "IMGPROXY_INFO_PRESETS_PATH": file.path, "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]
        func facts(_ answer: ServerHarness.Answer) throws -> [String: Any] {
            try #require(JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
        }
        let open = try ServerSettings.configuration(base.merging(["IMGPROXY_ALLOWED_INFO_OPTIONS": "pr,d"]) { $1 }).configuration
        try await withServer({ $0 = open }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let plain = try facts(try await server.get("/info" + ServerHarness.path(source)))
            #expect(plain["blurhash"] is String && plain["size"] is Int && plain["hashsums"] == nil)
            let hashed = try facts(try await server.get("/info" + ServerHarness.path(source, ["pr:hashes", "d:0"])))
            #expect(hashed["hashsums"] is [String: Any] && hashed["size"] == nil && hashed["width"] == nil)
            let forbidden = try await server.get("/info" + ServerHarness.path(source, ["chs:md5"]))
            #expect(forbidden.status == 404 && String(decoding: forbidden.body, as: UTF8.self).contains("Forbidden info option chs"))
            // Image URLs are not restricted by the info list.
            #expect(try await server.get(ServerHarness.path(source, ["rs:fit:8:8"])).status == 200)
        }
        let presetsOnly = try ServerSettings.configuration(base.merging(["IMGPROXY_ONLY_PRESETS": "true", "IMGPROXY_PRESETS": "t=w:8"]) { $1 }).configuration
        #expect(presetsOnly.infoOnlyPresets == nil)
        try await withServer({ $0 = presetsOnly }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
            let hashed = try facts(try await server.get("/info/_/hashes/plain/" + encoded))
            #expect(hashed["hashsums"] is [String: Any] && hashed["blurhash"] is String)
            #expect(try await server.get("/info/_/size:1/plain/" + encoded).status == 400)
        }
        let imagesOnly = try ServerSettings.configuration(
            base.merging(["IMGPROXY_ONLY_PRESETS": "true", "IMGPROXY_INFO_ONLY_PRESETS": "false", "IMGPROXY_PRESETS": "t=w:8"]) { $1 }
        ).configuration
        try await withServer({ $0 = imagesOnly }) { server in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            #expect(try await server.get("/info" + ServerHarness.path(source, ["size:1", "pr:hashes"])).status == 200)
            #expect(try await server.get(ServerHarness.path(source, ["w:8"])).status == 400)
        }
    }
}
