import Foundation
import ImagoTestSupport
import Testing

@testable import Imago

@Suite("Rate limiter", .timeLimit(.minutes(6)))
struct RateLimiterTests {
    @Test("a token bucket lets a burst through, then one request per 1/rate seconds, and fills no higher than the burst")
    func bucket() {
        let start = ContinuousClock.now
        var bucket = TokenBucket(RateLimit(requestsPerSecond: 10, burst: 3), now: start)
        let burst = (0..<4).map { _ in bucket.take(at: start) }
        #expect(burst == [true, true, true, false])
        let wait = bucket.timeUntilToken(at: start)
        #expect(wait > .milliseconds(99) && wait <= .milliseconds(100))
        let early = bucket.take(at: start + .milliseconds(99))
        let onTime = bucket.take(at: start + .milliseconds(100))
        #expect(!early && onTime)
        // An hour idle refills only to the burst.
        let later = start + .seconds(3600)
        let refilled = (0..<4).map { _ in bucket.take(at: later) }
        #expect(refilled == [true, true, true, false])
    }

    @Test("hostile limits are made sane: no rate of zero, infinity or NaN, a burst of at least one")
    func sanitised() {
        for rate in [0, -1, .infinity, .nan] as [Double] {
            #expect(RateLimit(requestsPerSecond: rate).requestsPerSecond == 80)
        }
        #expect(RateLimit(burst: 0).burst == 1)
    }

    @Test("past the burst a transfer waits for its turn; cancelled while waiting, it is never made")
    func cancelledWhileWaiting() async throws {
        // One request now, the next in 100 s: far past the test, so nothing depends on timing.
        try await withOrigin(configure: { $0.rateLimit = RateLimit(requestsPerSecond: 0.01, burst: 1) }) { origin, pipeline in
            let first = origin.serve(payload(1000, seed: 1), at: "/first.jpg")
            let second = origin.serve(payload(1000, seed: 2), at: "/second.jpg")
            _ = try await pipeline.data(for: ImageRequest(url: first))
            let failed = Countdown(1)
            let outcome = Recorder<Result<DataResponse, ImagoError>>()
            let task = pipeline.dataTask(with: ImageRequest(url: second)) { result in
                outcome.append(result)
                failed.signal()
            }
            let limiter = try #require(pipeline.rateLimiter)
            while limiter.waiting == 0 { await Task.yield() }
            task.cancel()
            await failed.wait()
            #expect(throws: ImagoError.self) { try outcome.all.first?.get() }
            #expect(limiter.waiting == 0)
            #expect(origin.log.requests.map(\.path) == ["/first.jpg"])
            #expect(pipeline.statistics.transfers == 1)
        }
    }

    @Test("waiting transfers go as tokens come, and all finish")
    func spreads() async throws {
        try await withOrigin(configure: { $0.rateLimit = RateLimit(requestsPerSecond: 200, burst: 1) }) { origin, pipeline in
            let urls = (0..<6).map { origin.serve(payload(500, seed: UInt8($0)), at: "/\($0).jpg") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for url in urls { group.addTask { _ = try await pipeline.data(for: ImageRequest(url: url)) } }
                try await group.waitForAll()
            }
            #expect(origin.log.requests.count == 6)
            #expect(pipeline.rateLimiter?.waiting == 0)
        }
    }
}
