import CoreMetrics
import Crypto
import Dispatch
import Foundation
import Imago
import Logging
import Prometheus
import Synchronization
import Tracing

/// The image service without its HTTP server: takes a request's method, path and headers and
/// answers with an image or a short error. Parses the imgproxy path, checks the signature,
/// resolves the source, and makes the variant once however many ask for it at the same time:
/// the pipeline fetches, decodes (scaled at decode where it can) and processes, this encodes off
/// Swift's cooperative pool, and the encoded variant is kept in memory by its options and the
/// negotiated format. Each answer is counted in ``metrics`` and logged with its request id (never
/// its path, whose source URL may carry a token).
public final class ImageService: Sendable {
    /// The settings the service was made with.
    public let configuration: ServerConfiguration
    /// ``OutputSettings/identity`` and ``SourceLimitSettings/identity``, with the digest of a
    /// watermark read at start: part of every stored variant's key and ETag, made once.
    let outputIdentity: String
    /// `Bearer` and the server's secret, as the `Authorization` bytes a request must carry; nil
    /// without a secret (made once: the kept answers' path checks it on every request).
    private let secretHeader: [UInt8]?
    /// The service's counters, gauges and timers.
    public let metrics: ServerMetrics
    let pipeline: ImagePipeline
    private let logger: Logger
    private let accessLog: AccessLog?
    let sources: SourceResolver
    let work: WorkQueue
    let variants: MemoryCache<String, EncodedVariant>
    /// A request already answered (its raw path and the Accept classes that matter) → its variant
    /// key: a repeat skips parsing, signature check and source resolution, which depend on nothing
    /// else and come out the same every time.
    let answeredPaths: MemoryCache<String, AnsweredPath>
    /// The variants being made, one task per key.
    let making = SingleFlight<String, EncodedVariant>()
    /// Reads of the node's disk and the shared store for a variant, one per key at a time.
    let lookups = SingleFlight<String, EncodedVariant?>()
    /// The fleet's shared store of made variants (``ServerConfiguration/resultStorage``).
    let resultStorage: SharedStorage?
    /// The fleet's shared store of originals (``ServerConfiguration/sourceStorage``): the
    /// pipeline's disk cache, seen through the store.
    let sourceStorage: SourceStorage?
    let stages: StageRecorder
    /// Whether each request gets a span (a tracer other than the no-op one was given): without,
    /// a request pays nothing for tracing.
    let tracesRequests: Bool
    /// What imgproxy's URLs need beyond the configuration (watermark, faces, source rewriting).
    let imgproxy: ImgproxyDialect
    /// What thumbor's URLs need beyond the configuration (detectors, overlay images, allowed hosts).
    let thumbor: ThumborDialect
    /// `/gallery`'s page, made on first request (made again after a failure).
    let gallery = KeptOnce<String>()
    /// The mounted dialects, the longest prefix first (the order a path is matched in).
    let mounts: [ServiceMount]

