import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Prefetching", .timeLimit(.minutes(6)))
struct PrefetcherTests {
    @Test("prefetched images land in memory; a visible load then is a memory hit with no transfer")
    func prefetchFillsTheMemoryCache() async throws {
        try await withOrigin { origin, pipeline in
            let urls = try ["jpeg/video-001.jpeg", "png/basn2c08.png", "webp/tux.lossless.webp"].enumerated().map { index, file in
                origin.serve(try Corpus.data(file), at: "/p\(index)")
            }
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            prefetcher.startPrefetching(with: urls)
            await pipeline.waitUntilIdle()
            #expect(prefetcher.count == 0)
            for url in urls {
                #expect(pipeline.cachedResponse(for: ImageRequest(url: url)) != nil)
            }
            let task = pipeline.imageTask(with: ImageRequest(url: urls[0])) { _ in }
            #expect(task.isFinished)
            #expect(origin.log.requests.count == 3)
            // Already in memory: prefetching again makes no request.
            prefetcher.startPrefetching(with: urls)
            #expect(prefetcher.count == 0)
        }
    }

    @Test("a visible load joins the prefetch's transfer and raises it; stopping the prefetch leaves the visible load running")
    func visibleLoadJoinsPrefetch() async throws {
        try await withOrigin(configure: { $0.maxConcurrentDownloads = 1 }) { origin, pipeline in
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/a.png")
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/b.png")
            origin.serve(Data(count: 10), at: "/blocker")
            // One slot, held by a blocker: the prefetches wait in the queue.
            let blocker = pipeline.dataTask(with: ImageRequest(url: origin.url("/blocker?gate=open"), priority: .veryHigh))
            await origin.wait { $0.requests.count == 1 }
            let a = origin.url("/a.png"), b = origin.url("/b.png")
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            prefetcher.startPrefetching(with: [a, b])
            #expect(prefetcher.count == 2)
            // The visible load of b joins b's prefetch at high priority, so b goes before a.
            let visible = pipeline.imageTask(with: ImageRequest(url: b, priority: .high))
            #expect(pipeline.statistics.coalesced == 1)
            prefetcher.stopPrefetching(with: [b])
            #expect(prefetcher.count == 1)
            origin.release("open")
            _ = try await blocker.response
            let image = try await visible.response.image
            #expect(image.width == 32)
            await pipeline.waitUntilIdle()
            #expect(origin.log.requests.map(\.path) == ["/blocker", "/b.png", "/a.png"])
            #expect(pipeline.statistics.stopped == 0)
        }
    }

    @Test("stopping cancels what only the prefetcher wanted: the transfer stops, nothing is cached")
    func stopCancelsTheTransfer() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/held.png")
            let url = origin.url("/held.png?gate=never")
            let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
            prefetcher.startPrefetching(with: [url])
            await origin.wait { $0.requests.count == 1 }
            prefetcher.stopPrefetching()
            await pipeline.waitUntilIdle()
            #expect(prefetcher.count == 0)
            #expect(pipeline.statistics.stopped == 1)
            #expect(pipeline.cachedResponse(for: ImageRequest(url: url)) == nil)
            await origin.wait { $0.openConnections == 0 }
        }
    }
}
