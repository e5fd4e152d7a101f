import Foundation
import Imago
import ImagoTestSupport
import Testing

/// The stages in order: a disk-cache hit is read on the cache stage, before and apart from the
/// download queue, so it never waits for a download slot.
@Suite("Pipeline stages", .timeLimit(.minutes(6)))
struct PipelineStagesTests {
    static let photo = try! Corpus.data("jpeg/video-001.jpeg")

    @Test("with every download slot held at the origin, a disk-cached image and a disk-cached variant complete while the slots stay held")
    func diskHitDoesNotWaitForASlot() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = try await TestOrigin.start()
        var route = TestOrigin.Route(body: Self.photo)
        route.headers = [("Cache-Control", "max-age=600")]
        origin.setRoute("/cached.jpg", route)
        let cached = origin.url("/cached.jpg")
        var variant = ImageRequest(url: cached, thumbnail: .init(maxPixelSize: 64))
        variant.options.insert(.storesVariantOnDisk)

        func pipeline() throws -> ImagePipeline {
            var configuration = ImagePipeline.Configuration()
            configuration.diskCache = try DiskCache(configuration: .init(directory: directory))
            configuration.maxConcurrentDownloads = 6
            return ImagePipeline(configuration: configuration)
        }
        // Fill the disk: the original and the variant.
        let writer = try pipeline()
        let width = try await writer.image(for: ImageRequest(url: cached)).width
        _ = try await writer.image(for: variant)
        await writer.waitUntilIdle()
        writer.configuration.diskCache?.flush()
        origin.clearRequests()

        let reader = try pipeline()
        for index in 0..<6 { origin.setRoute("/slow-\(index).jpg", TestOrigin.Route(body: Self.photo)) }
        let held = (0..<6).map { reader.dataTask(with: ImageRequest(url: origin.url("/slow-\($0).jpg?gate=held"))) }
        await origin.wait { $0.requests.count == 6 }
        #expect(reader.activity.running == 6)

        let original = try await reader.response(for: ImageRequest(url: cached))
        let thumbnail = try await reader.response(for: variant)
        #expect(original.source == .disk)
        #expect(thumbnail.source == .disk)
        #expect(original.image.width == width)
        #expect(max(thumbnail.image.width, thumbnail.image.height) == 64)
        // The held transfers are still held: the hits did not wait for them.
        #expect(held.allSatisfy { !$0.isFinished })
        #expect(reader.activity.running == 6)
        #expect(origin.log.requests(to: "/cached.jpg").isEmpty)

        origin.release("held")
        for task in held { _ = try? await task.response }
        await reader.waitUntilIdle()
        #expect(reader.activity == (0, 0) as (Int, Int))
        try await origin.shutdown()
    }

    @Test(
        "suspend holds queued downloads back and resume starts them; cancelAll completes every handle with cancelled; an invalidated pipeline refuses new work")
    func wholePipelineControl() async throws {
        try await withOrigin { origin, pipeline in
            origin.setRoute("/a.jpg", TestOrigin.Route(body: Self.photo))
            origin.setRoute("/held.jpg", TestOrigin.Route(body: Self.photo))
            pipeline.suspend()
            #expect(pipeline.isSuspended)
            let queued = pipeline.dataTask(with: ImageRequest(url: origin.url("/a.jpg")))
            #expect(pipeline.activity == (1, 0) as (Int, Int))
            pipeline.resume()
            let data = try await queued.response.data
            #expect(data == Self.photo)
            #expect(origin.log.requests(to: "/a.jpg").count == 1)

            let running = pipeline.dataTask(with: ImageRequest(url: origin.url("/held.jpg?gate=never")))
            let second = pipeline.imageTask(with: ImageRequest(url: origin.url("/held.jpg?gate=never")))
            await origin.wait { $0.requests(to: "/held.jpg").count == 1 }
            pipeline.cancelAll()
            #expect(await Self.errorCode(of: running) == .cancelled)
            #expect(await Self.errorCode(of: second) == .cancelled)
            #expect(running.isFinished && second.isFinished)
            await pipeline.waitUntilIdle()
            await origin.wait { $0.openConnections == 0 || $0.abortedResponses >= 1 }

            pipeline.invalidate()
            let refused = pipeline.dataTask(with: ImageRequest(url: origin.url("/a.jpg")))
            #expect(await Self.errorCode(of: refused) == .cancelled)
            #expect(origin.log.requests(to: "/a.jpg").count == 1)
        }
    }

    @Test("a response says when its stages ran: load, decode and process in order; a data task has no decode; a memory hit has none")
    func responseTimings() async throws {
        let origin = try await TestOrigin.start()
        origin.setRoute("/photo.jpg", TestOrigin.Route(body: Self.photo))
        let url = origin.url("/photo.jpg")
        let pipeline = ImagePipeline()
        let before = ContinuousClock.now
        let request = try ImageRequest(url: url, processors: [ImageProcessors.Resize(size: PixelSize(width: 64, height: 64)), ImageProcessors.Grayscale()])
        let made = try await pipeline.response(for: request)
        let after = ContinuousClock.now
        let load = try #require(made.timings.load)
        let decode = try #require(made.timings.decode)
        let process = try #require(made.timings.process)
        #expect(before <= load.lowerBound)
        #expect(load.upperBound <= decode.lowerBound)
        #expect(decode.upperBound <= process.lowerBound)
        #expect(process.upperBound <= after)

        let data = try await pipeline.dataTask(with: ImageRequest(url: origin.url("/photo.jpg?data"))).response
        #expect(data.loadTime != nil)

        let plain = try await pipeline.response(for: ImageRequest(url: origin.url("/photo.jpg?plain")))
        #expect(plain.timings.decode != nil)
        #expect(plain.timings.process == nil)

        let hit = try await pipeline.response(for: request)
        #expect(hit.source == .memory)
        #expect(hit.timings == ImageResponse.Timings())
        try await origin.shutdown()
    }

    static func errorCode<Response>(of task: PipelineTask<Response>) async -> ImagoError.Code? {
        do {
            _ = try await task.response
            return nil
        } catch {
            return error.code
        }
    }
}
