import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Coalescing and cancellation", .timeLimit(.minutes(6)))
struct CoalescingTests {
    @Test("100 concurrent loads of one URL make one request at the origin")
    func hundredLoadsOneTransfer() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(100_000)
            origin.serve(body, at: "/one.jpg")
            // The origin holds its answer until all 100 handles exist (they register as they are
            // made), so none can arrive after the transfer has ended, however loaded the machine.
            let url = origin.url("/one.jpg?gate=hundred")
            let handles = (0..<100).map { _ in pipeline.dataTask(with: ImageRequest(url: url)) }
            await origin.wait { $0.requests.count == 1 }
            origin.release("hundred")
            var results: [Data] = []
            for handle in handles { results.append(try await handle.response.data) }
            #expect(results.count == 100)
            #expect(results.allSatisfy { $0 == body })
            #expect(origin.log.requests.count == 1)
            #expect(pipeline.statistics.transfers == 1)
            #expect(pipeline.statistics.coalesced == 99)
        }
    }

    @Test("queued handles coalesce too")
    func queuedCoalesce() async throws {
        try await withOrigin(configure: { $0.maxConcurrentDownloads = 1 }) { origin, pipeline in
            origin.serve(payload(10), at: "/blocker.jpg")
            let queuedURL = origin.serve(payload(20), at: "/queued.jpg")
            let blocker = pipeline.dataTask(with: ImageRequest(url: origin.url("/blocker.jpg?gate=open")))
            await origin.wait { $0.requests.count == 1 }
            let handles = (0..<10).map { _ in pipeline.dataTask(with: ImageRequest(url: queuedURL)) }
            #expect(pipeline.activity.transfers == 2)
            origin.release("open")
            _ = try await blocker.response
            for handle in handles { _ = try await handle.response }
            #expect(origin.log.requests(to: "/queued.jpg").count == 1)
        }
    }

    @Test("a response says whether it joined a transfer another request started: one did not, the other 9 did")
    func joinedTransferIsVisible() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/shared.jpg")
            let url = origin.url("/shared.jpg?gate=go")
            let handles = (0..<10).map { _ in pipeline.imageTask(with: ImageRequest(url: url)) }
            await origin.wait { $0.requests.count == 1 }
            origin.release("go")
            var joined: [Bool] = []
            for handle in handles { joined.append(try await handle.response.joinedTransfer) }
            #expect(joined == [false] + Array(repeating: true, count: 9))
            #expect(pipeline.statistics.coalesced == 9)
            // A later request served from memory joined nothing.
            let again = try await pipeline.response(for: ImageRequest(url: url))
            #expect(again.source == .memory && !again.joinedTransfer)
        }
    }

    @Test("cancel 99 of 100 handles: each completes at once with cancelled, exactly once; the last still completes")
    func cancelAllButOne() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(100_000)
            origin.serve(body, at: "/shared.jpg")
            let url = origin.url("/shared.jpg?gate=go")
            let outcomes = Recorder<(Int, Result<Int, ImagoError>)>()
            let handles = (0..<100).map { index in
                pipeline.dataTask(
                    with: ImageRequest(url: url),
                    completion: { result in
                        outcomes.append((index, result.map(\.data.count)))
                    })
            }
            await origin.wait { $0.requests.count == 1 }
            for handle in handles.dropLast() {
                handle.cancel()
                #expect(handle.isFinished)
                handle.cancel()  // a second cancel changes nothing
            }
            #expect(outcomes.all.count == 99)
            #expect(outcomes.all.allSatisfy { (try? $0.1.get()) == nil && $0.0 < 99 })
            #expect(outcomes.all.allSatisfy { if case .failure(let error) = $0.1 { error.code == .cancelled } else { false } })
            origin.release("go")
            let last = try await handles[99].response
            #expect(last.data == body)
            #expect(outcomes.all.count == 100)
            #expect(origin.log.requests.count == 1)
            #expect(origin.log.abortedResponses == 0)
        }
    }

    @Test("cancel every handle of a running transfer: the origin sees the connection closed mid-response")
    func cancelAllClosesConnection() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(1_000_000), at: "/slow.jpg")
            let url = origin.url("/slow.jpg?rate=20000")
            let firstBytes = Countdown(1)
            let handles = (0..<5).map { _ in
                pipeline.dataTask(with: ImageRequest(url: url), progress: { _, _, _ in firstBytes.signal() })
            }
            await firstBytes.wait()
            for handle in handles { handle.cancel() }
            await origin.wait { $0.abortedResponses == 1 && $0.openConnections == 0 }
            await pipeline.waitUntilIdle()
            #expect(pipeline.statistics.stopped == 1)
            for handle in handles {
                await #expect(throws: ImagoError.self) { try await handle.response }
            }
        }
    }

    @Test("cancelling the Swift task awaiting data(for:) cancels its handle")
    func swiftCancellation() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(100), at: "/held.jpg")
            let url = origin.url("/held.jpg?gate=never")
            let task = Task { try await pipeline.data(for: ImageRequest(url: url)) }
            await origin.wait { $0.requests.count == 1 }
            task.cancel()
            let result = await task.result
            #expect(throws: ImagoError.self) { try result.get() }
            await origin.wait { $0.openConnections == 0 }
        }
    }

    @Test("a new request after all handles cancelled starts a fresh transfer")
    func freshTransferAfterCancel() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(100)
            origin.serve(body, at: "/again.jpg")
            let held = origin.url("/again.jpg?gate=later")
            let first = pipeline.dataTask(with: ImageRequest(url: held))
            await origin.wait { $0.requests.count == 1 }
            first.cancel()
            origin.release("later")
            let data = try await pipeline.data(for: ImageRequest(url: held)).data
            #expect(data == body)
            #expect(origin.log.requests.count == 2)
        }
    }

    @Test("different headers or credentials make different transfers")
    func keysSeparate() async throws {
        try await withOrigin { origin, pipeline in
            let url = origin.serve(payload(100), at: "/k.jpg")
            async let a = pipeline.data(for: ImageRequest(url: url))
            async let b = pipeline.data(for: ImageRequest(url: url, headers: ["X-Variant": "2"]))
            async let c = pipeline.data(for: ImageRequest(url: url, credentials: .init(user: "u", password: "p")))
            _ = try await (a, b, c)
            #expect(origin.log.requests.count == 3)
        }
    }

    @Test("requests differing only in trace headers share one transfer, which carries the first one's")
    func traceHeadersShareATransfer() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(100), at: "/t.jpg")
            let url = origin.url("/t.jpg?gate=traced")
            var first = ImageRequest(url: url)
            first.traceHeaders["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            var second = ImageRequest(url: url)
            second.traceHeaders["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            #expect(first.transferKey == second.transferKey && first != second)
            let a = pipeline.dataTask(with: first)
            await origin.wait { $0.requests.count == 1 }
            let b = pipeline.dataTask(with: second)
            origin.release("traced")
            _ = try await a.response
            _ = try await b.response
            #expect(origin.log.requests.count == 1)
            #expect(origin.log.requests.first?.header("traceparent") == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        }
    }
}

