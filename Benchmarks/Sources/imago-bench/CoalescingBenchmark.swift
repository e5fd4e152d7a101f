import Foundation
import Imago
import BenchTestSupport

/// 1,000 concurrent requests for one URL against one transfer of the same URL: the origin must see
/// one request, and all 1,000 must complete within 2× the single transfer's time. The origin waits
/// 20 ms before answering, as a server across a network would; on bare loopback a 1 MB transfer
/// (under 1 ms) is faster than issuing 1,000 requests, and late ones would rightly start anew.
enum CoalescingBenchmark {
    static let handles = 1000
    static let size = 1_000_000

    static func run() async throws {
        let origin = try await TestOrigin.start()
        origin.serve(Measure.payload(size), at: "/one.jpg")
        let url = origin.url("/one.jpg?latency_ms=20")
        let pipeline = ImagePipeline()
        _ = try await pipeline.data(for: ImageRequest(url: url))  // warm the connection, as for the coalesced round

        var single: [Double] = []
        for _ in 0..<21 {
            single.append(try await Measure.seconds { _ = try await pipeline.data(for: ImageRequest(url: url)) })
        }
        origin.clearRequests()
        var together: [Double] = []
        var transfers: [Int] = []
        for _ in 0..<5 {
            origin.clearRequests()
            together.append(
                try await Measure.seconds {
                    let tasks = (0..<handles).map { _ in pipeline.dataTask(with: ImageRequest(url: url)) }
                    for task in tasks { _ = try await task.response }
                })
            transfers.append(origin.log.requests.count)
        }
        try await origin.shutdown()

        let ratio = Measure.median(together) / Measure.median(single)
        report(
            "\(handles) concurrent requests for one \(size / 1_000_000) MB URL, origin latency 20 ms (median of 5; single: median of 21)",
            imago: String(
                format: "all \(handles) done in %.2f ms, transfers at the origin per round: %@", Measure.median(together) * 1000,
                transfers.map(String.init).joined(separator: ",")),
            peer: String(format: "one transfer by Imago: %.2f ms", Measure.median(single) * 1000),
            ratio: ratio, target: "≤ 2× one transfer, 1 transfer", met: ratio <= 2 && transfers.allSatisfy { $0 == 1 }
        )
    }
}
