import Foundation
import Imago
import ImagoTestSupport
import Testing

/// A display target that records what it was asked to show.
@MainActor
final class RecordingView: ImageDisplaying {
    let imageBinding = ImageBinding()
    var shown: [Image?] = []
    var widths: [Int?] { shown.map { $0?.width } }

    func display(_ image: Image?) { shown.append(image) }
}

@MainActor
@Suite("Display targets", .timeLimit(.minutes(6)))
struct DisplayTargetTests {
    static let placeholder = ProcessingTests.solid(1, 1)

    /// Sets `url` on `view` and waits for its success or failure.
    static func load(_ view: RecordingView, _ url: URL?, pipeline: ImagePipeline) async -> Result<ImageResponse, ImagoError> {
        await withCheckedContinuation { continuation in
            view.setImage(
                with: url, placeholder: placeholder, pipeline: pipeline,
                success: { continuation.resume(returning: .success($0)) },
                failure: { continuation.resume(returning: .failure($0)) })
        }
    }

    @Test("the placeholder, then the image; success once")
    func placeholderThenImage() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/a.png")
            let view = RecordingView()
            let result = await Self.load(view, url, pipeline: pipeline)
            #expect((try? result.get())?.source == .network)
            #expect(view.widths == [1, 32])
        }
    }

    @Test("a memory-cache hit is shown before the call returns, with no placeholder flash")
    func memoryHitIsSynchronous() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(try Corpus.data("png/basn2c08.png"), at: "/a.png")
            _ = try await pipeline.image(for: url)
            let view = RecordingView()
            var succeeded = false
            view.setImage(with: url, placeholder: Self.placeholder, pipeline: pipeline, success: { _ in succeeded = true })
            #expect(view.widths == [32])
            #expect(succeeded)
        }
    }

    @Test("the same URL already loading is a no-op; a different one cancels it, and the old load's completion is ignored")
    func sameAndDifferentURLs() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/held.png")
            let held = origin.url("/held.png?gate=never")
            let other = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/b.jpg")
            let view = RecordingView()
            var failures = 0
            view.setImage(with: held, placeholder: Self.placeholder, pipeline: pipeline, failure: { _ in failures += 1 })
            await origin.wait { $0.requests.count == 1 }
            view.setImage(with: held, placeholder: Self.placeholder, pipeline: pipeline, failure: { _ in failures += 1 })
            #expect(view.widths == [1])  // no second placeholder, no second load
            #expect(pipeline.statistics.coalesced == 0)

            let result = await Self.load(view, other, pipeline: pipeline)
            #expect((try? result.get())?.image.width == 150)
            await pipeline.waitUntilIdle()
            #expect(pipeline.statistics.stopped == 1)  // the held load was cancelled
            #expect(view.widths == [1, 1, 150])
            #expect(failures == 0)
            await origin.wait { $0.abortedResponses == 1 }  // the held response's connection was closed
        }
    }

    @Test("a nil URL cancels and shows the placeholder; cancelImageLoad stops the load and keeps what is shown")
    func nilURLAndCancel() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/held.png")
            let view = RecordingView()
            view.setImage(with: origin.url("/held.png?gate=never"), placeholder: Self.placeholder, pipeline: pipeline)
            await origin.wait { $0.requests.count == 1 }
            view.setImage(with: nil as URL?, placeholder: nil, pipeline: pipeline)
            #expect(view.widths == [1, nil])
            await pipeline.waitUntilIdle()
            #expect(pipeline.statistics.stopped == 1)

            view.setImage(with: origin.url("/held.png?gate=never&n=2"), placeholder: Self.placeholder, pipeline: pipeline)
            await origin.wait { $0.requests.count == 2 }
            view.cancelImageLoad()
            await pipeline.waitUntilIdle()
            #expect(pipeline.statistics.stopped == 2)
            #expect(view.widths == [1, nil, 1])
        }
    }

    @Test("a failure calls failure with the error and leaves the placeholder")
    func failure() async throws {
        try await withOrigin { origin, pipeline in
            let view = RecordingView()
            let result = await Self.load(view, origin.url("/missing.png"), pipeline: pipeline)
            guard case .failure(let error) = result else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.code == .httpStatus(404))
            #expect(view.widths == [1])
        }
    }

    @Test("a target that goes away cancels its load")
    func targetGoesAway() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("png/basn2c08.png"), at: "/held.png")
            var view: RecordingView? = RecordingView()
            weak let weakView = view
            view?.setImage(with: origin.url("/held.png?gate=never"), placeholder: Self.placeholder, pipeline: pipeline)
            await origin.wait { $0.requests.count == 1 }
            view = nil
            #expect(weakView == nil)
            await pipeline.waitUntilIdle()
            #expect(pipeline.statistics.stopped == 1)
            await origin.wait { $0.openConnections == 0 }
        }
    }
}

