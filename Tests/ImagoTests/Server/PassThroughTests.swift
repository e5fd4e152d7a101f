import Crypto
import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// `raw` and `skip_processing` are plans like any other: their answers are kept and joined, shed
/// past the work limit, cut off at the work deadline, and carry the one ETag rule.
@Suite("raw and skip_processing through the one answer path")
struct PassThroughTests {
    static func digest(_ data: Data) -> String {
        "\"" + SHA256.hash(data: data).prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }

    @Test("raw: identical requests in flight share one fetch, a repeat is kept, and with every worker busy and no queue another is 429")
    func rawJoinedKeptAndShed() async throws {
        try await withServer({
            $0.workers = 1
            $0.requestsQueueSize = 0
        }) { server in
            let jpeg = try Corpus.data("jpeg/video-001.jpeg")
            var route = TestOrigin.Route(body: jpeg)
            route.gate = "photo"
            server.origin.setRoute("/photo.jpg", route)
            let other = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/other.png")
            let path = ServerHarness.path(server.origin.url("/photo.jpg").absoluteString, ["raw:1"])
            async let first = server.get(path)
            async let second = server.get(path)
            await server.origin.wait { $0.requests(to: "/photo.jpg").count == 1 }
            let refused = try await server.get(ServerHarness.path(other.absoluteString, ["raw:1"]))
            #expect(refused.status == 429 && refused.header("Retry-After") == "1")
            server.origin.release("photo")
            let (a, b) = try await (first, second)
            #expect(a.status == 200 && b.status == 200 && a.body == jpeg && b.body == jpeg)
            #expect(a.header("Content-Type") == "image/jpeg" && a.header("ETag") == Self.digest(jpeg))
            #expect(a.header("Content-Disposition") == "inline; filename=\"photo.jpg\"")
            let again = try await server.get(path)
            #expect(again.body == jpeg && again.header("ETag") == a.header("ETag"))
            #expect(server.origin.log.requests(to: "/photo.jpg").count == 1)
            let notModified = try await server.get(path, headers: [("If-None-Match", Self.digest(jpeg))])
            #expect(notModified.status == 304)
            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("imago_serve_coalesced_total 1"))
        }
    }

    @Test("raw past the work deadline is a 504, and its place is given back")
    func rawDeadline() async throws {
        try await withServer({
            $0.sourceTimeout = .seconds(600)
            $0.workTimeout = .seconds(2)
            $0.workers = 1
        }) { server in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.gate = "slow"
            server.origin.setRoute("/slow.jpg", route)
            let answer = try await server.get(ServerHarness.path(server.origin.url("/slow.jpg").absoluteString, ["raw:1"]))
            #expect(answer.status == 504)
            await server.service.untilNoWork()
            #expect(server.service.workInFlight == 0)
            server.origin.release("slow")
        }
    }

    @Test("skip_processing: a listed format's source as it came, kept; another format processed; the URL's own limit applies")
    func skipProcessing() async throws {
        try await withServer { server in
            let gif = try Corpus.data("gif/video-001.gif")
            let source = server.origin.serve(gif, at: "/anim.gif").absoluteString
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
            let skipped = try await server.get(ServerHarness.path(source, ["skp:gif", "w:20"]))
            #expect(skipped.status == 200 && skipped.body == gif && skipped.header("ETag") == Self.digest(gif))
            #expect(skipped.header("Content-Type") == "image/gif")
            _ = try await server.get(ServerHarness.path(source, ["skp:gif", "w:20"]))
            #expect(server.origin.log.requests(to: "/anim.gif").count == 1, "kept: no second fetch")
            let named = try await server.get(ServerHarness.path(source, ["skp:gif", "w:20"], extension: "png"))
            #expect(named.status == 200 && named.header("Content-Type") == "image/png")
            #expect(try PNGDecoder().decode(named.body, options: DecodingOptions()).width == 20)
            let processed = try await server.get(ServerHarness.path(photo, ["skp:gif", "w:20"], extension: "jpg"))
            #expect(processed.status == 200)
            #expect(try JPEGDecoder().decode(processed.body, options: DecodingOptions()).width == 20)
            let tooLarge = try await server.get(ServerHarness.path(source, ["skp:gif", "msfs:100"]))
            #expect(tooLarge.status == 422)
        }
    }
}
