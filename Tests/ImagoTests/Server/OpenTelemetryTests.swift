import AsyncHTTPClient
import Foundation
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's `IMGPROXY_OPEN_TELEMETRY_*` and the standard `OTEL_*` variables: `imago serve`
/// sends its spans, metrics and log records to a real OTLP/HTTP receiver that decodes them with
/// OpenTelemetry's own message definitions (`Tests/Peers/otlp_receiver.py`).
@Suite(
    "OpenTelemetry", .enabled(if: ObjectStorePeer.isInstalled, "needs the peers' venv (opentelemetry-proto): make test installs it"),
    .timeLimit(.minutes(6)))
struct OpenTelemetryTests {
    /// A span as the receiver decoded it.
    struct Span {
        var traceID: String
        var spanID: String
        var parentID: String
        var name: String
        var kind: String
        var attributes: [String: Any]
    }

    @Test(
        "a request's span is the child of its traceparent, the variant's and its stages' spans are its children, the source gets the trace id; metrics and log records arrive"
    )
    func spansMetricsAndLogs() async throws {
        try await withReceiver { receiverPort, exports in try await spansMetricsAndLogs(receiverPort: receiverPort, exports: exports) }
    }

    private func spansMetricsAndLogs(receiverPort: Int, exports: URL) async throws {
        let origin = try await TestOrigin.start()
        let source = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString
        let environment = [
            "IMGPROXY_OPEN_TELEMETRY_ENABLE": "true", "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS": "true", "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS": "true",
            "IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(receiverPort)",
            "OTEL_SERVICE_NAME": "imago-under-test", "OTEL_METRIC_EXPORT_INTERVAL": "200", "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_BLRP_SCHEDULE_DELAY": "100", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]
        let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
        let (traceID, clientSpanID) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let path = "/insecure/rs:fit:40:40/plain/" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") + "@png"
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.headers.add(name: "traceparent", value: "00-\(traceID)-\(clientSpanID)-01")
        request.headers.add(name: "X-Request-Id", value: "traced-1")
        let response = try await client.execute(request, timeout: .seconds(60))
        #expect(response.status.code == 200)
        _ = try await response.body.collect(upTo: 1 << 20)
        // The same again, kept: a span of its own, from variant memory.
        var again = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        again.headers.add(name: "X-Request-Id", value: "kept-2")
        _ = try await client.execute(again, timeout: .seconds(60)).body.collect(upTo: 1 << 20)
        try await client.shutdown()

        // The source fetch carried the client's trace, under a span of the server's.
        let fetch = try #require(origin.log.requests(to: "/photo.jpg").first)
        let sent = try #require(fetch.header("traceparent"), "the source fetch carried no traceparent")
        let parts = sent.split(separator: "-").map(String.init)
        #expect(parts.count == 4 && parts[1] == traceID && parts[2] != clientSpanID, "\(sent)")

        // The exporters send what is left when the server stops.
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0, "\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        try await origin.shutdown()
        let lines = try String(contentsOf: exports, encoding: .utf8).split(separator: "\n")
        let records = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let spans = records.filter { $0["signal"] as? String == "traces" }.flatMap { Self.spans(in: $0["message"]) }

        let server = try #require(spans.first { $0.traceID == traceID && $0.kind == "SPAN_KIND_SERVER" }, "\(spans.map(\.name))")
        #expect(server.parentID == clientSpanID && server.name == "GET")
        #expect(Self.int(server.attributes["http.response.status_code"]) == 200)
        #expect(server.attributes["imago.request_id"] as? String == "traced-1")
        #expect(server.attributes["imago.served_from"] as? String == "network")
        #expect(parts[2] == server.spanID, "the source's traceparent names the request's span")
        let variant = try #require(spans.first { $0.name == "imago.variant" && $0.traceID == traceID })
        #expect(variant.parentID == server.spanID)
        #expect(variant.attributes["imago.format"] as? String == "png")
        #expect(Self.int(variant.attributes["imago.output.width"]) == 40 || Self.int(variant.attributes["imago.output.height"]) == 40)
        #expect(Self.int(variant.attributes["imago.source.bytes"]) ?? 0 > 0)
        let stages = spans.filter { $0.parentID == variant.spanID && $0.traceID == traceID }.map(\.name)
        #expect(Set(stages).isSuperset(of: ["imago.fetch", "imago.decode", "imago.encode"]), "\(stages)")
        let fetchSpan = try #require(spans.first { $0.name == "imago.fetch" && $0.traceID == traceID })
        #expect(fetchSpan.attributes["server.address"] as? String == "127.0.0.1")
        let kept = try #require(spans.first { $0.attributes["imago.request_id"] as? String == "kept-2" })
        #expect(kept.traceID != traceID && kept.parentID.isEmpty && kept.attributes["imago.served_from"] as? String == "variant-memory")
        // The resource names the service as OTEL_SERVICE_NAME says.
        let resources = records.filter { $0["signal"] as? String == "traces" }.flatMap { Self.list($0["message"], "resourceSpans") }
        #expect(resources.contains { Self.attributes(Self.object($0["resource"])?["attributes"])["service.name"] as? String == "imago-under-test" })

        // /metrics' counters as OTLP metrics: the answers by status.
        let metrics = records.filter { $0["signal"] as? String == "metrics" }.flatMap { Self.list($0["message"], "resourceMetrics") }
            .flatMap { Self.list($0, "scopeMetrics") }.flatMap { Self.list($0, "metrics") }
        let requests = try #require(metrics.first { $0["name"] as? String == "imago_serve_requests_total" }, "\(metrics.compactMap { $0["name"] })")
        let points = Self.list(Self.object(requests["sum"]), "dataPoints")
        #expect(points.contains { Self.attributes($0["attributes"])["status"] as? String == "200" && Self.int($0["asInt"]) ?? 0 >= 1 }, "\(points)")

        // Log records: the answers' lines, with their fields.
        let logs = records.filter { $0["signal"] as? String == "logs" }.flatMap { Self.list($0["message"], "resourceLogs") }
            .flatMap { Self.list($0, "scopeLogs") }.flatMap { Self.list($0, "logRecords") }
        #expect(
            logs.contains {
                Self.object($0["body"])?["stringValue"] as? String == "answered" && Self.attributes($0["attributes"])["request_id"] as? String == "traced-1"
            },
            "\(logs.prefix(5))")
        // No signature, key or source URL in anything sent.
        let everything = lines.joined(separator: "\n")
        #expect(!everything.contains("photo.jpg") && !everything.contains("insecure"))
    }

    @Test("to a collector over TLS that asks for a client certificate: the PEM certificates and key given as imgproxy gives them (\\n for line breaks)")
    func mutualTLS() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        for (name, subject, extra) in [("server", "/CN=127.0.0.1", ["-addext", "subjectAltName=IP:127.0.0.1"]), ("client", "/CN=imago", [])] {
            let made = try await runProcess(
                openssl,
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", subject, "-keyout",
                    directory.appendingPathComponent("\(name).key").path,
                    "-out", directory.appendingPathComponent("\(name).pem").path,
                ] + extra)
            #expect(made.status == 0)
        }
        func pem(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8).replacingOccurrences(of: "\n", with: "\\n")
        }
        let tls = ["server.pem", "server.key", "client.pem"].map { directory.appendingPathComponent($0).path }
        try await withReceiver(tls: tls) { receiverPort, exports in
            let environment = [
                "IMGPROXY_OPEN_TELEMETRY_ENABLE": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:\(receiverPort)",
                "OTEL_BSP_SCHEDULE_DELAY": "100", "IMGPROXY_OPEN_TELEMETRY_SERVER_CERT": try pem("server.pem"),
                "IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT": try pem("client.pem"), "IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY": try pem("client.key"),
            ]
            let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/health")
            request.headers.add(name: "X-Request-Id", value: "over-tls")
            _ = try await client.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 16)
            var image = HTTPClientRequest(url: "http://127.0.0.1:\(port)/insecure/w:10/plain/http://127.0.0.1:1/nothing.jpg")
            image.headers.add(name: "X-Request-Id", value: "over-tls")
            _ = try await client.execute(image, timeout: .seconds(30)).body.collect(upTo: 1 << 16)
            try await client.shutdown()
            process.terminate()
            #expect(await ServeCommandTests.waitForExit(process) == 0)
            let text = try String(contentsOf: exports, encoding: .utf8)
            let spans = try text.split(separator: "\n").flatMap { line in
                Self.spans(in: try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["message"])
            }
            #expect(spans.contains { $0.attributes["imago.request_id"] as? String == "over-tls" }, "\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    @Test("a protocol this build cannot send, imgproxy's xray ids, or a certificate that is no PEM stop the server at start naming the variable")
    func refusedAtStart() async throws {
        for (variable, value) in [
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"), ("IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR", "xray"),
        ] {
            let process = Process()
            process.executableURL = ServeCommandTests.executable
            process.arguments = ["serve", "--listen", "127.0.0.1:0"]
            process.environment = ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "1", variable: value]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            #expect(await ServeCommandTests.waitForExit(process) != 0)
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(said.contains(variable) || said.contains("--open-telemetry-trace-id-generator"), "\(variable)=\(value): \(said)")
        }
    }

    /// Runs `body` with a receiver listening on its port and appending what it decodes to its file;
    /// over TLS with `tls` (its certificate, key, and the client CA it asks for).
    private func withReceiver(tls: [String] = [], _ body: (Int, URL) async throws -> Void) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let exports = directory.appendingPathComponent("exports.jsonl")
        _ = FileManager.default.createFile(atPath: exports.path, contents: nil)
        let receiver = try await ObjectStorePeer.start("otlp_receiver.py", [exports.path] + tls)
        do {
            let port = try #require(try JSONSerialization.jsonObject(with: receiver.line) as? [String: Any])["port"] as? Int
            try await body(try #require(port), exports)
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    // MARK: - Reading OTLP's JSON

    static func spans(in message: Any?) -> [Span] {
        list(message, "resourceSpans").flatMap { list($0, "scopeSpans") }.flatMap { list($0, "spans") }.map { span in
            Span(
                traceID: span["traceId"] as? String ?? "", spanID: span["spanId"] as? String ?? "", parentID: span["parentSpanId"] as? String ?? "",
                name: span["name"] as? String ?? "", kind: span["kind"] as? String ?? "", attributes: attributes(span["attributes"]))
        }
    }

    static func object(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

    static func list(_ value: Any?, _ key: String) -> [[String: Any]] {
        (value as? [String: Any])?[key] as? [[String: Any]] ?? []
    }

    /// OTLP's key-value list as a dictionary of plain values.
    static func attributes(_ value: Any?) -> [String: Any] {
        var result: [String: Any] = [:]
        for pair in value as? [[String: Any]] ?? [] {
            guard let key = pair["key"] as? String, let typed = pair["value"] as? [String: Any], let first = typed.first else { continue }
            result[key] = first.value
        }
        return result
    }

    /// protobuf's JSON writes 64-bit integers as strings.
    static func int(_ value: Any?) -> Int? {
        if let number = value as? Int { return number }
        return (value as? String).flatMap { Int($0) }
    }
}
