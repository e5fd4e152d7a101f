import Foundation
import Imago
import ImagoTestSupport
import Testing

/// The CLI against hostile URLs and environments: files stay in `--out`, passwords stay out of
/// every output, an unusable cache directory costs the cache, not the fetch.
@Suite("imago CLI, hostile", .timeLimit(.minutes(6)))
struct CLIHostileTests {
    @Test("fetch --out keeps names inside the directory: %2F, .., control characters and leading dots are made safe")
    func safeNames() async throws {
        try await withTestOrigin { origin in
            let png = try Corpus.data("png/basn6a08.png")
            let paths = [
                "/x/..%2F..%2F..%2Fescaped.png", "/x/..", "/x/.hidden.png", "/x/a%0Ab.png", "/y/b.png", "/z/b.png",
                "/x/" + String(repeating: "%C3%A9", count: 150) + ".png",
            ]
            for path in paths { origin.setRoute(path, TestOrigin.Route(body: png)) }
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let out = root.appendingPathComponent("a/b/c/out")
            let run = try await imago(["fetch", "--no-disk-cache", "--out", out.path] + paths.map { origin.url($0).absoluteString })
            #expect(run.status == 0)
            let names = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
            #expect(names.count == paths.count)
            #expect(names.allSatisfy { !$0.hasPrefix(".") && !$0.contains("/") && !$0.contains("\n") && $0.utf8.count <= 200 })
            #expect(names.contains { $0.hasSuffix("éé.png") })
            #expect(names.contains("b.png") && names.contains("2-b.png"))
            // Nothing was written anywhere else under the temporary root.
            let everything = FileManager.default.enumerator(atPath: root.path)!.compactMap { $0 as? String }
            #expect(everything.filter { !$0.hasPrefix("a/b/c/out") && !["a", "a/b", "a/b/c"].contains($0) }.isEmpty)
        }
    }

    @Test("a URL's password is never printed: --json, the progress lines and errors show ***")
    func passwordRedacted() async throws {
        try await withTestOrigin { origin in
            var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
            route.basicAuth = ("user", "s3cret-pass")
            origin.setRoute("/private.jpg", route)
            let good = "http://user:s3cret-pass@127.0.0.1:\(origin.port)/private.jpg"
            let missing = "http://user:s3cret-pass@127.0.0.1:\(origin.port)/missing.jpg"
            for arguments in [["--json"], []] {
                let run = try await imago(["fetch", "--no-disk-cache"] + arguments + [good, missing], withStandardError: true)
                let text = String(decoding: run.output, as: UTF8.self)
                #expect(run.status == 1)
                #expect(!text.contains("s3cret"))
                #expect(text.contains("user:***@"))
            }
        }
    }

    @Test("fetch --timeout ends a slow drip: the URL fails with 'timed out'")
    func timeout() async throws {
        try await withTestOrigin { origin in
            origin.serve(payload(1000), at: "/drip.png")
            let run = try await imago(["fetch", "--json", "--no-disk-cache", "--timeout", "0.5", origin.url("/drip.png?rate=10").absoluteString])
            #expect(run.status == 1)
            let text = String(decoding: run.output, as: UTF8.self)
            #expect(text.contains("timed out"))
            let refused = try await imago(["fetch", "--timeout", "0", origin.url("/drip.png").absoluteString], withStandardError: true)
            #expect(refused.status != 0)
            #expect(String(decoding: refused.output, as: UTF8.self).contains("--timeout must be"))
        }
    }

    @Test("a cache directory that cannot be made warns once and the fetch goes on without it")
    func unusableCacheDirectory() async throws {
        try await withTestOrigin { origin in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            // A regular file where a directory should be: as unwritable as a read-only mount, even for root.
            let blocker = root.appendingPathComponent("file")
            try Data("x".utf8).write(to: blocker)
            let run = try await imago(["fetch", "--cache-dir", blocker.appendingPathComponent("cache").path, url.absoluteString], withStandardError: true)
            let text = String(decoding: run.output, as: UTF8.self)
            #expect(run.status == 0)
            #expect(text.components(separatedBy: "warning: no disk cache").count == 2)
            #expect(text.contains("1 images, 1 transfers"))
        }
    }
}

/// Runs `body` with a fresh origin, shut down afterwards whatever happens.
func withTestOrigin(_ body: (TestOrigin) async throws -> Void) async throws {
    let origin = try await TestOrigin.start()
    do {
        try await body(origin)
    } catch {
        try? await origin.shutdown()
        throw error
    }
    try await origin.shutdown()
}
