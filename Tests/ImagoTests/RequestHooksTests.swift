import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// What users of Nuke and Kingfisher ask for: a custom cache key, a request modifier, retries.
@Suite("Request hooks", .timeLimit(.minutes(6)))
struct RequestHooksTests {
    static let photo = try! Corpus.data("jpeg/video-001.jpeg")

    @Test("signed URLs with one imageID share the memory cache, the disk cache and a transfer")
    func imageID() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withOrigin(configure: { $0.diskCache = try? DiskCache(configuration: .init(directory: directory)) }) { origin, pipeline in
            var route = TestOrigin.Route(body: Self.photo)
            route.headers = [("Cache-Control", "max-age=600")]
            origin.setRoute("/signed.jpg", route)
            func request(_ signature: Int) -> ImageRequest {
                var request = ImageRequest(url: origin.url("/signed.jpg?sig=\(signature)&gate=go"))
                request.imageID = "avatar-42"
                return request
            }
            // Two signatures at once: one transfer.
            let first = pipeline.imageTask(with: request(1)), second = pipeline.imageTask(with: request(2))
            await origin.wait { $0.requests.count == 1 }
            origin.release("go")
            _ = try await first.response
            let secondSource = try await second.response.source
            #expect(secondSource == .network)
            #expect(pipeline.statistics.coalesced == 1)
            // A third signature: from memory.
            #expect(pipeline.cachedResponse(for: request(3)) != nil)
            await pipeline.waitUntilIdle()
            pipeline.configuration.diskCache?.flush()
            // A new pipeline, a fourth signature: from disk.
            var configuration = ImagePipeline.Configuration()
            configuration.diskCache = pipeline.configuration.diskCache
            configuration.memoryCache = MemoryCache()
            let fresh = ImagePipeline(configuration: configuration)
            let freshSource = try await fresh.response(for: request(4)).source
            #expect(freshSource == .disk)
            #expect(origin.log.requests.count == 1)
            // Without an imageID the signatures are different images.
            #expect(pipeline.cachedResponse(for: ImageRequest(url: origin.url("/signed.jpg?sig=3&gate=go"))) == nil)
        }
    }

    @Test("the request modifier runs before every attempt: a refreshed token reaches the origin each time")
    func requestModifier() async throws {
        let tokens = Locked(0)
        try await withOrigin(configure: { configuration in
            configuration.retryPolicy = RetryPolicy(initialDelay: .milliseconds(1))
            configuration.requestModifier = { request in
                var request = request
                let token = tokens.withLock { count in
                    count += 1
                    return count
                }
                request.headers.append(name: "Authorization", value: "Bearer token-\(token)")
                return request
            }
        }) { origin, pipeline in
            origin.serve(Self.photo, at: "/private.jpg")
            let data = try await pipeline.data(for: ImageRequest(url: origin.url("/private.jpg?fail_first=1"))).data
            #expect(data == Self.photo)
            #expect(origin.log.requests.map { $0.header("authorization") } == ["Bearer token-1", "Bearer token-2"])
            #expect(pipeline.statistics.retries == 1)
        }
    }

    @Test("a modifier that throws fails the transfer with its error, and nothing is requested")
    func throwingModifier() async throws {
        struct NoToken: Error {}
        try await withOrigin(configure: { $0.requestModifier = { _ in throw NoToken() } }) { origin, pipeline in
            origin.serve(Self.photo, at: "/private.jpg")
            let error = await loadError(pipeline, ImageRequest(url: origin.url("/private.jpg")))
            #expect(error?.code == .loaderFailed && error?.underlying is NoToken)
            #expect(origin.log.requests.isEmpty)
        }
    }

    @Test(
        "retries: transient statuses until the policy's limit, Retry-After honoured up to the maximum, other failures once",
        arguments: [
            // query, expected requests, succeeds
            ("fail_first=2", 3, true),
            ("fail_first=3", 3, false),
            ("fail_first=1&fail_status=404", 1, false),
            ("fail_first=1&fail_status=429&retry_after=0", 2, true),
            ("fail_first=1&fail_status=429&retry_after=3600", 1, false),
            ("fail_first=1&fail_status=502", 2, true),
        ])
    func retries(query: String, requests: Int, succeeds: Bool) async throws {
        try await withOrigin(configure: { $0.retryPolicy = RetryPolicy(maxRetries: 2, initialDelay: .milliseconds(1)) }) { origin, pipeline in
            origin.serve(Self.photo, at: "/flaky.jpg")
            let request = ImageRequest(url: origin.url("/flaky.jpg?" + query))
            if succeeds {
                let data = try await pipeline.data(for: request).data
                #expect(data == Self.photo)
            } else {
                #expect(await loadError(pipeline, request)?.code.httpStatus != nil)
            }
            #expect(origin.log.requests.count == requests)
            #expect(pipeline.statistics.retries == requests - 1)
            // Nothing failed is cached: the next load asks the origin again.
            #expect(pipeline.cachedResponse(for: request) == nil || succeeds)
        }
    }

    @Test("without a policy nothing is retried; a handle cancelled while it waits to retry makes no more requests")
    func noPolicyAndCancelledWait() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(Self.photo, at: "/flaky.jpg")
            #expect(await loadError(pipeline, ImageRequest(url: origin.url("/flaky.jpg?fail_first=1")))?.code == .httpStatus(503))
            #expect(origin.log.requests.count == 1)
        }
        try await withOrigin(configure: { $0.retryPolicy = RetryPolicy(maxDelay: .seconds(30)) }) { origin, pipeline in
            origin.serve(Self.photo, at: "/flaky.jpg")
            let task = pipeline.dataTask(with: ImageRequest(url: origin.url("/flaky.jpg?fail_first=1&retry_after=20")))
            await origin.wait { $0.responses.count == 1 }
            task.cancel()
            await pipeline.waitUntilIdle()
            #expect(origin.log.requests.count == 1)
            #expect(task.isFinished)
        }
    }

    @Test("backoff doubles from the initial delay up to the maximum; Retry-After as seconds or a date")
    func backoff() {
        let policy = RetryPolicy(maxRetries: 5, initialDelay: .milliseconds(250), maxDelay: .seconds(1))
        let unavailable = ImagoError(.httpStatus(503), url: nil)
        #expect(policy.delay(beforeRetry: 1, after: unavailable, retryAfter: nil) == .milliseconds(250))
        #expect(policy.delay(beforeRetry: 2, after: unavailable, retryAfter: nil) == .milliseconds(500))
        #expect(policy.delay(beforeRetry: 4, after: unavailable, retryAfter: nil) == .seconds(1))
        #expect(policy.delay(beforeRetry: 6, after: unavailable, retryAfter: nil) == nil)
        #expect(policy.delay(beforeRetry: 1, after: unavailable, retryAfter: "1") == .seconds(1))
        #expect(policy.delay(beforeRetry: 1, after: unavailable, retryAfter: "2") == nil)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(policy.delay(beforeRetry: 1, after: unavailable, retryAfter: "Tue, 14 Nov 2023 22:13:20 GMT", now: now) == .zero)
        #expect(policy.delay(beforeRetry: 1, after: unavailable, retryAfter: "soon") == .milliseconds(250))
        #expect(policy.delay(beforeRetry: 1, after: ImagoError(.connectionReset, url: nil), retryAfter: nil) != nil)
        #expect(policy.delay(beforeRetry: 1, after: ImagoError(.tlsFailure, url: nil), retryAfter: nil) == nil)
        #expect(policy.delay(beforeRetry: 1, after: ImagoError(.cancelled, url: nil), retryAfter: nil) == nil)
    }
}