@Suite("Scheduling", .timeLimit(.minutes(6)))
struct SchedulingTests {
    /// Blocks the only download slot, queues `names` with `priorities`, releases, and returns the
    /// order in which the origin saw the queued requests.
    private func order(
        _ configure: @escaping (inout ImagePipeline.Configuration) -> Void,
        queue: [(String, ImageRequest.Priority)],
        whileQueued: @escaping ([String: DataTask]) -> Void = { _ in }
    ) async throws -> [String] {
        var seen: [String] = []
        try await withOrigin(configure: {
            $0.maxConcurrentDownloads = 1
            configure(&$0)
        }) { origin, pipeline in
            origin.serve(payload(10), at: "/blocker.jpg")
            let blocker = pipeline.dataTask(with: ImageRequest(url: origin.url("/blocker.jpg?gate=open")))
            await origin.wait { $0.requests.count == 1 }
            var handles: [String: DataTask] = [:]
            for (name, priority) in queue {
                let url = origin.serve(payload(10), at: "/\(name).jpg")
                handles[name] = pipeline.dataTask(with: ImageRequest(url: url, priority: priority))
            }
            whileQueued(handles)
            origin.release("open")
            _ = try await blocker.response
            for handle in handles.values { _ = try await handle.response }
            seen = origin.log.requests.dropFirst().map { String($0.path.dropFirst().dropLast(4)) }
        }
        return seen
    }

