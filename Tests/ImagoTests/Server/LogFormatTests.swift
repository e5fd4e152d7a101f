import AsyncHTTPClient
import Foundation
import Glibc
import ImagoServer
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's `IMGPROXY_LOG_FORMAT`: every line of `imago serve` in the format asked, `jq` reading
/// the JSON ones, one line per request with its id, status, time and stage times; and no key,
/// salt, signature, secret or source token in any line.
@Suite("log formats", .timeLimit(.minutes(6)))
struct LogFormatTests {
    @Test("each format writes a line with time, level, message and fields; quotes and newlines cannot break a line")
    func lines() throws {
        let fields: [(String, LogFormat.Value)] = [("request_id", .text("a\"b\nc")), ("status", .number(404))]
        let pretty = LogFormat.pretty.line(level: .warning, label: "imago-serve", message: "answered", fields: fields, now: 0)
        #expect(
            pretty.hasSuffix("warning imago-serve: request_id=a\"b\nc status=404 [ImagoServer] answered\n")
                || pretty.contains("status=404 [ImagoServer] answered"))
        let structured = LogFormat.structured.line(level: .warning, label: "imago-serve", message: "answered", fields: fields, now: 0)
        #expect(structured == "time=1970-01-01T00:00:00Z level=WARNING msg=\"answered\" request_id=\"a\\\"b\\nc\" status=404\n")
        for format in [LogFormat.json, .gcp] {
            let line = format.line(level: .error, label: "imago-serve", message: "answered", fields: fields, now: 0)
            #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["time"] as? String == "1970-01-01T00:00:00Z" && object["request_id"] as? String == "a\"b\nc" && object["status"] as? Int == 404)
            if format == .gcp {
                #expect(object["severity"] as? String == "ERROR" && object["message"] as? String == "answered")
            } else {
                #expect(object["level"] as? String == "ERROR" && object["msg"] as? String == "answered")
            }
        }
    }

    @Test("IMGPROXY_LOG_FORMAT=json: jq reads every line; an answer's line has its request id, status, time and stage times; no secret in any line")
    func jsonLogOfAServer() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let origin = try await TestOrigin.start()
        let token = "tok3n-Never-Logged-5150"
        let source = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg").absoluteString + "?token=" + token
        let (key, salt, secret) = ("6b65792d6e657665722d6c6f67676564", "73616c742d6e65766572", "secret-Never-Logged-7")
        let environment = [
            "IMGPROXY_LOG_FORMAT": "json", "IMGPROXY_KEY": key, "IMGPROXY_SALT": salt, "IMGPROXY_SECRET": secret,
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1",
        ]
        let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
        let pair = URLSigner.Pair(key: URLSigner.bytes(hex: key)!, salt: URLSigner.bytes(hex: salt)!)
        let part = "/rs:fit:40:40/plain/" + (source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") + "@png"
        let signature = URLSigner.signature(for: part, pair: pair)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/\(signature)\(part)")
        request.headers.add(name: "Authorization", value: "Bearer " + secret)
        request.headers.add(name: "X-Request-Id", value: "made-1")
        let made = try await client.execute(request, timeout: .seconds(60))
        #expect(made.status.code == 200)
        _ = try await made.body.collect(upTo: 1 << 20)
        var missing = HTTPClientRequest(url: "http://127.0.0.1:\(port)/\(signature)/rs:fit:40:40/plain/nowhere")
        missing.headers.add(name: "X-Request-Id", value: "refused-2")
        _ = try await client.execute(missing, timeout: .seconds(60)).body.collect(upTo: 1 << 20)
        try await client.shutdown()
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        try await origin.shutdown()

        // jq reads the whole log: every line is JSON.
        let all = try await runProcess(URL(fileURLWithPath: "/usr/bin/jq"), ["-c", ".", log.path])
        #expect(all.status == 0, "a line jq cannot read")
        let answers = try await runProcess(
            URL(fileURLWithPath: "/usr/bin/jq"),
            [
                "-r",
                "select(.msg == \"answered\") | [.request_id, .status, .level, (.ms|type), (.fetch_ms|type), (.decode_ms|type), (.encode_ms|type)] | @tsv",
                log.path,
            ])
        let rows = String(decoding: answers.output, as: UTF8.self).split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.contains(["made-1", "200", "INFO", "number", "number", "number", "number"]), "\(rows)")
        #expect(rows.contains { $0.first == "refused-2" && $0[1] == "403" && $0[2] == "WARNING" }, "\(rows)")
        // The no-secrets grep: no key, salt, signature, secret or source token, in any form.
        let text = try String(contentsOf: log, encoding: .utf8)
        for needle in [key, salt, signature, secret, token, "Never-Logged", String(decoding: URLSigner.bytes(hex: key)!, as: UTF8.self)] {
            #expect(!text.contains(needle), "the log carries \(needle)")
        }
        #expect(text.contains("\"level\":\"WARNING\""), "the start-up warnings are JSON lines too")
    }

    /// A UDP socket bound on 127.0.0.1 (a syslog daemon's side) and its port.
    static func udpListener() -> (socket: Int32, port: Int) {
        let handle = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(handle, $0, length) == 0 && getsockname(handle, $0, &length) == 0 }
        }
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(handle, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        return (handle, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test("IMGPROXY_SYSLOG_*: lines at the syslog level and above go to the daemon over UDP as Go's log/syslog writes them, in the log format; others do not")
    func syslogOverUDP() async throws {
        let (listener, syslogPort) = Self.udpListener()
        defer { close(listener) }
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        let environment = [
            "IMGPROXY_SYSLOG_ENABLE": "true", "IMGPROXY_SYSLOG_NETWORK": "udp", "IMGPROXY_SYSLOG_ADDRESS": "127.0.0.1:\(syslogPort)",
            "IMGPROXY_SYSLOG_LEVEL": "warn", "IMGPROXY_SYSLOG_TAG": "imgtest", "IMGPROXY_LOG_FORMAT": "structured", "IMGPROXY_KEY": "6b6579",
            "IMGPROXY_SALT": "73616c74", "IMGPROXY_TRUSTED_SIGNATURES": "trusted",
        ]
        let (process, port, _) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0", "--local-root", root.path], environment: environment)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        for name in ["photo.jpg", "none.jpg"] {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/trusted/w:20/plain/local:%2F%2F%2F\(name)"), timeout: .seconds(60))
                .body.collect(upTo: 1 << 20)
        }
        try await client.shutdown()
        // The 404's line (a warning) arrives; the 200's (info) is under the syslog level.
        let received = await offThePool { () -> [String] in
            var lines: [String] = []
            var buffer = [UInt8](repeating: 0, count: 8192)
            while !lines.contains(where: { $0.contains("msg=\"answered\"") }) {
                let count = recv(listener, &buffer, buffer.count, 0)
                if count <= 0 { break }
                lines.append(String(decoding: buffer[..<count], as: UTF8.self))
            }
            return lines
        }
        process.terminate()
        _ = await ServeCommandTests.waitForExit(process)
        let answered = try #require(received.first { $0.contains("msg=\"answered\"") }, "\(received)")
        #expect(answered.hasPrefix("<12>"), "user facility, warning severity: \(answered)")
        #expect(answered.contains(" imgtest[") && answered.contains("level=WARNING") && answered.contains("status=404"))
        #expect(!received.contains { $0.contains("status=200") }, "an info line went to syslog")
        #expect(throws: ServerError.self) {
            var configuration = try ServerSettings.configuration(["IMGPROXY_SYSLOG_ENABLE": "1", "IMGPROXY_SYSLOG_NETWORK": "unixgram"]).configuration
            configuration.syslog.address = "/nonexistent/syslog.sock"
            _ = try AccessLog(for: configuration)
        }
    }
}
