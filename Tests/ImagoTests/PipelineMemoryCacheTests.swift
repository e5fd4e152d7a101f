import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Memory cache in the pipeline", .timeLimit(.minutes(6)))
struct PipelineMemoryCacheTests {
    @Test("a decoded image is served from memory the next time: no transfer, source memory, same pixels")
    func secondLoadFromMemory() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/m.jpg")
            let first = try await pipeline.response(for: ImageRequest(url: url))
            let second = try await pipeline.response(for: ImageRequest(url: url, priority: .high))
            #expect(first.source == .network)
            #expect(second.source == .memory)
            #expect(second.request.priority == .high)
            #expect(second.data == first.data)
            #expect(Corpus.samePixels(second.image.pixels, first.image.pixels))
            #expect(origin.log.requests.count == 1)
            #expect(pipeline.statistics.memoryHits == 1)
            #expect(pipeline.cachedResponse(for: ImageRequest(url: url))?.source == .memory)
        }
    }

    @Test("a memory hit completes before loadImage returns, on the caller's thread, with no transfer")
    func synchronousHit() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/s.png")
            _ = try await pipeline.image(for: url)
            let delivered = Recorder<ImageResponse.Source>()
            let task = pipeline.imageTask(with: ImageRequest(url: url)) { result in delivered.append((try? result.get())?.source ?? .network) }
            #expect(delivered.all == [.memory])
            #expect(task.isFinished)
            #expect(pipeline.activity == (0, 0) as (Int, Int))
        }
    }

    @Test("bytes-only requests neither read nor fill the image cache; failures are not cached; nil turns caching off")
    func whatIsCached() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/d.png")
            _ = try await pipeline.data(for: ImageRequest(url: url))
            #expect(pipeline.cachedResponse(for: ImageRequest(url: url)) == nil)
            _ = try await pipeline.image(for: url)
            let bytes = try await pipeline.data(for: ImageRequest(url: url))
            #expect(bytes.source == .network)
            #expect(origin.log.requests.count == 3)

            let broken = origin.serve(Data("not an image".utf8), at: "/broken.png")
            await #expect(throws: ImagoError.self) { try await pipeline.image(for: broken) }
            await #expect(throws: ImagoError.self) { try await pipeline.image(for: broken) }
            #expect(origin.log.requests(to: "/broken.png").count == 2)
        }
        try await withOrigin(configure: { $0.memoryCache = nil }) { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/n.png")
            _ = try await pipeline.image(for: url)
            let again = try await pipeline.response(for: ImageRequest(url: url))
            #expect(again.source == .network)
            #expect(origin.log.requests.count == 2)
        }
    }

    @Test("the cache holds the pixels plus the encoded bytes as cost, and honours its limits")
    func cost() async throws {
        let cache = MemoryCache<ImageRequest.CacheKey, ImageResponse>(limits: .init(cost: 100_000_000))
        try await withOrigin(configure: { $0.memoryCache = cache }) { origin, pipeline in
            let data = try Corpus.data("jpeg/video-001.jpeg")
            let url = origin.serve(data, at: "/c.jpg")
            let image = try await pipeline.image(for: url)
            #expect(cache.totalCost == image.cost + data.count)
            cache.removeAll()
            #expect(try await pipeline.response(for: ImageRequest(url: url)).source == .network)
        }
    }
}