    /// A service loading through `pipeline`, or through one made from `configuration`'s limits and
    /// address policy that reports to `metrics` (by default new ones, named after the
    /// configuration's ``ServerConfiguration/prometheusNamespace``); its spans go to `tracer` (the
    /// process's, by default).
    /// `logger` logs at the configuration's ``ServerConfiguration/logLevel``; at `info` or below a
    /// line per answer goes to `accessLog` when given, else to `logger`.
    public init(
        configuration: ServerConfiguration, pipeline: ImagePipeline? = nil, metrics: ServerMetrics? = nil,
        logger: Logger = Logger(label: "imago-serve"), accessLog: AccessLog? = nil, tracer: any Tracer = InstrumentationSystem.tracer
    ) throws {
        self.configuration = configuration
        secretHeader = configuration.secret.flatMap { $0.isEmpty ? nil : Array(("Bearer " + $0).utf8) }
        let metrics = metrics ?? ServerMetrics(namespace: configuration.prometheusNamespace)
        self.metrics = metrics
        var logger = logger
        logger.logLevel = configuration.logLevel
        self.logger = logger
        self.accessLog = accessLog
        mounts = ServiceMount.all(configuration)
        let network = NetworkEnvironment(proxies: configuration.proxies, trustRoots: configuration.trustRoots)
        func shared(_ kind: StoredObject.Kind, _ settings: SharedStorageSettings) throws(ServerError) -> SharedStorage {
            try SharedStorage(
                kind, settings, s3: configuration.s3, gcs: configuration.gcs, swift: configuration.swift, network: network, metrics: metrics, logger: logger)
        }
        resultStorage = try configuration.resultStorage.map { settings throws(ServerError) in try shared(.result, settings) }
        let sharedSources = try configuration.sourceStorage.map { settings throws(ServerError) in try shared(.source, settings) }
        self.pipeline = try pipeline ?? Self.makePipeline(configuration, metrics: metrics, sourceStorage: sharedSources)
        sourceStorage = self.pipeline.configuration.diskCache as? SourceStorage
        sources = SourceResolver(configuration)
        work = WorkQueue(workers: configuration.workers, lineLength: configuration.queueLength) { [metrics] queued, waited in
            metrics.queued.set(Int64(queued))
            if let waited { metrics.queueWait.record(waited) }
        }
        let shares = configuration.memoryShares
        variants = MemoryCache(limits: .init(cost: shares.variants))
        answeredPaths = MemoryCache(limits: .init(cost: shares.paths))
        MemoryPressureMonitor.shared.register(variants)
        MemoryPressureMonitor.shared.register(answeredPaths)
        stages = StageRecorder(tracer: tracer, metrics: metrics)
        tracesRequests = !(tracer is NoOpTracer)
        imgproxy = try ImgproxyDialect(configuration, sources: sources, pipeline: self.pipeline)
        thumbor = try ThumborDialect(configuration, sources: sources, pipeline: self.pipeline)
        // A watermark file read at start is named by its bytes: another file at the same path is another output.
        outputIdentity =
            configuration.output.identity + "\n" + configuration.limits.identity + (imgproxy.watermarks.identifierAtStart.map { "\n" + $0 } ?? "")
    }

    /// The pipeline `configuration` asks for: its source limits and, unless private addresses are
    /// allowed, the public-only address policy.
    public static func makePipeline(_ configuration: ServerConfiguration, metrics: ServerMetrics? = nil) throws -> ImagePipeline {
        try makePipeline(configuration, metrics: metrics, sourceStorage: nil)
    }

    /// The pipeline `configuration` asks for, its disk cache seen through `sourceStorage` when given.
    static func makePipeline(_ configuration: ServerConfiguration, metrics: ServerMetrics?, sourceStorage: SharedStorage?) throws -> ImagePipeline {
        var pipeline = ImagePipeline.Configuration()
        if let metrics { pipeline.metricsFactory = metrics.pipelineFactory }
        pipeline.addressPolicy = configuration.internalSourceAddresses.policy
        if let bytes = configuration.decodeMemoryBytes { pipeline.decodeMemoryBudget = DecodeMemoryBudget(bytes: bytes) }
        pipeline.maxRedirects = configuration.maxRedirects
        pipeline.resumableDataLimit = configuration.memoryShares.resumable
        pipeline.proxies = configuration.proxies
        pipeline.trustRoots = configuration.trustRoots
        pipeline.allowInvalidCertificates = configuration.ignoresCertificateErrors
        if let userAgent = configuration.userAgent { pipeline.headers["User-Agent"] = userAgent }
        pipeline.maxResponseSize = configuration.limits.maxSourceBytes
        pipeline.deadline = configuration.sourceTimeout
        pipeline.decodingOptions.maxPixels = configuration.limits.maxSourcePixels
        pipeline.decodingOptions.maxFrames = configuration.limits.maxFrames
        configuration.output.video.apply(to: &pipeline.decodingOptions)
        pipeline.decodingOptions.pdfTransparentBackground = configuration.output.pdfTransparentBackground
        // A library that can be stopped from inside (FFmpeg) stops when the request's work would have,
        // so a file that makes it spin frees its worker.
        pipeline.decodingOptions.maxDecodeDuration = configuration.workTimeout
        // The service keeps its variants encoded; a decoded copy would hold each one twice.
        pipeline.memoryCache = nil
        #if DiskCache
            if let directory = configuration.cacheDirectory {
                pipeline.diskCache = try DiskCache(configuration: .init(directory: directory))
            }
        #endif
        if let sourceStorage { pipeline.diskCache = SourceStorage(storage: sourceStorage, local: pipeline.diskCache) }
        let loaders = LoaderRegistry.standard(connectionIdleTimeout: configuration.sourceKeepAliveTimeout)
        #if HTTPClientLoader
            if configuration.readsS3 { loaders.register(S3DataLoader(configuration.s3)) }
            if configuration.readsGCS { loaders.register(GCSDataLoader(configuration.gcs)) }
            if configuration.readsSwift { loaders.register(SwiftDataLoader(configuration.swift)) }
        #endif
        return ImagePipeline(configuration: pipeline, loaders: loaders, decoders: .standard(families: configuration.output.decoderFamilies))
    }