    @Test("FIFO by default with maxConcurrentDownloads = 1")
    func fifo() async throws {
        let seen = try await order({ _ in }, queue: [("a", .normal), ("b", .normal), ("c", .normal)])
        #expect(seen == ["a", "b", "c"])
    }

    @Test("LIFO on request")
    func lifo() async throws {
        let seen = try await order({ $0.executionOrder = .lifo }, queue: [("a", .normal), ("b", .normal), ("c", .normal)])
        #expect(seen == ["c", "b", "a"])
    }

    @Test("higher priorities leave the queue first")
    func priorities() async throws {
        let seen = try await order({ _ in }, queue: [("low", .low), ("veryHigh", .veryHigh), ("normal", .normal), ("veryLow", .veryLow), ("high", .high)])
        #expect(seen == ["veryHigh", "high", "normal", "low", "veryLow"])
    }

    @Test("changing a live handle's priority re-orders the queue")
    func changePriority() async throws {
        let seen = try await order({ _ in }, queue: [("a", .normal), ("b", .normal), ("c", .normal)]) { handles in
            handles["c"]!.priority = .veryHigh
            handles["a"]!.priority = .veryLow
        }
        #expect(seen == ["c", "b", "a"])
    }

    @Test("a shared transfer runs at the highest priority of its handles, and drops back when that handle goes")
    func sharedPriority() async throws {
        try await withOrigin(configure: { $0.maxConcurrentDownloads = 1 }) { origin, pipeline in
            origin.serve(payload(10), at: "/blocker.jpg")
            let blocker = pipeline.dataTask(with: ImageRequest(url: origin.url("/blocker.jpg?gate=open")))
            await origin.wait { $0.requests.count == 1 }
            let a = origin.serve(payload(10), at: "/a.jpg")
            let b = origin.serve(payload(10), at: "/b.jpg")
            let c = origin.serve(payload(10), at: "/c.jpg")
            let handles = [
                pipeline.dataTask(with: ImageRequest(url: a, priority: .low)),
                pipeline.dataTask(with: ImageRequest(url: b, priority: .normal)),
                pipeline.dataTask(with: ImageRequest(url: c, priority: .low)),
            ]
            // Joining with veryHigh lifts c's transfer; joining a with high then leaving drops it back.
            let lift = pipeline.dataTask(with: ImageRequest(url: c, priority: .veryHigh))
            let transient = pipeline.dataTask(with: ImageRequest(url: a, priority: .high))
            transient.cancel()
            origin.release("open")
            _ = try await blocker.response
            for handle in handles + [lift] { _ = try await handle.response }
            #expect(origin.log.requests.dropFirst().map(\.path) == ["/c.jpg", "/b.jpg", "/a.jpg"])
        }
    }

    @Test("at most maxConcurrentDownloads transfers are in flight")
    func concurrencyLimit() async throws {
        try await withOrigin(configure: { $0.maxConcurrentDownloads = 3 }) { origin, pipeline in
            for index in 0..<10 { origin.serve(payload(10), at: "/\(index).jpg") }
            let handles = (0..<10).map { pipeline.dataTask(with: ImageRequest(url: origin.url("/\($0).jpg?gate=g"))) }
            await origin.wait { $0.requests.count == 3 }
            #expect(pipeline.activity.running == 3)
            #expect(origin.log.requests.count == 3)
            origin.release("g")
            for handle in handles { _ = try await handle.response }
            #expect(origin.log.requests.count == 10)
        }
    }
}
