import Foundation
import Imago
@testable import ImagoServer
import InMemoryTracing
import Testing
import Tracing

/// What a made variant reports: a span for the work with one child per stage, placed when each
/// stage ran, and the fetch, decode + process and encode histograms in `/metrics`.
@Suite("imago serve observability", .timeLimit(.minutes(6)))
struct ServerObservabilityTests {
    @Test(
        "a request's span holds the variant's, which holds fetch, decode, process and encode in order; a kept repeat is a request span alone; a failure is an error span"
    )
    func stageSpans() async throws {
        let tracer = InMemoryTracer()
        try await withServer(tracer: tracer) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            // A blur makes a processor run after the decode (the resize folds into it).
            let path = ServerHarness.path(photo.absoluteString, ["rs:fit:64:64", "bl:1"], extension: "webp")
            #expect(try await server.get(path).status == 200)

            let spans = tracer.popFinishedSpans()
            let request = try #require(spans.first { $0.operationName == "GET" })
            #expect(request.kind == .server && request.parentSpanID == nil)
            #expect(request.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(request.attributes["imago.served_from"]?.toSpanAttribute() == "network")
            let work = try #require(spans.first { $0.operationName == "imago.variant" })
            #expect(work.traceID == request.traceID && work.parentSpanID == request.spanID)
            #expect(work.attributes["imago.source"]?.toSpanAttribute() == "network")
            #expect(work.attributes["imago.format"]?.toSpanAttribute() == "webp")
            let names = ["imago.fetch", "imago.decode", "imago.process", "imago.encode"]
            let stages = try names.map { name in try #require(spans.first { $0.operationName == name }, "\(name)") }
            #expect(spans.count == 6)
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
            let kept = tracer.popFinishedSpans()
            #expect(kept.map(\.operationName) == ["GET"])
            #expect(kept.first?.attributes["imago.served_from"]?.toSpanAttribute() == "variant-memory")

            #expect(try await server.get(ServerHarness.path(server.origin.url("/missing.jpg").absoluteString, ["w:10"])).status == 404)
            let failed = tracer.popFinishedSpans()
            #expect(failed.map(\.operationName) == ["imago.variant", "GET"])
            #expect(failed.first?.status?.code == .error)
            #expect(failed.first?.errors.count == 1)
            #expect(failed.last?.attributes["http.response.status_code"]?.toSpanAttribute() == 404)
            #expect(failed.first?.parentSpanID == failed.last?.spanID)

            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            for histogram in ["fetch", "decode_process", "encode"] {
                #expect(metrics.contains("imago_serve_\(histogram)_duration_seconds_count 1"), "\(histogram)")
            }
        }
    }

    @Test("PROMETHEUS_NAMESPACE: every name in /metrics starts with it, the pipeline's too; one that is no name stops the server")
    func namespace() async throws {
        let configuration = try ServerSettings.configuration(["IMGPROXY_PROMETHEUS_NAMESPACE": "edge", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1"])
            .configuration
        try await withServer({ $0 = configuration }) { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            #expect(try await server.get(ServerHarness.path(photo.absoluteString, ["rs:fit:64:64"])).status == 200)
            let text = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            let names = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }.map { String($0.prefix { $0 != "{" && $0 != " " }) }
            #expect(names.contains("edge_imago_serve_requests_total"))
            #expect(names.contains { $0.hasPrefix("edge_imago_") && !$0.hasPrefix("edge_imago_serve_") }, "the pipeline's metrics: \(Set(names))")
            #expect(names.allSatisfy { $0.hasPrefix("edge_") }, "\(names.filter { !$0.hasPrefix("edge_") })")
        }
        for bad in ["9lives", "a-b", "a b"] {
            #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_PROMETHEUS_NAMESPACE": bad]) }
        }
    }

    @Test("/metrics says what is kept, part by part (the variant's bytes, the path's), and the process's resident memory and glibc heap by kind")
    func memoryByPart() async throws {
        try await withServer { server in
            let photo = server.origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
            let answer = try await server.get(ServerHarness.path(photo.absoluteString, ["rs:fit:64:64"], extension: "png"))
            #expect(answer.status == 200)
            let metrics = String(decoding: try await server.get("/metrics").body, as: UTF8.self)
            func value(_ name: String) -> Int64? {
                metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int64($0) }
            }
            let variants = try #require(value(#"imago_serve_memory_part_bytes{part="variants"}"#), "\(metrics)")
            #expect(variants >= Int64(answer.body.count) && variants == Int64(server.service.memoryReport.bytes(of: "variants") ?? -1))
            #expect(try #require(value(#"imago_serve_memory_part_bytes{part="paths"}"#)) > 0)
            #expect(value(#"imago_serve_memory_part_bytes{part="resumable"}"#) == 0)
            #expect(value(#"imago_serve_kept_entries{kind="variants"}"#) == 1 && value(#"imago_serve_kept_entries{kind="paths"}"#) == 1)
            // The origin keeps its connection alive; the source's was given back to the pool.
            #expect(try #require(value(#"imago_serve_kept_entries{kind="connections"}"#)) >= 1)
            #expect(value(#"imago_serve_kept_entries{kind="color_transforms"}"#) != nil)
            #expect(try #require(value(#"imago_serve_resident_bytes{kind="anonymous"}"#)) > 1 << 20)
            #expect(try #require(value(#"imago_serve_resident_bytes{kind="file"}"#)) > 0)
            let arena = try #require(value(#"imago_serve_heap_bytes{kind="arena"}"#))
            let inUse = try #require(value(#"imago_serve_heap_bytes{kind="in_use"}"#))
            let freeHeld = try #require(value(#"imago_serve_heap_bytes{kind="free_held"}"#))
            // A sanitizer's allocator replaces glibc's, whose counts are then all zero.
            if !runsUnderSanitizer {
                #expect(inUse > 0 && inUse + freeHeld == arena, "mallinfo2: uordblks + fordblks is the arena")
            }
        }
    }

    @Test("shutDown empties what the service keeps (variants, paths, overlays, colour caches) and writes the disk cache's queued entries")
    func shutDownLetsGo() async throws {
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        try await withServer({ $0.cacheDirectory = cache }) { server in
            // A PNG whose gAMA makes a colour profile and a transform.
            let png = server.origin.serve(try Corpus.data("png/basn2c08.png"), at: "/gamma.png")
            #expect(try await server.get(ServerHarness.path(png.absoluteString, ["rs:fit:16:16"], extension: "png")).status == 200)
            let before = server.service.memoryReport
            #expect(before.entries(of: "variants") == 1 && (before.bytes(of: "variants") ?? 0) > 0)
            #expect((before.entries(of: "color_transforms") ?? 0) >= 1 && (before.entries(of: "color_profiles") ?? 0) >= 1)
            #expect(before.bytes(of: "disk_pending") != nil && before.entries(of: "disk_rows") != nil)
            await server.stop()
            await server.stopped()
            await server.service.shutDown()
            let after = server.service.memoryReport
            let emptied = after.bytes.allSatisfy { $0.bytes == 0 }
            #expect(emptied, "\(after.bytes)")
            for kind in ["variants", "paths", "color_transforms", "color_profiles"] {
                #expect(after.entries(of: kind) == 0, "\(kind)")
            }
            let stored = try DiskCache(configuration: .init(directory: cache)).count
            #expect(stored == 2, "the source and the variant")
        }
    }
}
