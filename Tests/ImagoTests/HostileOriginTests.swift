import Foundation
import Imago
import ImagoTestSupport
import Testing

/// An origin that serves what an attacker would, against the whole pipeline: nothing it sends may
/// crash the process, be replayed from the disk cache, or leak a secret.
@Suite("Hostile origin", .timeLimit(.minutes(6)))
struct HostileOriginTests {
    typealias Fixture = PipelineDiskCacheTests.Fixture

    func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        try await PipelineDiskCacheTests().withFixture(body)
    }

    /// Serves `body` at `path` with `Cache-Control: max-age=600`.
    static func serveCacheable(_ body: Data, at path: String, contentType: String = "image/jpeg", on origin: TestOrigin) -> URL {
        var route = TestOrigin.Route(body: body)
        route.contentType = .value(contentType)
        route.headers = [("Cache-Control", "max-age=600")]
        origin.setRoute(path, route)
        return origin.url(path)
    }

    static func error(_ fixture: Fixture, _ request: ImageRequest, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ImagoError? {
        let pipeline = try fixture.pipeline()
        defer { pipeline.configuration.diskCache?.flush() }
        do {
            let response = try await pipeline.response(for: request)
            Issue.record("loaded \(response.data.count) bytes", sourceLocation: sourceLocation)
            return nil
        } catch {
            await pipeline.waitUntilIdle()
            return error
        }
    }

    /// Expects `request` to fail in `pipeline`, then waits for the pipeline's disk writes.
    static func expectFailure(_ pipeline: ImagePipeline, _ request: ImageRequest, sourceLocation: SourceLocation = #_sourceLocation) async {
        await #expect(throws: ImagoError.self, sourceLocation: sourceLocation) { try await pipeline.image(for: request) }
        await pipeline.waitUntilIdle()
        pipeline.configuration.diskCache?.flush()
    }

    /// Loads `url`'s bytes only (no decode) through a new pipeline and waits for its disk writes.
    static func loadData(_ fixture: Fixture, _ url: URL) async throws -> DataResponse {
        let pipeline = try fixture.pipeline()
        let response = try await pipeline.data(for: ImageRequest(url: url))
        await pipeline.waitUntilIdle()
        pipeline.configuration.diskCache!.flush()
        return response
    }

    @Test(
        "bytes that fail to decode, served with max-age, are never cached: the second load asks the origin again",
        arguments: [
            ("/crasher.webp", "webp-timestamps-past-int32.webp"), ("/bomb.gif", "gif-huge-canvas-five-frames.gif"),
        ])
    func failingBytesNotCached(path: String, hostile: String) async throws {
        try await withFixture { fixture in
            // The WebP decodes now (maxFrames of 100 makes it fail, where it once crashed); the GIF
            // goes over the memory budget.
            let url = Self.serveCacheable(try HostileFiles.data(hostile), at: path, on: fixture.origin)
            let pipeline = try fixture.pipeline { $0.decodingOptions.maxFrames = 100 }
            for _ in 0..<2 {
                await Self.expectFailure(pipeline, ImageRequest(url: url, options: [.disableMemoryCacheReads]))
                #expect(fixture.entries == 0)
            }
            #expect(fixture.origin.log.requests.count == 2)
        }
    }

    @Test("an HTML page or a gzip body served with max-age is not cached, for image and for bytes-only requests")
    func nonImagesNotCached() async throws {
        try await withFixture { fixture in
            let html = Self.serveCacheable(Data("<html><body>Not found</body></html>".utf8), at: "/page.jpg", contentType: "text/html", on: fixture.origin)
            let gzip = Self.serveCacheable(Data([0x1F, 0x8B, 0x08, 0x00] + Array(repeating: 0, count: 60)), at: "/body.png", on: fixture.origin)
            for url in [html, gzip] {
                let error = try await Self.error(fixture, ImageRequest(url: url))
                guard error?.code.kind == .unsupportedFormat else {
                    Issue.record("got \(String(describing: error))")
                    continue
                }
                // Bytes-only: the load succeeds (the caller asked for bytes) but nothing is kept.
                let data = try await Self.loadData(fixture, url)
                #expect(!data.data.isEmpty)
                #expect(fixture.entries == 0)
            }
            // A real image served the same way is kept, bytes-only or not.
            let photo = fixture.serveFreshPhoto(at: "/photo.jpg")
            _ = try await Self.loadData(fixture, photo)
            #expect(fixture.entries == 1)
        }
    }

    @Test("a disk entry that no longer decodes is removed and fetched again, not served")
    func failingEntryRemoved() async throws {
        try await withFixture { fixture in
            let url = fixture.serveFreshPhoto(at: "/photo.jpg")
            _ = try await fixture.load(ImageRequest(url: url))
            #expect(fixture.entries == 1)
            // The same bytes now go over the decoding limits: the entry is known to fail.
            let pipeline = try fixture.pipeline { $0.decodingOptions.maxPixels = 100 }
            await Self.expectFailure(pipeline, ImageRequest(url: url))
            #expect(fixture.entries == 0)
            #expect(fixture.origin.log.requests.count == 1)
        }
    }

    @Test("a password in the URL is never in the disk index, an error or a log line")
    func passwordNotStored() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: PipelineDiskCacheTests.photo)
            route.headers = [("Cache-Control", "max-age=600")]
            route.basicAuth = ("user", "s3cret-pass")
            fixture.origin.setRoute("/private.jpg", route)
            var components = URLComponents(url: fixture.origin.url("/private.jpg"), resolvingAgainstBaseURL: false)!
            components.user = "user"
            components.password = "s3cret-pass"
            let url = components.url!
            _ = try await fixture.load(ImageRequest(url: url))
            #expect(fixture.entries == 1)
            var found = false
            for file in FileManager.default.enumerator(at: fixture.directory, includingPropertiesForKeys: nil)!.compactMap({ $0 as? URL }) {
                if let data = try? Data(contentsOf: file), data.range(of: Data("s3cret-pass".utf8)) != nil { found = true }
            }
            #expect(!found)
            #expect(url.redactedString.contains("user:***@"))
            #expect(!ImagoError(.httpStatus(404), url: url).description.contains("s3cret"))
        }
    }

    @Test("a disk cache whose writes fail (its tmp/ turned into a file, as a full disk would fail them) never fails a load")
    func failingWrites() async throws {
        try await withFixture { fixture in
            let url = fixture.serveFreshPhoto(at: "/photo.jpg")
            let pipeline = try fixture.pipeline()
            let temporaries = fixture.directory.appendingPathComponent("tmp")
            try FileManager.default.removeItem(at: temporaries)
            try Data("not a directory".utf8).write(to: temporaries)
            for index in 0..<3 {
                let image = try await pipeline.image(for: ImageRequest(url: url, options: [.disableMemoryCacheReads]))
                #expect(image.width == 150, "load \(index)")
                await pipeline.waitUntilIdle()
                pipeline.configuration.diskCache?.flush()
            }
            // Counted through the cache in use: a new one cannot even open on this directory.
            #expect((pipeline.configuration.diskCache as? DiskCache)?.count == 0)
            #expect(fixture.origin.log.requests.count == 3)
        }
    }
}
