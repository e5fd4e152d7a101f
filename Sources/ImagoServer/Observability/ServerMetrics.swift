import CoreMetrics
import Imago
import Prometheus

/// What `/metrics` reports, in Prometheus' text format: requests by status, latency histograms
/// (the whole request; the source fetch; the decode with the processing; the encode), where images came
/// from, requests in flight, work in flight and joined. The pipeline's own metrics (transfers,
/// bytes, transfer durations, errors by kind) go to the same registry. With a mirror (OTLP
/// metrics), each is recorded there too, under the same name.
public final class ServerMetrics: Sendable {
    /// The registry every metric is in, which `/metrics` renders in Prometheus' text format.
    public let registry: PrometheusCollectorRegistry
    /// The second backend every metric is also recorded in (OTLP metrics), if any.
    let mirror: (any MetricsFactory)?
    let inFlight: MirroredGauge
    let workInFlight: MirroredGauge
    let queued: MirroredGauge
    let queueWait: MirroredDurations
    let queueFull: MirroredCounter
    let coalesced: MirroredCounter
    let total: MirroredDurations
    let fetch: MirroredDurations
    let decodeAndProcess: MirroredDurations
    let encode: MirroredDurations
    let encodes: MirroredCounter
    let keptBytes: MirroredGauge
    let shedForMemory: MirroredCounter
    /// Bytes kept between requests by part, and entries by kind (``MemoryReport``), made as first reported.
    private let memoryParts = Locked<[String: MirroredGauge]>([:])
    private let memoryEntries = Locked<[String: MirroredGauge]>([:])
    /// The resident set and glibc's heap by kind, read at each scrape.
    private let processMemory: [(kind: String, gauge: MirroredGauge, value: @Sendable (ProcessMemory) -> Int64)]

    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    /// What every name starts with: `imago`, or imgproxy's `IMGPROXY_PROMETHEUS_NAMESPACE` and `_imago`.
    let namespace: String

