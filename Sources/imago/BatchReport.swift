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
        let before = pipeline.statistics
        let start = ContinuousClock.now
        display.begin(total: urls.count)
        let outcomes = await withTaskGroup(of: (Int, Result<ImageResponse, ImagoError>).self) { group in
            for (index, url) in urls.enumerated() {
                let task = pipeline.imageTask(
                    with: ImageRequest(url: url),
                    progress: { received, expected, _ in display.progress(url, received: received, expected: expected) }
                )
                group.addTask {
                    do { return (index, .success(try await task.response)) } catch let error as ImagoError { return (index, .failure(error)) } catch {
                        return (index, .failure(ImagoError(.loaderFailed, url: url)))
                    }
                }
            }
            whenAllStarted()
            var outcomes: [Int: Result<ImageResponse, ImagoError>] = [:]
            for await (index, result) in group {
                outcomes[index] = result
                display.finished(urls[index], result: result)
            }
            return outcomes
        }
        display.end()
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let after = pipeline.statistics
        var images: [BatchReport.ImageResult] = []
        var responses: [Int: ImageResponse] = [:]
        for (index, url) in urls.enumerated() {
            switch outcomes[index]! {
            case .success(let response):
                responses[index] = response
                images.append(
                    .init(
                        url: url.redactedString, status: "ok", error: nil, bytes: response.data.count, source: response.source.rawValue,
                        width: response.image?.width, height: response.image?.height,
                        format: response.image?.metadata.format.rawValue, frames: response.image?.frames.count
                    ))
            case .failure(let error):
                images.append(.init(url: url.redactedString, status: "error", error: error.description, bytes: 0, source: nil))
            }
        }
        let totals = BatchReport.Totals(
            images: urls.count,
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
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    say(String(decoding: try encoder.encode(value), as: UTF8.self))
}
