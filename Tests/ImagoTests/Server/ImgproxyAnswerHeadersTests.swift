import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's variables for what an answer says and which sources a URL takes, read under
/// imgproxy's names as its documentation gives them: `USE_ETAG`, `ETAG_BUSTER`,
/// `SET_CANONICAL_HEADER`, `ENABLE_DEBUG_HEADERS`, `BASE64_URL_INCLUDES_FILENAME`,
/// `MAX_ANIMATION_FRAME_RESOLUTION`, and a source's 4xx passed on, its 5xx a 502 (imgproxy 3.31).
@Suite("imgproxy's answer headers and source statuses")
struct ImgproxyAnswerHeadersTests {
    /// A server configured by imgproxy's `variables` alone (loopback sources allowed).
    static func serving(_ variables: [String: String], _ body: (ServerHarness) async throws -> Void) async throws {
        let configuration = try ServerSettings.configuration(variables.merging(["IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1"]) { $1 }).configuration
        try await withServer({ $0 = configuration }, body)
    }

    @Test("ETAG_BUSTER makes every ETag new; USE_ETAG=false sends none and answers If-None-Match with the image")
    func etags() async throws {
        var etags: [String] = []
        for buster in ["", "2026-12"] {
            try await Self.serving(buster.isEmpty ? [:] : ["IMGPROXY_ETAG_BUSTER": buster]) { server in
                let path = ServerHarness.path(server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg").absoluteString, ["w:20"])
                let answer = try await server.get(path)
                let etag = try #require(answer.header("ETag"))
                etags.append(etag)
                #expect(try await server.get(path, headers: [("If-None-Match", etag)]).status == 304)
            }
        }
        #expect(etags.count == 2 && etags[0] != etags[1])
        try await Self.serving(["IMGPROXY_USE_ETAG": "false"]) { server in
            let path = ServerHarness.path(server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg").absoluteString, ["w:20"])
            let answer = try await server.get(path)
            #expect(answer.status == 200 && answer.header("ETag") == nil)
            let again = try await server.get(path, headers: [("If-None-Match", etags[0]), ("If-None-Match", "*")])
            #expect(again.status == 200 && again.body == answer.body)
        }
    }

    @Test(
        "USE_LAST_MODIFIED: the source's Last-Modified, If-Modified-Since answered 304 (If-None-Match first); LAST_MODIFIED_BUSTER lifts an older one; off, none"
    )
    func lastModified() async throws {
        let modified = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        func serve(_ server: ServerHarness) throws -> String {
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.lastModified = modified
            server.origin.setRoute("/m.jpg", route)
            return ServerHarness.path(server.origin.url("/m.jpg").absoluteString, ["w:20"])
        }
        try await Self.serving(["IMGPROXY_USE_LAST_MODIFIED": "true"]) { server in
            let path = try serve(server)
            let answer = try await server.get(path)
            #expect(answer.status == 200 && answer.header("Last-Modified") == "Thu, 01 Jan 2026 00:00:00 GMT")
            for (since, status) in [
                ("Thu, 01 Jan 2026 00:00:00 GMT", 304), ("Fri, 02 Jan 2026 00:00:00 GMT", 304), ("Wed, 31 Dec 2025 23:59:59 GMT", 200), ("yesterday", 200),
            ] {
                let again = try await server.get(path, headers: [("If-Modified-Since", since)])
                #expect(again.status == status, "\(since)")
                if status == 304 { #expect(again.body.isEmpty && again.header("Last-Modified") == "Thu, 01 Jan 2026 00:00:00 GMT") }
            }
            // An If-None-Match that does not match wins over a later If-Modified-Since.
            let both = try await server.get(path, headers: [("If-None-Match", "\"other\""), ("If-Modified-Since", "Fri, 02 Jan 2026 00:00:00 GMT")])
            #expect(both.status == 200)
        }
        try await Self.serving(["IMGPROXY_USE_LAST_MODIFIED": "1", "IMGPROXY_LAST_MODIFIED_BUSTER": "2026-06-01T12:00:00Z"]) { server in
            let path = try serve(server)
            #expect(try await server.get(path).header("Last-Modified") == "Mon, 01 Jun 2026 12:00:00 GMT")
            // A copy from before the buster is not current; one from after it is.
            #expect(try await server.get(path, headers: [("If-Modified-Since", "Fri, 02 Jan 2026 00:00:00 GMT")]).status == 200)
            #expect(try await server.get(path, headers: [("If-Modified-Since", "Mon, 01 Jun 2026 12:00:00 GMT")]).status == 304)
        }
        try await Self.serving([:]) { server in
            let path = try serve(server)
            #expect(try await server.get(path).header("Last-Modified") == nil)
            #expect(try await server.get(path, headers: [("If-Modified-Since", "Fri, 02 Jan 2026 00:00:00 GMT")]).status == 200)
        }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_LAST_MODIFIED_BUSTER": "June 1st"]) }
    }

    @Test("CACHE_CONTROL_PASSTHROUGH: the source's Cache-Control, else its Expires, in place of the server's; the URL's own wins; off, the server's")
    func cacheControlPassthrough() async throws {
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        func route(_ headers: [(name: String, value: String)]) -> TestOrigin.Route {
            var route = TestOrigin.Route(body: photo)
            route.headers = headers
            return route
        }
        try await Self.serving(["IMGPROXY_CACHE_CONTROL_PASSTHROUGH": "true", "IMGPROXY_TTL": "600"]) { server in
            server.origin.setRoute("/c.jpg", route([("Cache-Control", "public, max-age=42")]))
            server.origin.setRoute("/e.jpg", route([("Expires", "Thu, 01 Jan 2037 00:00:00 GMT")]))
            server.origin.setRoute("/n.jpg", route([]))
            let cached = try await server.get(ServerHarness.path(server.origin.url("/c.jpg").absoluteString, ["w:20"]))
            #expect(cached.header("Cache-Control") == "public, max-age=42" && cached.header("Expires") == nil)
            let expiring = try await server.get(ServerHarness.path(server.origin.url("/e.jpg").absoluteString, ["w:20"]))
            #expect(expiring.header("Expires") == "Thu, 01 Jan 2037 00:00:00 GMT" && expiring.header("Cache-Control") == nil)
            let plain = try await server.get(ServerHarness.path(server.origin.url("/n.jpg").absoluteString, ["w:20"]))
            #expect(plain.header("Cache-Control") == "max-age=600, public")
            // The same path again, kept: the same fields.
            #expect(
                try await server.get(ServerHarness.path(server.origin.url("/c.jpg").absoluteString, ["w:20"])).header("Cache-Control") == "public, max-age=42")
        }
        try await Self.serving(["IMGPROXY_TTL": "600"]) { server in
            server.origin.setRoute("/c.jpg", route([("Cache-Control", "public, max-age=42")]))
            let answer = try await server.get(ServerHarness.path(server.origin.url("/c.jpg").absoluteString, ["w:20"]))
            #expect(answer.header("Cache-Control") == "max-age=600, public")
        }
    }

    @Test(
        "SET_CANONICAL_HEADER: Link names an http(s) source, without its user and password; ENABLE_DEBUG_HEADERS: the source's bytes and sizes and the result's"
    )
    func canonicalAndDebug() async throws {
        try await Self.serving(["IMGPROXY_SET_CANONICAL_HEADER": "true", "IMGPROXY_ENABLE_DEBUG_HEADERS": "1"]) { server in
            let photo = try Corpus.data("jpeg/video-001.jpeg")
            let source = server.origin.serve(photo, at: "/a.jpg")
            var parts = try #require(URLComponents(url: source, resolvingAgainstBaseURL: false))
            (parts.user, parts.password) = ("user", "secret")
            for url in [source, try #require(parts.url)] {
                let answer = try await server.get(ServerHarness.path(url.absoluteString, ["rs:fit:50:50"]))
                #expect(answer.status == 200)
                #expect(answer.header("Link") == "<\(source.absoluteString)>; rel=\"canonical\"")
                #expect(answer.header("X-Origin-Content-Length") == "\(photo.count)")
                #expect(answer.header("X-Origin-Width") == "150" && answer.header("X-Origin-Height") == "103")
                #expect(answer.header("X-Result-Width") == "50" && answer.header("X-Result-Height") == "34")
            }
        }
        try await Self.serving([:]) { server in
            let answer = try await server.get(ServerHarness.path(server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg").absoluteString))
            #expect(answer.header("Link") == nil && answer.header("X-Origin-Width") == nil)
        }
    }

    @Test("BASE64_URL_INCLUDES_FILENAME: the last segment after a split base64 source is a file name; off, it is part of the source")
    func base64Filename() async throws {
        func encoded(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .trimmingCharacters(in: ["="])
        }
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        try await Self.serving(["IMGPROXY_BASE64_URL_INCLUDES_FILENAME": "1"]) { server in
            let source = encoded(server.origin.serve(photo, at: "/a.jpg").absoluteString)
            let split = source.prefix(12) + "/" + source.dropFirst(12)
            let answer = try await server.get("/_/w:30/\(split).png/holiday-photo.jpg")
            #expect(answer.status == 200 && answer.header("Content-Type") == "image/png")
        }
        try await Self.serving([:]) { (server: ServerHarness) async throws in
            let source = encoded(server.origin.serve(photo, at: "/a.jpg").absoluteString)
            #expect(try await server.get("/_/w:30/\(source).png/holiday-photo.jpg").status == 400)
        }
    }

    @Test("MAX_ANIMATION_FRAME_RESOLUTION: an animation whose frames are larger is 422 Invalid source image; a still image of that size is not limited")
    func frameResolution() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let gif = try Data(contentsOf: try await GIFDecoderTests.animationFile(disposal: "none", in: directory))
        try await Self.serving(["IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": "0.01"]) { server in
            let animated = try await server.get(ServerHarness.path(server.origin.serve(gif, at: "/anim.gif").absoluteString, ["w:40"]))
            #expect(animated.status == 422 && String(decoding: animated.body, as: UTF8.self).contains("Invalid source image"))
            let still = try await server.get(ServerHarness.path(server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg").absoluteString))
            #expect(still.status == 200)
        }
        try await Self.serving(["IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": "0.02"]) { (server: ServerHarness) async throws in
            #expect(try await server.get(ServerHarness.path(server.origin.serve(gif, at: "/anim.gif").absoluteString, ["w:40"])).status == 200)
        }
    }

    @Test("a source's 4xx is passed on (404 'source not found'), its 5xx is a 502, as imgproxy 3.31 answers")
    func sourceStatuses() async throws {
        try await Self.serving([:]) { server in
            for (status, expected) in [(403, 403), (401, 401), (451, 451), (410, 404), (404, 404), (500, 502), (503, 502)] {
                var route = TestOrigin.Route(body: Data("no".utf8))
                route.status = status
                server.origin.setRoute("/s\(status)", route)
                let answer = try await server.get(ServerHarness.path(server.origin.url("/s\(status)").absoluteString))
                #expect(answer.status == expected, "source \(status)")
            }
        }
    }
}

/// imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`: `Sec-CH-DPR`/`DPR` and `Sec-CH-Width`/`Width` as the
/// request's `dpr` and `width` (CSS pixels: the width over the DPR) unless the URL sets them.
@Suite("imgproxy's client hints")
struct ImgproxyClientHintsTests {
    static func width(_ answer: ServerHarness.Answer) throws -> Int { try DecoderRegistry.standard().decode(answer.body).width }

    @Test("hints set dpr and width, the URL's own options win, each hint set is its own kept answer, Vary names them; off, they are ignored")
    func hints() async throws {
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_ENABLE_CLIENT_HINTS": "true"]) { server in
            let path = ServerHarness.path(server.origin.serve(photo, at: "/a.jpg").absoluteString)
            let chromium = try await server.get(path, headers: [("Sec-CH-DPR", "2"), ("Sec-CH-Width", "100")])
            #expect(try Self.width(chromium) == 100)
            #expect(chromium.header("Vary") == "Accept, Sec-CH-DPR, DPR, Sec-CH-Width, Width")
            // The same path with other hints, after the first is kept: its own answer.
            #expect(try Self.width(try await server.get(path, headers: [("DPR", "1.5"), ("Width", "90")])) == 90)
            #expect(try Self.width(try await server.get(path, headers: [("Sec-CH-DPR", "2"), ("Sec-CH-Width", "100")])) == 100)
            // Sec-CH-* win over the older names; a DPR out of range is no hint.
            #expect(try Self.width(try await server.get(path, headers: [("Sec-CH-Width", "40"), ("Width", "120")])) == 40)
            #expect(try Self.width(try await server.get(path, headers: [("DPR", "9"), ("Width", "60")])) == 60)
            // The URL's width stands; the hinted DPR multiplies it.
            let sized = ServerHarness.path(server.origin.url("/a.jpg").absoluteString, ["w:20"])
            #expect(try Self.width(try await server.get(sized, headers: [("DPR", "2"), ("Width", "140")])) == 40)
            #expect(try Self.width(try await server.get(sized)) == 20)
        }
        try await ImgproxyAnswerHeadersTests.serving([:]) { server in
            let path = ServerHarness.path(server.origin.serve(photo, at: "/a.jpg").absoluteString)
            let answer = try await server.get(path, headers: [("Sec-CH-DPR", "2"), ("Sec-CH-Width", "100")])
            #expect(try Self.width(answer) == 150 && answer.header("Vary") == "Accept")
        }
    }
}

/// imgproxy's cookie passthrough: `COOKIE_PASSTHROUGH` (the cookies of the host asked go to a
/// source on that host), `COOKIE_BASE_URL`, `COOKIE_PASSTHROUGH_ALL`.
@Suite("imgproxy's cookie passthrough")
struct ImgproxyCookieTests {
    /// The `Cookie` header of each request the origin saw for `path`.
    static func cookies(_ origin: TestOrigin, _ path: String) -> [String?] {
        origin.log.requests.filter { $0.path == path }.map { $0.header("Cookie") }
    }

    @Test("cookies go to a source on the host the client asked, well-formed pairs only; each client's cookies are their own variant; off, none go")
    func passthrough() async throws {
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_COOKIE_PASSTHROUGH": "true"]) { (server: ServerHarness) async throws in
            let source = server.origin.serve(photo, at: "/a.jpg")
            let path = ServerHarness.path(source.absoluteString, ["w:30"])
            // The client asked the source's own host (as behind one domain): its cookies go on.
            let host = "127.0.0.1"
            #expect(
                try await server.get(path, headers: [("X-Forwarded-Host", host), ("Cookie", "session=abc; garbage; bad name=x; theme=dark")]).status == 200)
            #expect(try await server.get(path, headers: [("X-Forwarded-Host", host), ("Cookie", "session=other")]).status == 200)
            // The same cookies again: the kept variant, no fetch.
            #expect(
                try await server.get(path, headers: [("X-Forwarded-Host", host), ("Cookie", "session=abc; garbage; bad name=x; theme=dark")]).status == 200)
            // Another host asked: its cookies are not the source's.
            #expect(try await server.get(path, headers: [("X-Forwarded-Host", "images.example.com"), ("Cookie", "session=leak")]).status == 200)
            #expect(Self.cookies(server.origin, "/a.jpg") == ["session=abc; theme=dark", "session=other", nil])
        }
        try await ImgproxyAnswerHeadersTests.serving([:]) { (server: ServerHarness) async throws in
            let path = ServerHarness.path(server.origin.serve(photo, at: "/a.jpg").absoluteString, ["w:30"])
            #expect(try await server.get(path, headers: [("X-Forwarded-Host", "127.0.0.1"), ("Cookie", "session=abc")]).status == 200)
            #expect(Self.cookies(server.origin, "/a.jpg") == [nil])
        }
    }

    @Test("COOKIE_BASE_URL names whose cookies they are; COOKIE_PASSTHROUGH_ALL sends them to any source; a bad base URL stops the server")
    func baseURLAndAll() async throws {
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_COOKIE_PASSTHROUGH": "1", "IMGPROXY_COOKIE_BASE_URL": "https://127.0.0.1/app/"]) {
            (server: ServerHarness) async throws in
            let path = ServerHarness.path(server.origin.serve(photo, at: "/a.jpg").absoluteString, ["w:30"])
            #expect(try await server.get(path, headers: [("Cookie", "session=base")]).status == 200)
            #expect(Self.cookies(server.origin, "/a.jpg") == ["session=base"])
        }
        try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_COOKIE_PASSTHROUGH": "1", "IMGPROXY_COOKIE_PASSTHROUGH_ALL": "1"]) {
            (server: ServerHarness) async throws in
            let path = ServerHarness.path(server.origin.serve(photo, at: "/a.jpg").absoluteString, ["w:30"])
            #expect(try await server.get(path, headers: [("X-Forwarded-Host", "elsewhere.example.com"), ("Cookie", "session=all")]).status == 200)
            #expect(Self.cookies(server.origin, "/a.jpg") == ["session=all"])
        }
        #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_COOKIE_BASE_URL": "not a url"]) }
    }
}

