import Foundation
import ImagoTestSupport
import Testing

@testable import Imago

/// Imago's client against nginx speaking HTTP/2 (ALPN over TLS with the test certificate).
@Suite("HTTP/2 against nginx", .enabled(if: NginxOrigin.isInstalled), .timeLimit(.minutes(6)))
struct HTTP2Tests {
    /// nginx's `stub_status`: connections accepted and requests served so far (fetched on the
    /// pipeline's own connection, so it counts as a request, not a connection).
    static func status(_ nginx: NginxOrigin, pipeline: ImagePipeline) async throws -> (accepts: Int, requests: Int) {
        let text = String(decoding: try await pipeline.data(for: ImageRequest(url: nginx.url("status"))).data, as: UTF8.self)
        let lines = text.split(separator: "\n")
        let index = try #require(lines.firstIndex { $0.contains("server accepts handled requests") })
        let numbers = lines[index + 1].split(separator: " ").compactMap { Int($0) }
        try #require(numbers.count == 3)
        return (numbers[0], numbers[2])
    }

    static func pipeline(_ nginx: NginxOrigin, concurrency: Int = 6, configure: (inout ImagePipeline.Configuration) -> Void = { _ in }) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration()
        configuration.trustRoots = TrustRoots(paths: [nginx.peer.folder.appendingPathComponent("cert.pem").path])
        configuration.maxConcurrentDownloads = concurrency
        configure(&configuration)
        return ImagePipeline(configuration: configuration)
    }

    @Test("forty transfers at once to one origin share one connection, every body whole")
    func multiplexes() async throws {
        try await withNginxOrigin(http2: true) { nginx in
            let bodies = (0..<40).map { payload(20_000 + $0 * 1000, seed: UInt8($0)) }
            for (index, body) in bodies.enumerated() { try body.write(to: nginx.root.appendingPathComponent("\(index).bin")) }
            let pipeline = Self.pipeline(nginx, concurrency: 40)
            let received = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for index in bodies.indices {
                    group.addTask { (index, try await pipeline.data(for: ImageRequest(url: nginx.url("\(index).bin"))).data) }
                }
                return try await group.reduce(into: [Int: Data]()) { $0[$1.0] = $1.1 }
            }
            #expect(bodies.indices.allSatisfy { received[$0] == bodies[$0] })
            let status = try await Self.status(nginx, pipeline: pipeline)
            #expect(status.accepts == 1, "one connection for all")
            #expect(status.requests == 41)
        }
    }

    @Test("after nginx's GOAWAY (its requests per connection spent) transfers go on a new connection and all succeed")
    func goAway() async throws {
        try await withNginxOrigin(http2: true, requestsPerConnection: 5) { nginx in
            let body = payload(10_000)
            try body.write(to: nginx.root.appendingPathComponent("a.bin"))
            let pipeline = Self.pipeline(nginx, concurrency: 3)
            try await withThrowingTaskGroup(of: Data.self) { group in
                for index in 0..<20 {
                    // Distinct URLs, so nothing coalesces: twenty requests.
                    group.addTask { try await pipeline.data(for: ImageRequest(url: nginx.url("a.bin?\(index)"))).data }
                }
                for try await data in group { #expect(data == body) }
            }
            let status = try await Self.status(nginx, pipeline: pipeline)
            #expect(status.accepts >= 4, "at most five requests a connection")
        }
    }

    @Test("a cancelled transfer and one over the size limit reset their streams, not the connection: the next transfer uses it")
    func streamReset() async throws {
        try await withNginxOrigin(bytesPerSecond: 64 * 1024, http2: true) { nginx in
            try payload(400_000, seed: 5).write(to: nginx.root.appendingPathComponent("slow.bin"))
            try payload(300_000, seed: 6).write(to: nginx.root.appendingPathComponent("big.bin"))
            let small = payload(1000, seed: 7)
            try small.write(to: nginx.root.appendingPathComponent("small.bin"))
            let pipeline = Self.pipeline(nginx) { $0.resumableDataLimit = 0 }
            let started = Countdown(1)
            let task = pipeline.dataTask(with: ImageRequest(url: nginx.url("slow.bin"))) { _ in
            } progress: { count, _, _ in
                if count > 0 { started.signal() }
            }
            await started.wait()
            task.cancel()
            await pipeline.waitUntilIdle()
            var limited = ImageRequest(url: nginx.url("big.bin"))
            limited.limits.maxResponseSize = 100_000
            let tooLarge = await loadError(pipeline, limited)
            #expect(tooLarge?.code == .tooLarge(limit: 100_000))
            let response = try await pipeline.data(for: ImageRequest(url: nginx.url("small.bin")))
            #expect(response.data == small)
            let status = try await Self.status(nginx, pipeline: pipeline)
            #expect(status.accepts == 1)
        }
    }

    @Test("each stream carries its request's priority as RFC 9218 urgency (nginx logs the header); HTTP/1.1 sends none")
    func priorities() async throws {
        let expected: [(ImageRequest.Priority, String)] = [(.veryHigh, "u=1"), (.high, "u=2"), (.normal, "u=3"), (.low, "u=4"), (.veryLow, "u=5")]
        try await withNginxOrigin(http2: true) { nginx in
            for index in expected.indices { try payload(2000, seed: UInt8(index)).write(to: nginx.root.appendingPathComponent("p\(index).bin")) }
            let pipeline = Self.pipeline(nginx)
            for (index, (priority, _)) in expected.enumerated() {
                var request = ImageRequest(url: nginx.url("p\(index).bin"))
                request.priority = priority
                _ = try await pipeline.data(for: request)
            }
            for (index, (_, urgency)) in expected.enumerated() {
                #expect(await nginx.peer.waitForLog("served /p\(index).bin HTTP/2.0 priority=\"\(urgency)\""), "\(nginx.peer.log)")
            }
        }
        let origin = try await TestOrigin.start()
        var request = ImageRequest(url: origin.serve(payload(2000, seed: 9), at: "/plain.bin"))
        request.priority = .veryHigh
        _ = try await ImagePipeline(configuration: .init()).data(for: request)
        #expect(origin.log.requests.last?.header("priority") == nil)
    }

    @Test(
        "through an HTTP proxy's CONNECT tunnel (tinyproxy) the origin is still reached over HTTP/2, one connection for all",
        .enabled(if: TinyProxy.isInstalled))
    func throughProxy() async throws {
        try await withNginxOrigin(http2: true) { nginx in
            try await withTinyProxy { proxy in
                let bodies = (0..<8).map { payload(5000, seed: UInt8($0)) }
                for (index, body) in bodies.enumerated() { try body.write(to: nginx.root.appendingPathComponent("\(index).bin")) }
                let pipeline = Self.pipeline(nginx, concurrency: 8) { $0.proxies = ProxySettings.environment(["https_proxy": proxy.url]) }
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for (index, body) in bodies.enumerated() {
                        group.addTask { try await pipeline.data(for: ImageRequest(url: nginx.url("\(index).bin"))).data == body }
                    }
                    for try await same in group { #expect(same) }
                }
                #expect(try await Self.status(nginx, pipeline: pipeline).accepts == 1)
                #expect(proxy.log.components(separatedBy: "CONNECT 127.0.0.1:\(nginx.port)").count == 2, "one tunnel: \(proxy.log)")
            }
        }
    }
}
