import Foundation
import Imago

/// 1,000 distinct 100 KB images over loopback, 6 at a time: Imago against curl fetching the same
/// URLs from the same origin process with `--parallel --parallel-max 6`. 21 rounds each, in pairs
/// whose order alternates, every round with fresh connections; the ratio is the median pair's.
enum ThroughputBenchmark {
    static let count = 1000
    static let size = 100_000
    static let rounds = 21

    static func run() async throws {
        let (urls, stopOrigin) = try OriginProcess.start(count: count, size: size)
        defer { stopOrigin() }
        let megabytes = Double(count * size) / 1_000_000
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("imago-bench-curl-\(getpid()).txt")
        try urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"\n" }.joined().write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let curl = try Measure.run("/usr/bin/env", ["which", "curl"]).trimmingCharacters(in: .whitespacesAndNewlines)

        // The clients' own CPU per round (the origin is a child that has not ended, so it is in
        // neither): where the time goes when the machine, not the network, is the limit.
        var imagoCPU: [Double] = [], curlCPU: [Double] = []
        let (imagoTimes, curlTimes, ratio) = try await Measure.pairedRounds(
            rounds,
            imago: {
                var configuration = ImagePipeline.Configuration()
                configuration.maxConcurrentDownloads = 6
                let pipeline = ImagePipeline(configuration: configuration)
                let cpuStart = Measure.cpuSeconds()
                defer { imagoCPU.append(Measure.cpuSeconds() - cpuStart) }
                return try await Measure.seconds {
                    // Each body is checked and let go, as curl writes each to /dev/null: the
                    // handles are dropped once read, so 100 MB is not held to the end.
                    var tasks: [DataTask?] = urls.map { pipeline.dataTask(with: ImageRequest(url: $0)) }
                    for index in tasks.indices {
                        guard let task = tasks[index] else { continue }
                        tasks[index] = nil
                        let response = try await task.response
                        guard response.data.count == size else { throw BenchmarkError("short body") }
                    }
                }
            },
            peer: {
                let cpuStart = Measure.cpuSeconds(children: true)
                defer { curlCPU.append(Measure.cpuSeconds(children: true) - cpuStart) }
                return try await Measure.seconds {
                    try Measure.run(curl, ["--parallel", "--parallel-max", "6", "--silent", "--no-progress-meter", "--fail", "--config", config.path])
                }
            })

        let imago = megabytes / Measure.median(imagoTimes)
        let peer = megabytes / Measure.median(curlTimes)
        report(
            "Loopback throughput, \(count) distinct \(size / 1000) KB images, 6 concurrent (median of \(rounds) paired rounds)",
            imago: String(format: "%.0f MB/s (%.3f s, client CPU %.3f s)", imago, Measure.median(imagoTimes), Measure.median(imagoCPU)),
            peer: String(
                format: "curl --parallel-max 6: %.0f MB/s (%.3f s, client CPU %.3f s; rounds %@)", peer, Measure.median(curlTimes), Measure.median(curlCPU),
                curlTimes.map { String(format: "%.3f", $0) }.joined(separator: " ")),
            ratio: ratio, target: "≥ 0.9× curl", met: ratio >= 0.9
        )
        let pipelineAlone = try await pipelineCPU(urls: urls)
        print(
            String(
                format: "  of Imago's client CPU, the pipeline alone (the same %d requests, a loader answering from memory): %.3f s, %.0f µs each\n",
                count, pipelineAlone, pipelineAlone / Double(count) * 1_000_000))
    }

    /// The pipeline's own CPU for `urls` (queue, coalescing, sink, delivery, and the body's copy)
    /// with a loader that answers every request at once from memory: median of `rounds` rounds.
    private static func pipelineCPU(urls: [URL]) async throws -> Double {
        let loader = MemoryLoader(body: Data(count: size))
        var times: [Double] = []
        for _ in 0..<rounds {
            var configuration = ImagePipeline.Configuration()
            configuration.maxConcurrentDownloads = 6
            let pipeline = ImagePipeline(configuration: configuration, loaders: LoaderRegistry([loader]))
            let start = Measure.cpuSeconds()
            var tasks: [DataTask?] = urls.map { pipeline.dataTask(with: ImageRequest(url: $0)) }
            for index in tasks.indices {
                guard let task = tasks[index] else { continue }
                tasks[index] = nil
                guard try await task.response.data.count == size else { throw BenchmarkError("short body") }
            }
            times.append(Measure.cpuSeconds() - start)
        }
        return Measure.median(times)
    }

    /// Answers every URL with the same body, at once.
    private struct MemoryLoader: DataLoading {
        let body: Data
        func canLoad(_ url: URL) -> Bool { true }
        func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            try sink.receive(ResponseHead(url: request.url, statusCode: 200, expectedContentLength: Int64(body.count)))
            try sink.receive(body)
        }
    }
}
