import Foundation
import Imago
import NIOCore
import Tracing

/// Reports how a new variant was made: a span for the work (`imago.variant`, a child of the
/// request's span when it has one) with a child for each stage that ran (`imago.fetch`,
/// `imago.decode`, `imago.process`, `imago.encode`), and the latency histograms of the fetch, the
/// decode with the processing, and the encode.
///
/// The pipeline runs its stages on executors of its own and says afterwards when each ran
/// (``ImageResponse/Timings``), so the spans are placed at those instants once the variant is made,
/// rather than opened around calls that would not see the stages.
struct StageRecorder: Sendable {
    let tracer: any Tracer
    let metrics: ServerMetrics

    /// Records a variant made from `response` (its stages' timings), fetched from `sourceHost`, and
    /// encoded as `format` (`bytes`, with `facts`' sizes) during `encode`; the work began at `start`.
    func made(
        _ response: ImageResponse, sourceHost: String?, format: OutputFormat, bytes: Int, facts: EncodedVariant.MadeFacts?,
        encode: Range<ContinuousClock.Instant>, start: ContinuousClock.Instant
    ) {
        let timings = response.timings
        if let load = timings.load { metrics.fetch.record(load.duration) }
        let decodeAndProcess = (timings.decode?.duration ?? .zero) + (timings.process?.duration ?? .zero)
        if timings.decode != nil || timings.process != nil { metrics.decodeAndProcess.record(decodeAndProcess) }
        metrics.encode.record(encode.duration)

        let clock = TracerTime()
        let work = tracer.startSpan("imago.variant", context: ServiceContext.current ?? .topLevel, ofKind: .internal, at: clock.instant(start))
        work.attributes["imago.source"] = response.source.rawValue
        work.attributes["imago.format"] = format.rawValue
        work.attributes["imago.output.bytes"] = bytes
        if let facts {
            work.attributes["imago.source.bytes"] = facts.sourceBytes
            work.attributes["imago.source.width"] = facts.sourceWidth
            work.attributes["imago.source.height"] = facts.sourceHeight
            work.attributes["imago.output.width"] = facts.width
            work.attributes["imago.output.height"] = facts.height
        }
        let stages: [(String, Range<ContinuousClock.Instant>?)] = [
            ("imago.fetch", timings.load), ("imago.decode", timings.decode), ("imago.process", timings.process), ("imago.encode", encode),
        ]
        for case (let name, let interval?) in stages {
            let span = tracer.startSpan(name, context: work.context, ofKind: .internal, at: clock.instant(interval.lowerBound))
            if name == "imago.fetch" {
                span.attributes["imago.source"] = response.source.rawValue
                if let sourceHost { span.attributes["server.address"] = sourceHost }
            }
            span.end(at: clock.instant(interval.upperBound))
        }
        work.end(at: clock.instant(encode.upperBound))
        RequestStages.current?.times.withLock { times in
            times = stages.compactMap { name, interval in
                interval.map { (String(name.dropFirst("imago.".count)) + "_ms", Int($0.duration / .milliseconds(1))) }
            }
        }
    }

    /// Records work that began at `start` and failed with `error`.
    func failed(_ error: any Error, start: ContinuousClock.Instant) {
        let clock = TracerTime()
        let work = tracer.startSpan("imago.variant", context: ServiceContext.current ?? .topLevel, ofKind: .internal, at: clock.instant(start))
        work.recordError(error)
        work.setStatus(SpanStatus(code: .error))
        work.end(at: clock.instant(.now))
    }
}

/// Turns continuous-clock instants into the tracer's wall-clock ones, from one reading of both.
private struct TracerTime {
    let continuous = ContinuousClock.now
    let wall = DefaultTracerClock.now

    func instant(_ instant: ContinuousClock.Instant) -> DefaultTracerClock.Instant {
        // Both readings are this process's clocks, not input: the offset is the age of an instant
        // taken during this request, far inside Int64's nanoseconds.
        let offset = TimeAmount(continuous - instant).nanoseconds
        let nanoseconds = Int64(clamping: wall.nanosecondsSinceEpoch) - offset
        return DefaultTracerClock.Instant(nanosecondsSinceEpoch: UInt64(clamping: nanoseconds))
    }
}

extension Range<ContinuousClock.Instant> {
    var duration: Duration { upperBound - lowerBound }
}

/// The stage times of the image a request made, for its log line: set around the request's work
/// by ``ImageService``, filled by ``StageRecorder/made(_:format:encode:start:)`` in the task that
/// made it (a request that joined another's work has none).
final class RequestStages: Sendable {
    @TaskLocal static var current: RequestStages?
    /// `fetch_ms`, `decode_ms`, `process_ms`, `encode_ms`: those that ran.
    let times = Locked<[(String, Int)]>([])
    /// Where the image came from (``ImageService/served(from:)``): `variant-memory`, `network`, `disk`, `coalesced`…
    let servedFrom = Locked<String?>(nil)
}
