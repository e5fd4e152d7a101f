import Foundation
import Imago
import BenchTestSupport

/// 10,000 handles for distinct URLs queued behind 6 held transfers, in a child process so its peak
/// RSS is this work's alone. The peer figure is the same process before any handle exists. The
/// benchmark keeps no handle itself: the pipeline holds them while queued, and each is dropped when
/// it completes, as a caller that only awaits callbacks would.
enum QueuedHandlesBenchmark {
    static let handles = 10_000

    static func run() throws {
        let output = try Measure.run(CommandLine.arguments[0], ["queued"])
        let values = Dictionary(
            uniqueKeysWithValues: output.split(separator: "\n").compactMap { line -> (String, Double)? in
                let parts = line.split(separator: "=")
                guard parts.count == 2, let value = Double(parts[1]) else { return nil }
                return (String(parts[0]), value)
            })
        let peak = values["peak"] ?? .nan, baseline = values["baseline"] ?? .nan, queued = values["queued"] ?? .nan
        report(
            "\(handles) queued handles (distinct URLs, 6 transfers held at the origin), then all completed",
            imago: String(format: "peak RSS %.1f MB (%.1f MB with all handles queued)", peak, queued),
            peer: String(format: "same process before any handle: %.1f MB", baseline),
            ratio: peak / baseline, target: "peak < 150 MB", met: peak < 150
        )
    }

    static func runChild() async throws {
        let origin = try await TestOrigin.start()
        var route = TestOrigin.Route(body: Measure.payload(10_000))
        route.gate = "hold"
        origin.setRoute("/q.jpg", route)
        let pipeline = ImagePipeline()
        let baseline = Measure.memoryMB("VmRSS")
        let completions = AsyncStream<Bool>.makeStream()
        for index in 0..<handles {
            pipeline.dataTask(
                with: ImageRequest(url: origin.url("/q.jpg?i=\(index)")),
                completion: { result in
                    completions.continuation.yield((try? result.get()) != nil)
                })
        }
        await origin.wait { $0.requests.count == 6 }
        let queued = Measure.memoryMB("VmRSS")
        origin.release("hold")
        var succeeded = 0
        for await ok in completions.stream {
            if ok { succeeded += 1 } else { throw BenchmarkError("a queued load failed") }
            if succeeded == handles { break }
        }
        print("baseline=\(baseline)\nqueued=\(queued)\npeak=\(Measure.memoryMB("VmHWM"))")
        try await origin.shutdown()
    }
}
