import Foundation
import Imago
import ImagoTestSupport
import Testing

/// The pipeline over a disk cache, against TestOrigin: what is served from disk, what is
/// revalidated, what is never written, and what the origin sees.
@Suite("Disk cache in the pipeline", .timeLimit(.minutes(6)))
struct PipelineDiskCacheTests {
    /// A cache directory and pipelines over it, each with its own memory cache and its own
    /// `DiskCache` instance, as a new process would have.
    struct Fixture {
        let directory: URL
        let origin: TestOrigin

        /// A pipeline as a fresh process would make it: nothing in memory.
        func pipeline(_ configure: (inout ImagePipeline.Configuration) -> Void = { _ in }) throws -> ImagePipeline {
            var configuration = ImagePipeline.Configuration()
            configuration.diskCache = try DiskCache(configuration: .init(directory: directory))
            configure(&configuration)
            return ImagePipeline(configuration: configuration)
        }

        /// Serves the corpus photo at `path`, fresh for 600 s, and returns its URL.
        func serveFreshPhoto(at path: String) -> URL {
            var route = TestOrigin.Route(body: PipelineDiskCacheTests.photo)
            route.headers = [("Cache-Control", "max-age=600")]
            origin.setRoute(path, route)
            return origin.url(path)
        }

        /// Loads `request` through a new pipeline, waits for its disk writes and returns the response.
        func load(_ request: ImageRequest) async throws -> ImageResponse {
            let pipeline = try pipeline()
            let response = try await pipeline.response(for: request)
            await pipeline.waitUntilIdle()
            pipeline.configuration.diskCache!.flush()
            return response
        }

        var entries: Int { (try? DiskCache(configuration: .init(directory: directory)).count) ?? -1 }
    }