    /// Metrics in `registry` (a new one by default), each also recorded in `mirror` when given;
    /// with `namespace` (``ServerConfiguration/prometheusNamespace``) every name starts with it
    /// and `_`, the pipeline's too.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), mirror: (any MetricsFactory)? = nil, namespace: String? = nil) {
        self.registry = registry
        self.mirror = mirror
        let namespace = namespace.map { $0 + "_imago" } ?? "imago"
        self.namespace = namespace
        // The stored properties are not all set yet: the instance's name(_:_:_:) cannot be called.
        func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor { Self.descriptor(namespace, name, unit, help) }
        inFlight = MirroredGauge(registry, name("requests_in_flight", "", "Requests being answered."), mirror: mirror)
        workInFlight = MirroredGauge(registry, name("work_in_flight", "", "Images being made (fetch, decode, process, encode)."), mirror: mirror)
        queued = MirroredGauge(registry, name("requests_queued", "", "Requests waiting for a worker (--requests-queue-size)."), mirror: mirror)
        queueWait = MirroredDurations(
            registry, name("queue_wait", "seconds", "Time requests waited in the queue before a worker took them."), buckets: Self.buckets, mirror: mirror)
        queueFull = MirroredCounter(
            registry, name("queue_full", "total", "Requests answered at once (429 or 503) because every worker was busy and the queue full."),
            mirror: mirror)
        coalesced = MirroredCounter(registry, name("coalesced", "total", "Requests that joined an identical one being made."), mirror: mirror)
        total = MirroredDurations(registry, name("request_duration", "seconds", "Whole requests."), buckets: Self.buckets, mirror: mirror)
        fetch = MirroredDurations(
            registry, name("fetch_duration", "seconds", "Source fetches (or disk-cache reads) of new variants."), buckets: Self.buckets, mirror: mirror)
        decodeAndProcess = MirroredDurations(
            registry, name("decode_process_duration", "seconds", "Decodes and processing of new variants."), buckets: Self.buckets, mirror: mirror)
        encode = MirroredDurations(registry, name("encode_duration", "seconds", "Encodes of new variants."), buckets: Self.buckets, mirror: mirror)
        encodes = MirroredCounter(registry, name("encodes", "total", "Encoder runs: one per new variant, up to six under max_bytes."), mirror: mirror)
        keptBytes = MirroredGauge(
            registry, name("memory_kept", "bytes", "Bytes kept in memory between requests (variants and paths), at most IMAGO_MEMORY_BYTES."),
            mirror: mirror)
        shedForMemory = MirroredCounter(
            registry, name("shed_for_memory", "total", "New work answered 503 because the container's memory was nearly used up."), mirror: mirror)
        let resident = name("resident", "bytes", "The process's resident memory by kind (anonymous, file), from /proc/self/status.")
        let heap = name("heap", "bytes", "glibc's heap (mallinfo2): arena taken from the system, in_use, free_held, mapped.")
        let kinds: [(MetricNameDescriptor, String, @Sendable (ProcessMemory) -> Int64)] = [
            (resident, "anonymous", \.residentAnonymous), (resident, "file", \.residentFile), (heap, "arena", \.heapArena),
            (heap, "in_use", \.heapInUse), (heap, "free_held", \.heapFreeHeld), (heap, "mapped", \.heapMapped),
        ]
        processMemory = kinds.map { descriptor, kind, value in
            (kind, MirroredGauge(registry, descriptor, labels: [("kind", kind)], mirror: mirror), value)
        }
    }

    /// Records what the service keeps, by part and by kind, and reads the process's memory: done at
    /// each scrape.
    func recordMemory(_ report: MemoryReport) {
        for (part, bytes) in report.bytes {
            gauge(in: memoryParts, label: ("part", part)) {
                name("memory_part", "bytes", "Bytes kept between requests, by part; variants, paths and resumable are within IMAGO_MEMORY_BYTES.")
            }.set(Int64(bytes))
        }
        for (kind, count) in report.entries {
            gauge(in: memoryEntries, label: ("kind", kind)) {
                name(
                    "kept_entries", "", "Entries kept between requests, by kind (variants, paths, disk_rows, connections, color_transforms, color_profiles).")
            }.set(Int64(count))
        }
        let now = ProcessMemory.now()
        for (_, gauge, value) in processMemory { gauge.set(value(now)) }
    }

    private func gauge(in gauges: Locked<[String: MirroredGauge]>, label: (String, String), descriptor: () -> MetricNameDescriptor) -> MirroredGauge {
        if let made = gauges.withLock({ $0[label.1] }) { return made }
        let made = MirroredGauge(registry, descriptor(), labels: [label], mirror: mirror)
        gauges.withLock { $0[label.1] = made }
        return made
    }

    /// `imago_serve_NAME_UNIT`, after the namespace when there is one.
    private func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        Self.descriptor(namespace, name, unit, help)
    }

    private static func descriptor(_ namespace: String, _ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: namespace, subsystem: "serve", metricName: name, unitName: unit, helpText: help)
    }

    /// The factory the pipeline records its metrics with: into ``registry`` (its names after the
    /// namespace when there is one), and into the mirror when there is one.
    var pipelineFactory: any MetricsFactory {
        var shown = PrometheusMetricsFactory(registry: registry)
        if namespace != "imago" {
            let sanitize = shown.nameAndLabelSanitizer, prefix = String(namespace.dropLast("_imago".count))
            shown.nameAndLabelSanitizer = { name, labels in
                let (sanitized, labels) = sanitize(name, labels)
                return (prefix + "_" + sanitized, labels)
            }
        }
        return mirror.map { MultiplexMetricsHandler(factories: [shown, $0]) } ?? shown
    }

    func answered(status: Int) {
        counter(statuses, String(status)) {
            MirroredCounter(self.registry, name("requests", "total", "Requests by status."), labels: [("status", $0)], mirror: self.mirror)
        }.increment()
    }

    /// Where a variant came from: `variant-memory` (encoded, kept), or the pipeline's source
    /// (`memory`, `disk`, `revalidated`, `network`).
    func served(from layer: String) {
        counter(layers, layer) {
            MirroredCounter(self.registry, name("images", "total", "Images served by where they came from."), labels: [("from", $0)], mirror: self.mirror)
        }.increment()
    }

    /// What a shared store did (`imago_result_storage_total`, `imago_source_storage_total`): `hit`,
    /// `miss`, `invalid` (not whole, another key's, or a checksum that does not match), `expired`,
    /// `error` (a read failed or took too long), `written`, `write_error`, `skipped` (too many bytes
    /// waiting to be written), and the lease's outcomes (`lease_taken`, `lease_wait`, ...).
    func sharedStorage(_ kind: StoredObject.Kind, _ outcome: String) {
        counter(storeOutcomes, kind.rawValue + "\n" + outcome) { _ in
            MirroredCounter(
                self.registry, name("\(kind.rawValue)_storage", "total", "What the shared \(kind.rawValue) store did, by outcome."),
                labels: [("outcome", outcome)], mirror: self.mirror)
        }.increment()
    }

    /// Counters by label, kept: the registry builds a key and takes its lock for every lookup.
    private let storeOutcomes = Locked<[String: MirroredCounter]>([:])
    private let statuses = Locked<[String: MirroredCounter]>([:])
    private let layers = Locked<[String: MirroredCounter]>([:])

    private func counter(_ counters: Locked<[String: MirroredCounter]>, _ label: String, make: (String) -> MirroredCounter) -> MirroredCounter {
        if let counter = counters.withLock({ $0[label] }) { return counter }
        let counter = make(label)
        counters.withLock { $0[label] = counter }
        return counter
    }

    /// The text `/metrics` answers with.
    public func exposition() -> String { registry.emitToString() }
}