/// imgproxy's server defaults for what URLs may say: `AUTO_ROTATE`, `ALLOW_SECURITY_OPTIONS`,
/// `DEVELOPMENT_ERRORS_MODE`.
@Suite("imgproxy's URL defaults")
struct ImgproxyURLDefaultsTests {
    static func size(_ answer: ServerHarness.Answer) throws -> (Int, Int) {
        let image = try DecoderRegistry.standard().decode(answer.body)
        return (image.width, image.height)
    }

    @Test("AUTO_ROTATE=false: an EXIF-turned photo keeps its stored orientation unless the URL says ar:1; the default turns it")
    func autoRotate() async throws {
        let turned = try await OrientationTests.tagged(6)
        // Decoded upright; stored turned a quarter (orientation 6), so its sides are swapped.
        let upright = try DecoderRegistry.standard().decode(turned)
        let stored = (width: upright.height, height: upright.width)
        #expect(stored.width != stored.height)
        try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_AUTO_ROTATE": "false"]) { (server: ServerHarness) async throws in
            let source = server.origin.serve(turned, at: "/turned.jpg").absoluteString
            let plain = try Self.size(try await server.get(ServerHarness.path(source, [], extension: "png")))
            #expect(plain == (stored.width, stored.height))
            let rotated = try Self.size(try await server.get(ServerHarness.path(source, ["ar:1"], extension: "png")))
            #expect(rotated == (stored.height, stored.width))
        }
        try await ImgproxyAnswerHeadersTests.serving([:]) { (server: ServerHarness) async throws in
            let source = server.origin.serve(turned, at: "/turned.jpg").absoluteString
            #expect(try Self.size(try await server.get(ServerHarness.path(source, [], extension: "png"))) == (stored.height, stored.width))
        }
    }

    @Test("ALLOW_SECURITY_OPTIONS=false: msr, msfs, maf, mafr and mrd are imgproxy's 403 in a URL and stop the server in a preset; the default allows them")
    func securityOptions() async throws {
        try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_ALLOW_SECURITY_OPTIONS": "false"]) { (server: ServerHarness) async throws in
            let source = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg").absoluteString
            for option in ["msr:1", "max_src_file_size:100", "maf:1", "mafr:1", "mrd:10"] {
                let answer = try await server.get(ServerHarness.path(source, [option]))
                #expect(
                    answer.status == 403 && String(decoding: answer.body, as: UTF8.self).contains("Security processing options are not allowed"), "\(option)")
            }
            #expect(try await server.get(ServerHarness.path(source, ["w:10"])).status == 200)
        }
        #expect(throws: ServerError.self) {
            try ServerSettings.configuration(["IMGPROXY_ALLOW_SECURITY_OPTIONS": "false", "IMGPROXY_PRESETS": "small=w:10/mrd:5"])
        }
        #expect(try ServerSettings.configuration(["IMGPROXY_PRESETS": "small=w:10/mrd:5"]).configuration.presets["small"] == ["w:10", "mrd:5"])
    }

    @Test("DEVELOPMENT_ERRORS_MODE: a failed source's answer names the URL and the reason; off, it names neither")
    func developmentErrors() async throws {
        for development in [true, false] {
            try await ImgproxyAnswerHeadersTests.serving(["IMGPROXY_DEVELOPMENT_ERRORS_MODE": development ? "1" : "0"]) {
                (server: ServerHarness) async throws in
                var route = TestOrigin.Route(body: Data("busy".utf8))
                route.status = 503
                server.origin.setRoute("/busy.jpg", route)
                let answer = try await server.get(ServerHarness.path(server.origin.url("/busy.jpg").absoluteString))
                let body = String(decoding: answer.body, as: UTF8.self)
                #expect(answer.status == 502)
                #expect(body.contains("/busy.jpg") == development && body.contains("503") == development, "\(body)")
            }
        }
    }
}