/// Placeholders recorded in the disk cache's index and shown by display targets.
@MainActor
@Suite("Stored placeholders", .timeLimit(.minutes(6)))
struct StoredPlaceholderTests {
    @Test("placeholder(for:) makes the ThumbHash once; a new pipeline on the same disk cache reads it from the index with no request and no decode")
    func recordedInIndex() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try Corpus.data("jpeg/video-001.jpeg")
        var expected: ThumbHash?
        var url: URL?
        try await withOrigin(configure: { $0.diskCache = try? DiskCache(configuration: .init(directory: directory)) }) { origin, pipeline in
            var route = TestOrigin.Route(body: data)
            route.headers = [("Cache-Control", "max-age=3600")]
            origin.setRoute("/photo.jpg", route)
            let served = origin.url("/photo.jpg")
            url = served
            #expect(pipeline.storedPlaceholder(for: ImageRequest(url: served)) == nil)
            let made = try await pipeline.placeholder(for: ImageRequest(url: served, processors: [.grayscale]))
            // The hash of the original fitted to 100 pixels (from memory: no second request).
            expected = try ThumbHash(image: try await pipeline.image(for: ImageRequest(url: served, thumbnail: .init(maxPixelSize: 100))))
            #expect(made.bytes == expected?.bytes)
            pipeline.configuration.diskCache?.flush()
            #expect(pipeline.storedPlaceholder(for: ImageRequest(url: served))?.bytes == expected?.bytes)
            #expect(origin.log.requests.count == 1)
        }
        // A new process, in effect: nothing in memory, the origin gone.
        var configuration = ImagePipeline.Configuration()
        configuration.diskCache = try DiskCache(configuration: .init(directory: directory))
        let fresh = ImagePipeline(configuration: configuration)
        let request = ImageRequest(url: try #require(url))
        #expect(fresh.storedPlaceholder(for: request)?.bytes == expected?.bytes)
        #expect(try await fresh.placeholder(for: request).bytes == expected?.bytes)
        #expect(fresh.statistics.decodes == 0)
    }

    @Test("a display target with .stored shows the recorded ThumbHash, then the image; without one, nothing, then the image")
    func displayShowsStored() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withOrigin(configure: { $0.diskCache = try? DiskCache(configuration: .init(directory: directory)) }) { origin, pipeline in
            let url = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let hash = try await pipeline.placeholder(for: ImageRequest(url: url))
            pipeline.configuration.diskCache?.flush()
            pipeline.configuration.memoryCache?.removeAll()
            let view = RecordingView()
            let result = await withCheckedContinuation { continuation in
                view.setImage(
                    with: ImageRequest(url: url), placeholder: .stored, pipeline: pipeline,
                    success: { continuation.resume(returning: Result<ImageResponse, ImagoError>.success($0)) },
                    failure: { continuation.resume(returning: .failure($0)) })
            }
            #expect((try? result.get()) != nil)
            #expect(view.shown.count == 2)
            #expect(view.shown.first??.pixels == hash.render().pixels)
            #expect(view.widths.last == 150)
            let other = RecordingView()
            other.setImage(with: ImageRequest(url: origin.url("/none.jpg?gate=never")), placeholder: .stored, pipeline: pipeline)
            #expect(other.widths == [nil])
            other.cancelImageLoad()
        }
    }
}
