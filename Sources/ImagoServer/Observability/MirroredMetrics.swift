import CoreMetrics
import Prometheus

/// A gauge `/metrics` shows, recorded also in a second backend when one is given (OTLP metrics):
/// the same name and labels in both. Without one, the check for it is all it costs.
final class MirroredGauge: Sendable {
    private let shown: Prometheus.Gauge
    private let sent: CoreMetrics.Meter?

    init(_ registry: PrometheusCollectorRegistry, _ descriptor: MetricNameDescriptor, labels: [(String, String)] = [], mirror: (any MetricsFactory)?) {
        shown = registry.makeGauge(descriptor: descriptor, labels: labels)
        sent = mirror.map { CoreMetrics.Meter(label: descriptor.exposedName, dimensions: labels, factory: $0) }
    }

    func set(_ value: Int64) {
        shown.set(value)
        sent?.set(value)
    }

    func increment() {
        shown.increment()
        sent?.increment()
    }

    func decrement() {
        shown.decrement()
        sent?.decrement()
    }
}

/// A counter `/metrics` shows, recorded also in a second backend when one is given.
final class MirroredCounter: Sendable {
    private let shown: Prometheus.Counter
    private let sent: CoreMetrics.Counter?

    init(_ registry: PrometheusCollectorRegistry, _ descriptor: MetricNameDescriptor, labels: [(String, String)] = [], mirror: (any MetricsFactory)?) {
        shown = registry.makeCounter(descriptor: descriptor, labels: labels)
        sent = mirror.map { CoreMetrics.Counter(label: descriptor.exposedName, dimensions: labels, factory: $0) }
    }

    func increment(by amount: Int64 = 1) {
        shown.increment(by: amount)
        sent?.increment(by: amount)
    }
}

/// A latency histogram `/metrics` shows, recorded also in a second backend when one is given.
final class MirroredDurations: Sendable {
    private let shown: DurationHistogram
    private let sent: CoreMetrics.Timer?

    init(_ registry: PrometheusCollectorRegistry, _ descriptor: MetricNameDescriptor, buckets: [Duration], mirror: (any MetricsFactory)?) {
        shown = registry.makeDurationHistogram(descriptor: descriptor, buckets: buckets)
        sent = mirror.map { CoreMetrics.Timer(label: descriptor.exposedName, dimensions: [], factory: $0) }
    }

    func record(_ duration: Duration) {
        shown.record(duration)
        guard let sent else { return }
        let (seconds, attoseconds) = duration.components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        sent.recordNanoseconds(overflow ? Int64.max : nanoseconds + attoseconds / 1_000_000_000)
    }
}

extension MetricNameDescriptor {
    /// The name Prometheus' text shows: `namespace_subsystem_name_unit`.
    var exposedName: String {
        [namespace, subsystem, metricName, unitName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "_")
    }
}
