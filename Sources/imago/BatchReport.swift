import Foundation
import Imago

/// What loading a batch of URLs produced, in the shape `--json` prints.
struct BatchReport: Codable {
    struct ImageResult: Codable {
        var url: String
        var status: String
        var error: String?
        var bytes: Int
        var source: String?
        var width: Int?
        var height: Int?
        var format: String?
        var frames: Int?
        /// From the request to its completion.
        var seconds: Double?
    }

    struct Totals: Codable {
        var images: Int
        var networkRequests: Int
        var coalesced: Int
        var memoryHits: Int
        var diskHits: Int
        var revalidated: Int
        var bytes: Int64
        var errors: Int
        var seconds: Double

        var imagesPerSecond: Double { seconds > 0 ? Double(images) / seconds : 0 }
    }

    var images: [ImageResult]
    var totals: Totals
}

/// Loads and decodes URLs through one pipeline, all started at once, and reports each outcome and
/// the totals.
struct BatchLoader {
    let pipeline: ImagePipeline
    let display: ProgressDisplay

    /// Loads `urls` (duplicates included: they coalesce) and returns the report and the responses
    /// by index. `whenAllStarted` runs once every URL has its handle.
    func load(_ urls: [URL], whenAllStarted: @Sendable () -> Void = {}) async -> (BatchReport, [Int: ImageResponse]) {
        await load(urls.map { .success($0) }, whenAllStarted: whenAllStarted)
    }

    /// Loads each input that is a URL; an input that is not (the text and why) is reported as
    /// its own error, and the others load as usual.
    func load(_ inputs: [Result<URL, InvalidInput>], whenAllStarted: @Sendable () -> Void = {}) async -> (BatchReport, [Int: ImageResponse]) {
        let before = pipeline.statistics
        let start = ContinuousClock.now
        let urls = inputs.map { try? $0.get() }
        display.begin(total: urls.compactMap { $0 }.count)
        let outcomes = await withTaskGroup(of: (Int, Result<ImageResponse, ImagoError>, Double).self) { group in
            for (index, url) in urls.enumerated() {
                guard let url else { continue }
                let made = ContinuousClock.now
                let finished = Finished()
                let task = pipeline.imageTask(
                    with: ImageRequest(url: url),
                    completion: { _ in finished.record(since: made) },
                    progress: { received, expected, _ in display.progress(url, received: received, expected: expected) }
                )
                group.addTask {
                    let result: Result<ImageResponse, ImagoError>
                    do throws(ImagoError) { result = .success(try await task.response) } catch { result = .failure(error) }
                    return (index, result, finished.seconds ?? (ContinuousClock.now - made) / .seconds(1))
                }
            }
            whenAllStarted()
            var outcomes: [Int: (result: Result<ImageResponse, ImagoError>, seconds: Double)] = [:]
            for await (index, result, seconds) in group {
                outcomes[index] = (result, seconds)
                if let url = urls[index] { display.finished(url, result: result) }
            }
            return outcomes
        }
        display.end()
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let after = pipeline.statistics
        var images: [BatchReport.ImageResult] = []
        var responses: [Int: ImageResponse] = [:]
        for (index, input) in inputs.enumerated() {
            switch (input, outcomes[index]) {
            case (.success(let url), .some((.success(let response), let seconds))):
                responses[index] = response
                images.append(
                    .init(
                        url: url.redactedString, status: "ok", error: nil, bytes: response.data.count, source: response.source.rawValue,
                        width: response.image.width, height: response.image.height,
                        format: response.image.metadata.format.rawValue, frames: response.image.frames.count, seconds: seconds
                    ))
            case (.success(let url), .some((.failure(let error), let seconds))):
                images.append(.init(url: url.redactedString, status: "error", error: error.description, bytes: 0, source: nil, seconds: seconds))
            case (.success(let url), .none):
                images.append(.init(url: url.redactedString, status: "error", error: "no result", bytes: 0, source: nil))
            case (.failure(let invalid), _):
                images.append(.init(url: invalid.text, status: "error", error: invalid.reason, bytes: 0, source: nil))
            }
        }
        let totals = BatchReport.Totals(
            images: inputs.count,
            networkRequests: after.transfers - before.transfers,
            coalesced: after.coalesced - before.coalesced,
            memoryHits: after.memoryHits - before.memoryHits,
            diskHits: after.diskHits - before.diskHits,
            revalidated: after.revalidated - before.revalidated,
            bytes: after.bytes - before.bytes,
            errors: images.filter { $0.status == "error" }.count,
            seconds: seconds
        )
        return (BatchReport(images: images, totals: totals), responses)
    }
}

/// An input that is not a URL: its text (as given) and why it was refused.
struct InvalidInput: Error {
    var text: String
    var reason: String
}

/// When one handle completed, written by its completion callback.
private final class Finished: Sendable {
    private let elapsed = Locked<Double?>(nil)

    func record(since made: ContinuousClock.Instant) {
        let seconds = (ContinuousClock.now - made) / .seconds(1)
        elapsed.withLock { $0 = seconds }
    }

    var seconds: Double? { elapsed.withLock { $0 } }
}

extension Int64 {
    /// 1.2 MB, 340 KB, 12 B.
    var byteCount: String {
        switch self {
        case 1_000_000...: String(format: "%.1f MB", Double(self) / 1_000_000)
        case 1_000...: String(format: "%.0f KB", Double(self) / 1_000)
        default: "\(self) B"
        }
    }
}

/// Prints JSON with sorted keys, one object.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    say(String(decoding: try encoder.encode(value), as: UTF8.self))
}
