import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Downloading over HTTP", .timeLimit(.minutes(6)))
struct DownloadTests {
    @Test("a 200 response delivers its bytes, final URL, status and headers")
    func loadsBytes() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(300_000)
            let url = origin.serve(body, at: "/photo.jpg")
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(response.statusCode == 200)
            #expect(response.url == url)
            #expect(response.source == .network)
            #expect(response.headers.contains { $0.name.lowercased() == "content-type" && $0.value == "image/jpeg" })
            #expect(origin.log.requests.count == 1)
        }
    }

    @Test("loadImage reports progress (received, expected, URL), ending at the full length, then the decoded image")
    func reportsProgress() async throws {
        try await withOrigin { origin, pipeline in
            let body = try Corpus.data("webp/blue-purple-pink-large.png")
            let url = origin.serve(body, at: "/p.png")
            origin.updateRoute("/p.png") {
                $0.bytesPerSecond = 1_000_000
                $0.chunked = true  // no Content-Length
            }
            let seen = Recorder<(Int64, Int64?, URL)>()
            let results = Recorder<Result<ImageResponse, ImagoError>>()
            let done = Countdown(1)
            let task = pipeline.imageTask(with: ImageRequest(url: url)) { result in
                results.append(result)
                done.signal()
            } progress: {
                seen.append(($0, $1, $2))
            }
            await done.wait()
            let steps = seen.all
            #expect(steps.count > 1)
            #expect(steps.last?.0 == Int64(body.count))
            #expect(steps.allSatisfy { $0.1 == nil && $0.2 == url })
            #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.0 < $1.0 })
            #expect(task.progress.receivedBytes == Int64(body.count))
            let response = try #require(try results.all.first?.get())
            #expect(response.image.metadata.format == .png)
            #expect(response.data == body)
        }
    }

    @Test("progress knows the expected length from Content-Length")
    func expectedLength() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(payload(50_000), at: "/a.gif")
            let seen = Recorder<Int64?>()
            let done = Countdown(1)
            pipeline.dataTask(with: ImageRequest(url: url)) { _ in
                done.signal()
            } progress: { _, expected, _ in
                seen.append(expected)
            }
            await done.wait()
            #expect(!seen.all.isEmpty)
            #expect(seen.all.allSatisfy { $0 == 50_000 })
        }
    }

    @Test("sends Accept with the decoded formats, configuration and request headers, and the filter's word last")
    func headers() async throws {
        try await withOrigin(configure: {
            $0.headers["X-App"] = "demo"
            $0.headersFilter = { url, headers in
                var headers = headers
                headers["X-Filtered"] = url.lastPathComponent
                headers["X-Remove"] = nil
                return headers
            }
        }) { origin, pipeline in
            let url = origin.serve(payload(10), at: "/h.webp")
            _ = try await pipeline.data(for: ImageRequest(url: url, headers: ["X-Request": "1", "X-Remove": "x"]))
            let request = try #require(origin.log.requests.first)
            let accept = try #require(request.header("accept"))
            for format in ["image/webp", "image/png", "image/jpeg", "image/gif"] { #expect(accept.contains(format)) }
            #expect(request.header("x-app") == "demo")
            #expect(request.header("x-request") == "1")
            #expect(request.header("x-filtered") == "h.webp")
            #expect(request.header("x-remove") == nil)
        }
    }

    @Test("cookies are sent only when the request asks")
    func cookies() async throws {
        try await withOrigin(configure: { $0.cookies = { _ in "session=abc" } }) { origin, pipeline in
            let url = origin.serve(payload(10), at: "/c.png")
            _ = try await pipeline.data(for: ImageRequest(url: url))
            _ = try await pipeline.data(for: ImageRequest(url: url, options: .sendCookies))
            let requests = origin.log.requests
            #expect(requests.count == 2)
            #expect(requests[0].header("cookie") == nil)
            #expect(requests[1].header("cookie") == "session=abc")
        }
    }

    @Test("Basic auth: 401 without credentials; credentials from the request, the URL or the configuration")
    func basicAuth() async throws {
        try await withOrigin(configure: { $0.credentials = .init(user: "config", password: "c") }) { origin, pipeline in
            let body = payload(100)
            for user in ["config", "request", "url"] {
                origin.setRoute(
                    "/\(user).png",
                    {
                        var route = TestOrigin.Route(body: body)
                        route.basicAuth = (user, user == "config" ? "c" : "secret")
                        return route
                    }())
            }
            let fromConfiguration = try await pipeline.data(for: ImageRequest(url: origin.url("/config.png"))).data
            #expect(fromConfiguration == body)
            let fromRequest = try await pipeline.data(
                for: ImageRequest(url: origin.url("/request.png"), credentials: .init(user: "request", password: "secret")))
            #expect(fromRequest.data == body)
            let withUserInfo = URL(string: "http://url:secret@127.0.0.1:\(origin.port)/url.png")!
            let fromUserInfo = try await pipeline.data(for: ImageRequest(url: withUserInfo))
            #expect(fromUserInfo.data == body)

            let error = await loadError(pipeline, ImageRequest(url: origin.url("/request.png")))
            #expect(error?.code == .httpStatus(401))
            #expect(error?.description.contains("HTTP status 401") == true)
            #expect(error?.description.contains("/request.png") == true)
        }
    }

    @Test("404 and 500 are errors that carry the status and the URL", arguments: [404, 500])
    func errorStatus(status: Int) async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(100), at: "/s.jpg")
            let url = origin.url("/s.jpg?status=\(status)")
            let error = await loadError(pipeline, ImageRequest(url: url))
            #expect(error?.code == .httpStatus(status))
            #expect(error?.url == url)
            #expect(error?.stage == .loading)
            #expect(pipeline.statistics.errors == 1)
        }
    }

    @Test("304 without a cached copy is a clear notModified error")
    func notModified() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(100), at: "/e.png")
            origin.updateRoute("/e.png") { $0.etag = "\"v1\"" }
            let error = await loadError(pipeline, ImageRequest(url: origin.url("/e.png"), headers: ["If-None-Match": "\"v1\""]))
            #expect(error?.code == .notModified)
        }
    }

    @Test("an empty body is an error")
    func emptyBody() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(Data(), at: "/empty.png")
            #expect(await loadError(pipeline, ImageRequest(url: url))?.code == .emptyResponse)
        }
    }

    @Test("a wrong or missing Content-Type does not matter: bytes are bytes", arguments: ["none", "text/html"])
    func contentTypeIgnored(contentType: String) async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(1000)
            origin.serve(body, at: "/t.jpg")
            let served = try await pipeline.data(for: ImageRequest(url: origin.url("/t.jpg?content_type=\(contentType)"))).data
            #expect(served == body)
        }
    }

    @Test("a Range request gets the 206 slice")
    func range() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(1000)
            let url = origin.serve(body, at: "/r.jpg")
            let response = try await pipeline.data(for: ImageRequest(url: url, headers: ["Range": "bytes=100-199"]))
            #expect(response.statusCode == 206)
            #expect(response.data == body.subdata(in: 100..<200))
        }
    }
}