    /// Bytes the service keeps in memory between requests (encoded variants, answered paths, and
    /// the kept bytes of sources that broke off), at most ``ServerConfiguration/memoryBytes``.
    public var memoryInUse: Int { variants.totalCost + answeredPaths.totalCost + pipeline.resumableBytes }

    /// What the service keeps in memory between requests: bytes by part, entries by kind.
    public var memoryReport: MemoryReport {
        var report = MemoryReport(
            bytes: [
                ("variants", variants.totalCost), ("paths", answeredPaths.totalCost), ("resumable", pipeline.resumableBytes),
                ("overlays", thumbor.overlays.totalCost),
            ],
            entries: [("variants", variants.count), ("paths", answeredPaths.count), ("connections", pipeline.loaders.keptConnectionCount)])
        #if DiskCache
            if let disk = (sourceStorage?.local ?? pipeline.configuration.diskCache) as? DiskCache {
                let held = disk.inMemory
                report.bytes.append(("disk_pending", held.pendingBytes))
                report.entries.append(("disk_rows", held.rows))
            }
        #endif
        let colour = ColorCaches.count
        report.entries += [("color_transforms", colour.transforms), ("color_profiles", colour.profiles)]
        return report
    }

    /// Empties what the service keeps in memory, once no image is being made: kept variants and
    /// paths, thumbor's overlays, the pipeline's kept bytes and the process's colour caches; the disk
    /// cache's queued writes are written. `imago serve` calls it after its graceful shutdown, so a
    /// heap profiler's list of what was never freed names only real leaks.
    public func shutDown() async {
        await untilNoWork()
        await resultStorage?.untilWritten()
        await sourceStorage?.storage.untilWritten()
        variants.removeAll()
        answeredPaths.removeAll()
        thumbor.overlays.removeAll()
        pipeline.removeAllFromMemory()
        pipeline.configuration.diskCache?.flush()
        ColorCaches.removeAll()
    }

    /// Requests making an image now.
    public var workInFlight: Int { work.inFlight }

    /// Requests waiting for a worker now.
    public var workQueued: Int { work.queued }

    /// Returns once exactly `length` requests wait for a worker.
    public func untilQueued(_ length: Int) async { await work.untilQueued(length) }

    /// Returns once no image is being made, including work cut off by its deadline that is still
    /// winding down.
    public func untilNoWork() async { await work.untilIdle() }

    /// The answer to `request`, with its `X-Request-Id`.
    public func respond(to request: ServiceRequest) async -> ServiceResponse {
        await respond(to: request, route: route(request.path))
    }