    func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try await TestOrigin.start()
        do {
            try await body(Fixture(directory: directory, origin: origin))
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    static let photo = try! Corpus.data("jpeg/video-001.jpeg")

    @Test("a fresh entry is served from disk by a new pipeline: no request, source disk, same bytes")
    func freshFromDisk() async throws {
        try await withFixture { fixture in
            let url = fixture.serveFreshPhoto(at: "/fresh.jpg")
            let first = try await fixture.load(ImageRequest(url: url))
            #expect(first.source == .network)
            #expect(fixture.entries == 1)

            let pipeline = try fixture.pipeline()
            let second = try await pipeline.response(for: ImageRequest(url: url))
            #expect(second.source == .disk)
            #expect(second.data == Self.photo)
            #expect(second.image.width == first.image.width)
            #expect(fixture.origin.log.requests.count == 1)
            #expect(pipeline.statistics.diskHits == 1)
            #expect(pipeline.statistics.transfers == 0)
            // Decoded from disk, it is now in memory.
            #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .memory)
        }
    }

    @Test("a stale entry with an ETag is revalidated: If-None-Match, 304 with no body, the cached bytes served")
    func revalidatedWithETag() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.etag = "\"v1\""
            route.headers = [("Cache-Control", "max-age=0")]
            fixture.origin.setRoute("/etag.jpg", route)
            let url = fixture.origin.url("/etag.jpg")
            _ = try await fixture.load(ImageRequest(url: url))

            let pipeline = try fixture.pipeline()
            let second = try await pipeline.response(for: ImageRequest(url: url))
            #expect(second.source == .revalidated)
            #expect(second.statusCode == 304)
            #expect(second.data == Self.photo)
            #expect(second.image.width > 0)
            #expect(pipeline.statistics.revalidated == 1)
            let requests = fixture.origin.log.requests
            #expect(requests.count == 2)
            #expect(requests[0].header("If-None-Match") == nil)
            #expect(requests[1].header("If-None-Match") == "\"v1\"")
            #expect(fixture.origin.log.responses.map(\.status) == [200, 304])
            #expect(fixture.origin.log.responses.map(\.bodyBytes) == [Self.photo.count, 0])
        }
    }

    @Test("a stale entry with only Last-Modified is revalidated with If-Modified-Since")
    func revalidatedWithLastModified() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.lastModified = Date(timeIntervalSince1970: 1_700_000_000)
            route.headers = [("Cache-Control", "no-cache")]
            fixture.origin.setRoute("/lm.jpg", route)
            let url = fixture.origin.url("/lm.jpg")
            _ = try await fixture.load(ImageRequest(url: url))
            let second = try await fixture.load(ImageRequest(url: url))
            #expect(second.source == .revalidated)
            #expect(fixture.origin.log.requests[1].header("If-Modified-Since") == "Tue, 14 Nov 2023 22:13:20 GMT")
            #expect(fixture.origin.log.responses.map(\.status) == [200, 304])
        }
    }

    @Test("a 304 refreshes freshness: the next pipeline is served from disk with no request")
    func notModifiedRefreshesFreshness() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.etag = "\"v1\""
            route.headers = [("Cache-Control", "max-age=0")]
            fixture.origin.setRoute("/refresh.jpg", route)
            let url = fixture.origin.url("/refresh.jpg")
            _ = try await fixture.load(ImageRequest(url: url))
            fixture.origin.updateRoute("/refresh.jpg") { $0.headers = [("Cache-Control", "max-age=600")] }
            #expect(try await fixture.load(ImageRequest(url: url)).source == .revalidated)
            #expect(try await fixture.load(ImageRequest(url: url)).source == .disk)
            #expect(fixture.origin.log.requests.count == 2)
        }
    }

    @Test("a changed image replaces the entry: 200 with the new bytes, stored for the next load")
    func changedAtOrigin() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.etag = "\"v1\""
            route.headers = [("Cache-Control", "max-age=0")]
            fixture.origin.setRoute("/changed", route)
            let url = fixture.origin.url("/changed")
            _ = try await fixture.load(ImageRequest(url: url))
            let png = try Corpus.data("png/basn2c08.png")
            fixture.origin.updateRoute("/changed") { route in
                route.body = png
                route.etag = "\"v2\""
            }
            let second = try await fixture.load(ImageRequest(url: url))
            #expect(second.source == .network)
            #expect(second.data == png)
            let third = try await fixture.load(ImageRequest(url: url))
            #expect(third.source == .revalidated)
            #expect(third.data == png)
            #expect(fixture.origin.log.requests.map { $0.header("If-None-Match") } == [nil, "\"v1\"", "\"v2\""])
            #expect(fixture.entries == 1)
        }
    }

    @Test("no-store is written to neither cache: every load is a transfer")
    func noStore() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.headers = [("Cache-Control", "no-store")]
            fixture.origin.setRoute("/secret.jpg", route)
            let url = fixture.origin.url("/secret.jpg")
            let pipeline = try fixture.pipeline()
            #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .network)
            #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .network)
            await pipeline.waitUntilIdle()
            pipeline.configuration.diskCache!.flush()
            #expect(fixture.origin.log.requests.count == 2)
            #expect(fixture.entries == 0)
        }
    }

    @Test("refreshCached revalidates a fresh entry, unless it is immutable")
    func refreshCached() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.etag = "\"v1\""
            route.headers = [("Cache-Control", "max-age=600")]
            fixture.origin.setRoute("/a.jpg", route)
            route.headers = [("Cache-Control", "max-age=600, immutable")]
            fixture.origin.setRoute("/immutable.jpg", route)
            for path in ["/a.jpg", "/immutable.jpg"] {
                _ = try await fixture.load(ImageRequest(url: fixture.origin.url(path)))
            }
            // The memory cache is skipped too: same pipeline, image already decoded.
            let pipeline = try fixture.pipeline()
            _ = try await pipeline.response(for: ImageRequest(url: fixture.origin.url("/a.jpg")))
            let refreshed = try await pipeline.response(for: ImageRequest(url: fixture.origin.url("/a.jpg"), cachePolicy: .refreshCached))
            #expect(refreshed.source == .revalidated)
            let immutable = try await pipeline.response(for: ImageRequest(url: fixture.origin.url("/immutable.jpg"), cachePolicy: .refreshCached))
            #expect(immutable.source == .disk)
            #expect(fixture.origin.log.requests.map(\.path) == ["/a.jpg", "/immutable.jpg", "/a.jpg"])
        }
    }

    @Test("reloadIgnoringCache makes an unconditional request and stores the answer")
    func reloadIgnoringCache() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.etag = "\"v1\""
            route.headers = [("Cache-Control", "max-age=600")]
            fixture.origin.setRoute("/r.jpg", route)
            let url = fixture.origin.url("/r.jpg")
            _ = try await fixture.load(ImageRequest(url: url))
            let reloaded = try await fixture.load(ImageRequest(url: url, cachePolicy: .reloadIgnoringCache))
            #expect(reloaded.source == .network)
            #expect(fixture.origin.log.requests.count == 2)
            #expect(fixture.origin.log.requests[1].header("If-None-Match") == nil)
            #expect(fixture.entries == 1)
        }
    }

    @Test("returnCacheDataDontLoad serves a stale entry with no request, and fails notCached on a miss, leaving nothing behind")
    func returnCacheDataDontLoad() async throws {
        try await withFixture { fixture in
            var route = TestOrigin.Route(body: Self.photo)
            route.headers = [("Cache-Control", "max-age=0")]
            route.etag = "\"v1\""
            fixture.origin.setRoute("/stale.jpg", route)
            _ = try await fixture.load(ImageRequest(url: fixture.origin.url("/stale.jpg")))

            let pipeline = try fixture.pipeline()
            let stale = try await pipeline.response(for: ImageRequest(url: fixture.origin.url("/stale.jpg"), cachePolicy: .returnCacheDataDontLoad))
            #expect(stale.source == .disk)
            let miss = await loadError(pipeline, ImageRequest(url: fixture.origin.url("/never.jpg"), cachePolicy: .returnCacheDataDontLoad))
            #expect(miss?.code == .notCached)
            #expect(miss?.stage == .caching)
            await pipeline.waitUntilIdle()
            #expect(pipeline.activity == (0, 0) as (Int, Int))
            #expect(pipeline.statistics.transfers == 0)
            #expect(fixture.origin.log.requests.count == 1)
            #expect(pipeline.cachedResponse(for: ImageRequest(url: fixture.origin.url("/never.jpg"))) == nil)
        }
    }

    @Test("layer options: no disk writes, no disk reads, no memory reads")
    func layerOptions() async throws {
        try await withFixture { fixture in
            let url = fixture.serveFreshPhoto(at: "/l.jpg")
            _ = try await fixture.load(ImageRequest(url: url, options: .disableDiskCacheWrites))
            #expect(fixture.entries == 0)
            _ = try await fixture.load(ImageRequest(url: url))
            #expect(fixture.entries == 1)
            #expect(try await fixture.load(ImageRequest(url: url, options: .disableDiskCacheReads)).source == .network)

            let pipeline = try fixture.pipeline()
            #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .disk)
            #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .memory)
            #expect(try await pipeline.response(for: ImageRequest(url: url, options: .disableMemoryCacheReads)).source == .disk)
            #expect(fixture.origin.log.requests.count == 3)
        }
    }

    @Test("a corrupt payload on disk is detected, dropped and fetched again")
    func corruptPayloadRefetched() async throws {
        try await withFixture { fixture in
            let url = fixture.serveFreshPhoto(at: "/c.jpg")
            _ = try await fixture.load(ImageRequest(url: url))
            let file = try #require(DiskCacheTests.payloadFiles(fixture.directory).first)
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: file)

            let again = try await fixture.load(ImageRequest(url: url))
            #expect(again.source == .network)
            #expect(again.data == Self.photo)
            #expect(fixture.origin.log.requests.count == 2)
            #expect(try await fixture.load(ImageRequest(url: url)).source == .disk)
            #expect(DiskCacheTests.payloadFiles(fixture.directory).count == 1)
        }
    }

    @Test("only http(s) responses are written; file URLs are not")
    func fileURLsAreNotCached() async throws {
        try await withFixture { fixture in
            let file = Corpus.root.appendingPathComponent("png/basn2c08.png")
            let response = try await fixture.load(ImageRequest(url: file))
            #expect(response.source == .network)
            #expect(fixture.entries == 0)
        }
    }

    @Test(
        "a variant stored on disk: a new pipeline serves it with no transfer and no decode of the original; without the option it is neither read nor written")
    func variantsOnDisk() async throws {
        try await withFixture { fixture in
            let url = fixture.serveFreshPhoto(at: "/variant.jpg")
            let thumbnail = ImageRequest.Thumbnail(size: PixelSize(width: 40, height: 40), contentMode: .aspectFill)
            let round = ImageRequest(url: url, options: .storesVariantOnDisk, processors: [try ImageProcessors.Circle()], thumbnail: thumbnail)
            let plain = ImageRequest(url: url, options: .storesVariantOnDisk, thumbnail: thumbnail)

            let first = try await fixture.load(round)
            _ = try await fixture.load(plain)
            #expect(first.source == .network && first.image.width == 40)
            #expect(fixture.origin.log.requests.count == 1)  // the second load found the original on disk
            #expect(fixture.entries == 3)  // the original and both variants

            let pipeline = try fixture.pipeline()
            let again = try await pipeline.response(for: round)
            #expect(again.source == .disk)
            #expect(again.image.width == 40 && again.image.height == 40)
            #expect(again.image.pixel(x: 0, y: 0).a == 0)  // stored as PNG, transparency kept
            #expect(again.image.pixels == first.image.pixels)
            let plainAgain = try await pipeline.response(for: plain)
            #expect(plainAgain.source == .disk && plainAgain.data.starts(with: [0xFF, 0xD8]))  // opaque: JPEG
            #expect(pipeline.statistics.decodes == 0 && pipeline.statistics.transfers == 0 && pipeline.statistics.diskHits == 2)
            #expect(pipeline.cachedResponse(for: round)?.image.width == 40)
            #expect(fixture.origin.log.requests.count == 1)

            // Without the option: the original from disk, decoded and processed again.
            let other = try fixture.pipeline()
            let unstored = try await other.response(for: ImageRequest(url: url, processors: [ImageProcessors.Grayscale()], thumbnail: thumbnail))
            #expect(unstored.source == .disk && other.statistics.decodes == 1)
            await other.waitUntilIdle()
            other.configuration.diskCache!.flush()
            #expect(fixture.entries == 3)
        }
    }

    @Test("a cancelled handle that was looking for its variant on disk leaves no transfer behind")
    func cancelWhileLookingForVariant() async throws {
        try await withFixture { fixture in
            fixture.origin.serve(Self.photo, at: "/slow.jpg")
            let pipeline = try fixture.pipeline()
            let request = ImageRequest(
                url: fixture.origin.url("/slow.jpg?gate=never"), options: .storesVariantOnDisk, processors: [ImageProcessors.Grayscale()])
            let task = pipeline.imageTask(with: request)
            task.cancel()
            await #expect(throws: ImagoError.self) { try await task.response }
            await pipeline.waitUntilIdle()
            #expect(pipeline.activity == (0, 0) as (Int, Int))
        }
    }
}
