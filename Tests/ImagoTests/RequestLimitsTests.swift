import Foundation
import Imago
import ImagoTestSupport
import Testing

/// A request's own source limits (`ImageRequest.limits`), applied before the work they limit.
@Suite("ImageRequest.limits", .timeLimit(.minutes(6)))
struct RequestLimitsTests {
    @Test("maxResponseSize stops the transfer at the request's limit; a request without it is not held to it")
    func responseSize() async throws {
        try await withOrigin { origin, pipeline in
            let photo = try Corpus.data("jpeg/video-001.jpeg")
            var route = TestOrigin.Route(body: photo)
            route.chunked = true
            origin.setRoute("/photo.jpg", route)
            var limited = ImageRequest(url: origin.url("/photo.jpg"))
            limited.limits.maxResponseSize = 1_000
            let error = await #expect(throws: ImagoError.self) { try await pipeline.image(for: limited) }
            #expect(error?.code.sizeLimit == 1_000)
            let image = try await pipeline.image(for: ImageRequest(url: origin.url("/photo.jpg")))
            #expect(image.width == 150)
            // From the disk or a shared transfer, bytes over the limit fail the limited request all the same.
            await #expect(throws: ImagoError.self) { _ = try await pipeline.image(for: limited) }
        }
    }

    @Test("maxPixels refuses the image on its header: no decode runs; maxFrames caps an animation")
    func pixelsAndFrames() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/small.png")
            var request = ImageRequest(url: url)
            request.limits.maxPixels = 1_000
            let error = await #expect(throws: ImagoError.self) { try await pipeline.image(for: request) }
            #expect(error?.code.limit == .pixels(1_000))
            #expect(pipeline.statistics.decodes == 0)
            request.limits.maxPixels = 1_024
            #expect(try await pipeline.image(for: request).width == 32)
            #expect(pipeline.statistics.decodes == 1)

            let animation = origin.serve(try HostileFiles.data("gif-thousand-frames.gif"), at: "/frames.gif")
            var framed = ImageRequest(url: animation)
            framed.limits.maxFrames = 10
            let frames = await #expect(throws: ImagoError.self) { try await pipeline.image(for: framed) }
            #expect(frames?.code.limit == .frames(10))
        }
    }

    @Test("limits are part of the keys: requests with other limits neither share a transfer nor a cached image")
    func keys() {
        let url = URL(string: "https://example.com/a.jpg")!
        var limited = ImageRequest(url: url)
        limited.limits = ImageRequest.Limits(maxResponseSize: 10, maxPixels: 20, maxFrames: 3)
        #expect(limited.transferKey != ImageRequest(url: url).transferKey)
        #expect(limited.cacheKey != ImageRequest(url: url).cacheKey)
        #expect(limited != ImageRequest(url: url))
    }
}