    /// The answer to `request` sent along `route` (by the server's route group for it).
    func respond(to request: ServiceRequest, route: ServiceRoute) async -> ServiceResponse {
        let start = ContinuousClock.now
        metrics.inFlight.increment()
        defer { metrics.inFlight.decrement() }
        var response: ServiceResponse
        var sourceFailure: ImagoError?
        let stages = RequestStages()
        let span = requestSpan(request)
        do {
            guard hasSecret(request) else { throw ServerError(status: 403, "Forbidden") }
            response = try await RequestStages.$current.withValue(stages) {
                guard let span else { return try await answer(request, route: route) }
                // The variant's spans and a source fetch's traceparent are this span's children.
                return try await ServiceContext.$current.withValue(span.context) { try await answer(request, route: route) }
            }
        } catch let error as ServerError {
            response = .error(error, head: request.isHead)
        } catch let error as ImagoError {
            var answer = ServerError(loading: error)
            if configuration.developmentErrors { answer.message += " (" + error.description + ")" }
            // The server's side failing, or a source refusing it (a store's 403 on a wrong key).
            if answer.status >= 500 || (error.code.kind == .httpStatus && answer.status != 404) { sourceFailure = error }
            response = .error(answer, head: request.isHead)
        } catch {
            response = .error(ServerError(status: 500, "internal error"), head: request.isHead)
        }
        return finished(
            response, to: request, since: start, sourceFailure: sourceFailure, stages: stages.times.withLock { $0 }, span: span,
            servedFrom: stages.servedFrom.withLock { $0 })
    }

    /// The span of `request` (kind server), a child of the client's `traceparent` when it sent
    /// one; nil when requests are not traced.
    private func requestSpan(_ request: ServiceRequest) -> (any Span)? {
        guard tracesRequests else { return nil }
        var context = ServiceContext.topLevel
        stages.tracer.extract(request.fields, into: &context, using: HTTPFieldsExtractor())
        let method = request.isHead ? "HEAD" : "GET"
        let span = stages.tracer.startSpan(method, context: context, ofKind: .server)
        span.attributes["http.request.method"] = method
        return span
    }

    /// The answer to a request whose variant is kept in memory, made without suspending, so the
    /// server can give it on its event loop before the request reaches the router; nil when the
    /// variant is not kept (then ``respond(to:)`` answers).
    public func keptResponse(to request: ServiceRequest) -> ServiceResponse? {
        let start = ContinuousClock.now
        // Without the secret, the router's path answers the 403.
        guard hasSecret(request) else { return nil }
        let negotiation = negotiation(for: request)
        guard let response = kept(request, negotiation) else { return nil }
        return finished(response, to: request, since: start, span: requestSpan(request), servedFrom: "variant-memory")
    }

    /// The kept variant for a path answered before, if both are still kept.
    private func kept(_ request: ServiceRequest, _ negotiation: Negotiation) -> ServiceResponse? {
        guard let answered = answeredPaths.value(forKey: negotiation.pathKey(request.path)),
            let variant = variants.value(forKey: answered.variantKey)
        else { return nil }
        if answered.delivery.hasExpired() { return .error(ServerError(status: 404, "expired URL"), head: request.isHead) }
        // The kept answers' path: no task-local read here (the caller names the layer to the span).
        metrics.served(from: "variant-memory")
        // Made again with other bytes since the path was answered: its fields are made anew.
        let answer =
            answered.answer.fits(variant)
            ? answered.answer : PreparedAnswer(variant, cacheControl: configuration.cacheControl, varies: answered.varies, delivery: answered.delivery)
        return answer.response(variant.body, to: request)
    }

    /// What the server may answer `request` by its `Accept`.
    private func negotiation(for request: ServiceRequest) -> Negotiation {
        Negotiation(
            request, auto: configuration.output.autoFormats, enforced: configuration.output.enforcedFormats, takesClientHints: configuration.takesClientHints,
            keysCookies: configuration.passesCookies)
    }

    /// Whether `request` carries the server's secret (imgproxy's `IMGPROXY_SECRET`) as
    /// `Authorization: Bearer …`, compared in constant time; true when there is none.
    private func hasSecret(_ request: ServiceRequest) -> Bool {
        guard let secretHeader else { return true }
        return ConstantTime.equal(secretHeader, Array((request.authorization ?? "").utf8))
    }

