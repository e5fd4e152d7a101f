import Foundation
import Imago
import ImagoTestSupport
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing

@Suite("Events, logs and metrics", .timeLimit(.minutes(6)))
struct ObservabilityTests {
    @Test("the event stream tells start, response, coalescing, finish and stop")
    func events() async throws {
        try await withOrigin { origin, pipeline in
            let events = pipeline.events()
            let url = origin.serve(payload(1000), at: "/ev.jpg")
            async let a = pipeline.data(for: ImageRequest(url: url))
            async let b = pipeline.data(for: ImageRequest(url: url))
            _ = try await (a, b)
            let held = origin.url("/ev.jpg?gate=never")
            let task = pipeline.dataTask(with: ImageRequest(url: held))
            await origin.wait { $0.requests.count == 2 }
            task.cancel()

            var names: [String] = []
            for await event in events {
                switch event {
                case .started(let eventURL): names.append("started \(eventURL == url ? "a" : "held")")
                case .coalesced: names.append("coalesced")
                case .receivedResponse(_, let status, let expected): names.append("response \(status ?? 0) \(expected ?? -1)")
                case .finished(_, .success(let count)): names.append("finished \(count)")
                case .finished(_, .failure(let error)): names.append("failed \(error.kind)")
                case .stopped: names.append("stopped")
                }
                if names.last == "stopped" { break }
            }
            // The second load may join before or after the transfer starts.
            #expect(names.filter { $0 != "coalesced" } == ["started a", "response 200 1000", "finished 1000", "started held", "stopped"])
            #expect(names.filter { $0 == "coalesced" }.count == 1)
        }
    }

    @Test("debug log lines name the transfer and its outcome")
    func logs() async throws {
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { _ in logs })
        logger.logLevel = .debug
        try await withOrigin(configure: { $0.logger = logger }) { origin, pipeline in
            let url = origin.serve(payload(10), at: "/log.png")
            _ = try await pipeline.data(for: ImageRequest(url: url))
            _ = await loadError(pipeline, ImageRequest(url: origin.url("/log.png?status=500")))
        }
        let messages = logs.entries.map { "\($0.level) \($0.message)" }
        #expect(messages.contains("debug transfer started"))
        #expect(messages.contains("debug transfer finished"))
        #expect(messages.contains("debug transfer failed"))
        #expect(logs.entries.contains { $0.message == "transfer failed" && "\($0.metadata["error"] ?? "")".contains("HTTP status 500") })
    }

    @Test("metrics count transfers, bytes, coalesced requests and errors by kind")
    func metrics() async throws {
        let metrics = TestMetrics()
        try await withOrigin(configure: { $0.metricsFactory = metrics }) { origin, pipeline in
            origin.serve(payload(1234), at: "/m.png")
            // The origin holds its answer until both handles exist, so the second joins the first
            // however slowly the machine runs (ThreadSanitizer's did not, once).
            let url = origin.url("/m.png?gate=both")
            let handles = (0..<2).map { _ in pipeline.dataTask(with: ImageRequest(url: url)) }
            await origin.wait { $0.requests.count == 1 }
            origin.release("both")
            for handle in handles { _ = try await handle.response }
            _ = await loadError(pipeline, ImageRequest(url: origin.url("/m.png?status=404")))
            _ = await loadError(pipeline, ImageRequest(url: origin.url("/m.png?length=5000")))
        }
        #expect(try metrics.expectCounter("imago.transfers").totalValue == 3)
        #expect(try metrics.expectCounter("imago.bytes").totalValue == 1234)
        #expect(try metrics.expectCounter("imago.coalesced").totalValue == 1)
        #expect(try metrics.expectCounter("imago.errors", [("kind", "httpStatus")]).totalValue == 1)
        #expect(try metrics.expectCounter("imago.errors", [("kind", "truncated")]).totalValue == 1)
        #expect(try metrics.expectTimer("imago.transfer.duration").values.count == 3)
    }

    @Test("an error's message names the stage, the URL and the cause, and hides passwords")
    func errorMessage() {
        let error = ImagoError(.tooLarge(limit: 100), url: URL(string: "https://user:hunter2@example.com/a.png")!)
        #expect(error.description == "loading https://user:***@example.com/a.png failed: response larger than the limit of 100 bytes")
    }
}
