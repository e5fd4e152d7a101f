import Foundation
import Logging
import Metrics
import Synchronization

/// Tells the outside what transfers do, in three forms from one place: the `events()` streams,
/// debug log lines, and metrics (counters `imago.transfers`, `imago.bytes`, `imago.coalesced`,
/// `imago.errors` by `kind`, `imago.stopped`; timer `imago.transfer.duration`).
final class PipelineObservers: Sendable {
    private let streams = Locked<[UInt64: AsyncStream<ImagePipeline.Event>.Continuation]>([:])
    private let nextStreamID = Atomic<UInt64>(0)
    private let logger: Logger
    private let factory: any MetricsFactory
    private let transfers: Counter
    private let bytes: Counter
    private let coalesced: Counter
    private let stopped: Counter
    private let retries: Counter
    private let duration: Metrics.Timer

    init(logger: Logger, factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        self.logger = logger
        self.factory = factory
        transfers = Counter(label: "imago.transfers", factory: factory)
        bytes = Counter(label: "imago.bytes", factory: factory)
        coalesced = Counter(label: "imago.coalesced", factory: factory)
        stopped = Counter(label: "imago.stopped", factory: factory)
        retries = Counter(label: "imago.retries", factory: factory)
        duration = Metrics.Timer(label: "imago.transfer.duration", factory: factory)
    }

    func events() -> AsyncStream<ImagePipeline.Event> {
        let id = nextStreamID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: ImagePipeline.Event.self, bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.streams.withLock { $0.removeValue(forKey: id) }
        }
        streams.withLock { $0[id] = continuation }
        return stream
    }

    func finishStreams() {
        for continuation in streams.withLock({ Array($0.values) }) { continuation.finish() }
    }

    private func emit(_ event: ImagePipeline.Event) {
        for continuation in streams.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    func started(_ url: URL) {
        transfers.increment()
        logger.debug("transfer started", metadata: ["url": "\(url.redactedString)"])
        emit(.started(url: url))
    }

    func coalesced(_ url: URL) {
        coalesced.increment()
        logger.debug("request joined a transfer", metadata: ["url": "\(url.redactedString)"])
        emit(.coalesced(url: url))
    }

    func receivedResponse(_ response: ResponseHead) {
        logger.debug(
            "response",
            metadata: [
                "url": "\(response.url.redactedString)",
                "status": "\(response.statusCode.map(String.init) ?? "-")",
                "expected": "\(response.expectedContentLength.map(String.init) ?? "-")",
            ])
        emit(.receivedResponse(url: response.url, statusCode: response.statusCode, expectedBytes: response.expectedContentLength))
    }

    func retrying(_ url: URL, after error: ImagoError, delay: Duration) {
        retries.increment()
        logger.debug("transfer retried", metadata: ["url": "\(url.redactedString)", "error": "\(error.kind)", "delay": "\(delay)"])
    }

    func stopped(_ url: URL) {
        stopped.increment()
        logger.debug("transfer stopped: no handle wants it", metadata: ["url": "\(url.redactedString)"])
        emit(.stopped(url: url))
    }

    func finished(_ url: URL, result: Result<Int, ImagoError>, elapsed: Duration) {
        duration.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        switch result {
        case .success(let count):
            bytes.increment(by: count)
            logger.debug("transfer finished", metadata: ["url": "\(url.redactedString)", "bytes": "\(count)"])
        case .failure(let error):
            Counter(label: "imago.errors", dimensions: [("kind", error.kind.name)], factory: factory).increment()
            logger.debug("transfer failed", metadata: ["url": "\(url.redactedString)", "error": "\(error)"])
        }
        emit(.finished(url: url, result: result))
    }
}