    /// Counts an image served from `layer` (``ServerMetrics/served(from:)``), which the request's
    /// span also names.
    func served(from layer: String) {
        metrics.served(from: layer)
        RequestStages.current?.servedFrom.withLock { $0 = layer }
    }

    /// `response` with its request id (and the CORS headers the server sends), counted, logged,
    /// and its span (if traced) ended with its status, size and where its image came from.
    /// A source that failed on the server's side (a 5xx) is logged with its cause, for the operator
    /// (the client's answer names none): the code and the loader's reason (`S3 AccessDenied: …`),
    /// never the URL, which may carry credentials.
    private func finished(
        _ response: ServiceResponse, to request: ServiceRequest, since start: ContinuousClock.Instant, sourceFailure: ImagoError? = nil,
        stages: [(String, Int)] = [], span: (any Span)? = nil, servedFrom: String? = nil
    ) -> ServiceResponse {
        var response = response
        let id = request.requestID.flatMap(Self.acceptedRequestID) ?? Self.newRequestID()
        response.headers.append(name: "X-Request-Id", value: id)
        if let origin = configuration.allowOrigin {
            response.headers.append(name: "Access-Control-Allow-Origin", value: origin)
            response.headers.append(name: "Access-Control-Allow-Methods", value: "GET, OPTIONS")
        }
        let elapsed = ContinuousClock.now - start
        metrics.total.record(elapsed)
        metrics.answered(status: response.status)
        let milliseconds = Int(elapsed / .milliseconds(1)), method = request.isHead ? "HEAD" : "GET"
        if let sourceFailure {
            let cause = sourceFailure.code.description + (sourceFailure.reason.map { ": " + $0 } ?? "")
            logger.warning("source failed", metadata: ["request_id": "\(id)", "stage": "\(sourceFailure.stage.rawValue)", "cause": "\(cause)"])
        }
        if let accessLog {
            accessLog.answered(
                requestID: id, method: method, status: response.status, milliseconds: milliseconds, bytes: response.body.readableBytes, stages: stages,
                level: logger.logLevel)
        } else {
            var metadata: Logger.Metadata = [
                "request_id": "\(id)", "method": "\(method)", "status": "\(response.status)", "ms": "\(milliseconds)",
                "bytes": "\(response.body.readableBytes)",
            ]
            for (stage, stageMilliseconds) in stages { metadata[stage] = "\(stageMilliseconds)" }
            logger.log(level: AccessLog.level(status: response.status), "answered", metadata: metadata)
        }
        if let span {
            span.attributes["http.response.status_code"] = response.status
            span.attributes["http.response.body.size"] = response.body.readableBytes
            span.attributes["imago.request_id"] = id
            if let servedFrom { span.attributes["imago.served_from"] = servedFrom }
            if response.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
            span.end()
        }
        return response
    }

    /// A client's id when it is 1–64 letters, digits, `.`, `_` or `-`, so a log line cannot be forged.
    static func acceptedRequestID(_ id: String) -> String? {
        let bytes = id.utf8
        guard (1...64).contains(bytes.count) else { return nil }
        let plain = bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x5F
                || byte == 0x2D
        }
        return plain ? id : nil
    }

    /// The id of a request that brought none: this process's random prefix and a count, unique
    /// without a system call per request (a random number each was a `getrandom` each).
    static func newRequestID() -> String {
        requestIDPrefix + String(requestCount.add(1, ordering: .relaxed).newValue, radix: 16)
    }

    private static let requestIDPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16) + "-"
    private static let requestCount = Atomic<UInt64>(0)

    /// The answer along `route`: a path answered before from memory, else the gallery, or the
    /// dialect mounted there, which compiles the request to a plan that
    /// ``serve(_:to:negotiation:)`` answers.
    private func answer(_ request: ServiceRequest, route: ServiceRoute) async throws -> ServiceResponse {
        let negotiation = negotiation(for: request)
        if let response = kept(request, negotiation) {
            RequestStages.current?.servedFrom.withLock { $0 = "variant-memory" }
            return response
        }
        switch route {
        case .gallery: return try await answerGallery(request)
        case .dialect(let mount):
            let path = mount.path(under: request.path)
            switch mount.dialect {
            case .thumbor: return try await answerThumbor(request, path: path, negotiation)
            case .imgproxy where path.hasPrefix("/info/"): return try await serve(try infoPlan(path), to: request, negotiation: negotiation)
            case .imgproxy: return try await answerImgproxy(request, path: path, negotiation)
            }
        case .notFound: throw ServerError(status: 404, "not found")
        }
    }
}

