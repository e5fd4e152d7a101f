import Foundation
import Imago
import ImagoTestSupport
import Testing

/// The origin's own controls, seen through the pipeline.
@Suite("TestOrigin", .timeLimit(.minutes(6)))
struct TestOriginTests {
    @Test("added latency delays the head: a shorter time-without-bytes times out")
    func latency() async throws {
        // Three seconds without bytes: the quick request's 10 ms stays inside it even when the
        // whole suite runs at once under a sanitizer on two cores (one second was not, once).
        try await withOrigin(configure: { $0.timeoutWithoutBytes = .seconds(3) }) { origin, pipeline in
            let body = payload(100)
            origin.serve(body, at: "/late.jpg")
            #expect(await loadError(pipeline, ImageRequest(url: origin.url("/late.jpg?latency_ms=10000")))?.code == .timedOut)
            let quick = try await pipeline.data(for: ImageRequest(url: origin.url("/late.jpg?latency_ms=10"))).data
            #expect(quick == body)
        }
    }

    @Test("Cache-Control, Expires, ETag and Last-Modified headers are sent as configured")
    func cacheHeaders() async throws {
        try await withOrigin { origin, pipeline in
            var route = TestOrigin.Route(body: payload(100))
            route.etag = "\"abc\""
            route.lastModified = Date(timeIntervalSince1970: 1_700_000_000)
            route.headers = [("Cache-Control", "max-age=60"), ("Expires", "Wed, 21 Oct 2099 07:28:00 GMT")]
            origin.setRoute("/c.png", route)
            let response = try await pipeline.data(for: ImageRequest(url: origin.url("/c.png")))
            let header = { (name: String) in response.headers.first { $0.name.lowercased() == name }?.value }
            #expect(header("cache-control") == "max-age=60")
            #expect(header("expires") == "Wed, 21 Oct 2099 07:28:00 GMT")
            #expect(header("etag") == "\"abc\"")
            #expect(header("last-modified") == "Tue, 14 Nov 2023 22:13:20 GMT")
        }
    }

    @Test("If-Modified-Since at or after Last-Modified is answered 304 without a body")
    func ifModifiedSince() async throws {
        try await withOrigin { origin, pipeline in
            var route = TestOrigin.Route(body: payload(100))
            route.lastModified = Date(timeIntervalSince1970: 1_700_000_000)
            origin.setRoute("/lm.png", route)
            let fresh = ImageRequest(url: origin.url("/lm.png"), headers: ["If-Modified-Since": "Tue, 14 Nov 2023 22:13:20 GMT"])
            #expect(await loadError(pipeline, fresh)?.code == .notModified)
            let older = ImageRequest(url: origin.url("/lm.png"), headers: ["If-Modified-Since": "Mon, 13 Nov 2023 00:00:00 GMT"])
            let data = try await pipeline.data(for: older).data
            #expect(data.count == 100)
        }
    }

    @Test(
        "Range forms a-b, a- and -n are answered 206 with the right slice",
        arguments: [
            ("bytes=0-9", 0..<10), ("bytes=990-", 990..<1000), ("bytes=-5", 995..<1000),
        ])
    func ranges(header: String, slice: Range<Int>) async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(1000)
            let url = origin.serve(body, at: "/r.bin")
            let response = try await pipeline.data(for: ImageRequest(url: url, headers: ["Range": header]))
            #expect(response.statusCode == 206)
            #expect(response.data == body.subdata(in: slice))
        }
    }

    @Test("files under a directory are served at their relative paths")
    func directory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-origin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = payload(500)
        try body.write(to: directory.appendingPathComponent("sub/x.webp"))
        let origin = try await TestOrigin.start(serving: directory)
        let response = try await ImagePipeline().data(for: ImageRequest(url: origin.url("/sub/x.webp")))
        #expect(response.data == body)
        #expect(response.headers.contains { $0.name.lowercased() == "content-type" && $0.value == "image/webp" })
        try await origin.shutdown()
    }
}
