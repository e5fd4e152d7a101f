import AsyncHTTPClient
import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// What a user plugs in: their own HTTPClient, their own cache tier, the CPU stage's width.
@Suite("Injection", .timeLimit(.minutes(6)))
struct InjectionTests {
    static let photo = try! Corpus.data("jpeg/video-001.jpeg")

    /// A cache tier kept in a dictionary, as a shared tier (Redis, memcached) would keep it
    /// elsewhere: a real implementation of the protocol, not a stand-in for the network.
    final class DictionaryTier: DiskCaching {
        let entries = Locked<[String: CacheEntry]>([:])
        func entry(for key: String) -> CacheEntry? { entries.withLock { $0[key] } }
        func store(_ data: Data, for key: String, metadata: CacheMetadata) {
            entries.withLock { $0[key] = CacheEntry(key: key, data: data, metadata: metadata) }
        }
        func refresh(_ metadata: CacheMetadata, for key: String) { entries.withLock { $0[key]?.metadata = metadata } }
        func remove(_ key: String) { entries.withLock { $0[key] = nil } }
        func flush() {}
    }

    @Test("a DiskCaching tier of the user's: what one pipeline stored, another serves without a request; bytes that fail are not stored")
    func customTier() async throws {
        let tier = DictionaryTier()
        try await withOrigin(configure: { $0.diskCache = tier }) { origin, pipeline in
            var route = TestOrigin.Route(body: Self.photo)
            route.headers = [("Cache-Control", "max-age=600")]
            origin.setRoute("/tiered.jpg", route)
            var html = TestOrigin.Route(body: Data("<html>not an image</html>".utf8))
            html.headers = [("Cache-Control", "max-age=600")]
            origin.setRoute("/page.jpg", html)
            _ = try await pipeline.image(for: ImageRequest(url: origin.url("/tiered.jpg")))
            let page = try? await pipeline.image(for: ImageRequest(url: origin.url("/page.jpg")))
            #expect(page == nil)
            await pipeline.waitUntilIdle()
            #expect(tier.entries.withLock { Array($0.keys) } == [origin.url("/tiered.jpg").absoluteString])

            var configuration = ImagePipeline.Configuration()
            configuration.diskCache = tier
            let other = ImagePipeline(configuration: configuration)
            let response = try await other.response(for: ImageRequest(url: origin.url("/tiered.jpg")))
            #expect(response.source == .disk)
            #expect(origin.log.requests(to: "/tiered.jpg").count == 1)
        }
    }

    @Test("an HTTPClient of the user's carries the requests; once they shut it down, loads fail")
    func injectedClient() async throws {
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.redirectConfiguration = .disallow
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
        var configuration = ImagePipeline.Configuration()
        configuration.cpuStageWidth = 1
        let loaders = LoaderRegistry.standard()
        loaders.register(HTTPDataLoader(loaderPriority: 10, client: client))
        let pipeline = ImagePipeline(configuration: configuration, loaders: loaders)
        let origin = try await TestOrigin.start()
        let url = origin.serve(Self.photo, at: "/a.jpg")
        let data = try await pipeline.data(for: ImageRequest(url: url)).data
        #expect(data == Self.photo)
        try await client.shutdown()
        var uncached = ImageRequest(url: url)
        uncached.cachePolicy = .reloadIgnoringCache
        #expect(await loadError(pipeline, uncached) != nil)
        #expect(origin.log.requests.count == 1)
        await pipeline.waitUntilIdle()
        try await origin.shutdown()
    }
}