/// What a request path was found to ask for: its variant's key and whether the answer varies with
/// Accept.
struct AnsweredPath: Sendable {
    var variantKey: String
    var varies: Bool
    var delivery: DeliveryHeaders
    /// The answer's header fields, made when the path was first answered.
    var answer: PreparedAnswer
}

/// What of a request's Accept header can change its answer: whether it takes AVIF (when the
/// server offers it) and WebP.
struct Negotiation {
    /// The media types the client's `Accept` names (``OutputFormat/acceptedTypes(_:)``).
    var accepted: Set<String>
    /// The formats the server may give this client by its `Accept` (``ServerConfiguration/autoFormats``
    /// and ``ServerConfiguration/enforcedFormats`` it accepts), in imgproxy's order: JPEG XL, AVIF, WebP.
    var offered: [OutputFormat]
    /// Those of ``offered`` that replace even a format the URL names.
    var enforced: [OutputFormat]
    /// `offered:jxl,webp;enforced:webp` (and the client hints taken, `;dpr:2;width:300`), part
    /// of the keys of negotiated variants and answered paths.
    var classes: String
    /// The client's DPR and width hints, when the server takes them and they are valid (a DPR
    /// above 0 and at most 8, a width above 0), as imgproxy reads them.
    var hints: (dpr: Double?, width: Int?) = (nil, nil)

    /// The formats `auto` (``OutputSettings/autoFormats``) and `enforced` offer `request`. The two
    /// lists alone: passing the whole ``ServerConfiguration``, a stored property, copied all of it
    /// (every reference in it retained and released) on each kept answer.
    /// With `keysCookies` (cookie passthrough) the client's cookies are part of the classes: a
    /// path answered with one client's cookies is not another's.
    init(_ request: ServiceRequest, auto: [OutputFormat], enforced enforcedFormats: [OutputFormat], takesClientHints: Bool = false, keysCookies: Bool = false) {
        accepted = OutputFormat.acceptedTypes(request.accept)
        let accepted = accepted
        offered = OutputFormat.negotiable.filter { (auto.contains($0) || enforcedFormats.contains($0)) && accepted.contains($0.mimeType) }
        enforced = offered.filter { enforcedFormats.contains($0) }
        // Nothing offered (the default: neither list set, or an Accept naming none) is one constant.
        classes =
            offered.isEmpty
            ? "offered:;enforced:"
            : "offered:" + offered.map(\.rawValue).joined(separator: ",") + ";enforced:" + enforced.map(\.rawValue).joined(separator: ",")
        if takesClientHints {
            hints.dpr = request.dprHint.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 && $0 <= 8 ? $0 : nil }
            hints.width = request.widthHint.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 && $0 <= 65_535 ? $0 : nil }
            classes += ";dpr:" + (hints.dpr.map { "\($0)" } ?? "") + ";width:" + (hints.width.map(String.init) ?? "")
        }
        if keysCookies { classes += ";" + CookiePassthrough.keyPart(request.cookie) }
    }

    /// Whether an answer with the format `named` (nil: the source's) may be a JPEG for this client:
    /// only then is a gain map worth decoding.
    func mayAnswerJPEG(named: OutputFormat?) -> Bool {
        guard let named else { return offered.isEmpty }
        return named == .jpeg && enforced.isEmpty
    }

    /// The key of a raw path answered under these classes.
    func pathKey(_ path: String) -> String { path + "\n" + classes }
}
