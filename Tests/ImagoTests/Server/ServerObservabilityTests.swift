import Foundation
import ImagoServer
import InMemoryTracing
import Testing
import Tracing

/// What a made variant reports: a span for the work with one child per stage, placed when each
/// stage ran, and the fetch, decode + process and encode histograms in `/metrics`.
@Suite("imago serve observability", .timeLimit(.minutes(2)))
struct ServerObservabilityTests {
    @Test("a new variant traces fetch, decode, process and encode as children of its work, in order; a kept repeat traces nothing; a failure is an error span")
    func stageSpans() async throws {
        let tracer = InMemoryTracer()
        try await withServer(tracer: tracer) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            // A blur makes a processor run after the decode (the resize folds into it).
            let path = ServerHarness.path(photo.absoluteString, ["rs:fit:64:64", "bl:1"], extension: "webp")
            #expect(try await server.get(path).status == 200)

            let spans = tracer.popFinishedSpans()
            let work = try #require(spans.first { $0.operationName == "imago.variant" })
            #expect(work.attributes["imago.source"]?.toSpanAttribute() == "network")
            #expect(work.attributes["imago.format"]?.toSpanAttribute() == "webp")
            let names = ["imago.fetch", "imago.decode", "imago.process", "imago.encode"]
            let stages = try names.map { name in try #require(spans.first { $0.operationName == name }, "\(name)") }
            #expect(spans.count == 5)
            for stage in stages {
                #expect(stage.traceID == work.traceID)
                #expect(stage.parentSpanID == work.spanID)
                #expect(stage.startInstant.nanosecondsSinceEpoch <= stage.endInstant.nanosecondsSinceEpoch)
                #expect(work.startInstant.nanosecondsSinceEpoch <= stage.startInstant.nanosecondsSinceEpoch)
                #expect(stage.endInstant.nanosecondsSinceEpoch <= work.endInstant.nanosecondsSinceEpoch)
            }
            for (earlier, later) in zip(stages, stages.dropFirst()) {
                #expect(earlier.endInstant.nanosecondsSinceEpoch <= later.startInstant.nanosecondsSinceEpoch)
            }

            #expect(try await server.get(path).status == 200)
            #expect(tracer.popFinishedSpans().isEmpty)

            #expect(try await server.get(ServerHarness.path(server.origin.url("/missing.jpg").absoluteString, ["w:10"])).status == 404)
            let failed = tracer.popFinishedSpans()
            #expect(failed.map(\.operationName) == ["imago.variant"])
            #expect(failed.first?.status?.code == .error)
            #expect(failed.first?.errors.count == 1)

            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            for histogram in ["fetch", "decode_process", "encode"] {
                #expect(metrics.contains("imago_serve_\(histogram)_duration_seconds_count 1"), "\(histogram)")
            }
        }
    }
}
