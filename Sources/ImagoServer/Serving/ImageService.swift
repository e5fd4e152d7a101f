import Crypto
import Dispatch
import Foundation
import Imago
import Logging
import Prometheus
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
    /// The service's counters, gauges and timers.
    public let metrics: ServerMetrics
    let pipeline: ImagePipeline
    private let logger: Logger
    let sources: SourceResolver
    private let work: WorkLimiter
    let variants: MemoryCache<String, EncodedVariant>
    /// A request already answered (its raw path and the Accept classes that matter) → its variant
    /// key: a repeat skips parsing, signature check and source resolution, which depend on nothing
    /// else and come out the same every time.
    let answeredPaths: MemoryCache<String, AnsweredPath>
    private let making = Locked<[String: Task<EncodedVariant, any Error>]>([:])
    let stages: StageRecorder
    private let watermarks: WatermarkLoader
    /// thumbor's watermark and frame images, decoded, by URL: a few images many variants place,
    /// kept so each is fetched and decoded once (at most 16 MB, trimmed on memory pressure).
    let thumborOverlays = MemoryCache<String, Image>(limits: .init(cost: 16 << 20))
    /// `/gallery`'s page, made on first request.
    let gallery = GalleryCache()

    /// A service loading through `pipeline`, or through one made from `configuration`'s limits and
    /// address policy that reports to `metrics`; its spans go to `tracer` (the process's, by default).
    public init(
        configuration: ServerConfiguration, pipeline: ImagePipeline? = nil, metrics: ServerMetrics = ServerMetrics(),
        logger: Logger = Logger(label: "imago-serve"), tracer: any Tracer = InstrumentationSystem.tracer
    ) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        self.pipeline = try pipeline ?? Self.makePipeline(configuration, metrics: metrics)
        sources = SourceResolver(allowedHosts: configuration.allowedHosts, localRoot: configuration.localRoot)
        work = WorkLimiter(limit: configuration.maxConcurrentWork)
        let pathBytes = min(configuration.memoryBytes / 16, 16 << 20)
        variants = MemoryCache(limits: .init(cost: configuration.memoryBytes - pathBytes))
        answeredPaths = MemoryCache(limits: .init(cost: pathBytes))
        MemoryPressureMonitor.shared.register(variants)
        MemoryPressureMonitor.shared.register(answeredPaths)
        MemoryPressureMonitor.shared.register(thumborOverlays)
        stages = StageRecorder(tracer: tracer, metrics: metrics)
        watermarks = try WatermarkLoader(configuration.watermark, opacity: configuration.watermarkOpacity, pipeline: self.pipeline)
    }

    /// The pipeline `configuration` asks for: its source limits and, unless private addresses are
    /// allowed, the public-only address policy.
    public static func makePipeline(_ configuration: ServerConfiguration, metrics: ServerMetrics? = nil) throws -> ImagePipeline {
        var pipeline = ImagePipeline.Configuration()
        if let metrics { pipeline.metricsFactory = PrometheusMetricsFactory(registry: metrics.registry) }
        pipeline.addressPolicy = configuration.allowsPrivateAddresses ? .allowAll : .publicOnly
        pipeline.maxResponseSize = configuration.maxSourceBytes
        pipeline.deadline = configuration.sourceTimeout
        pipeline.decodingOptions.maxPixels = configuration.maxSourcePixels
        pipeline.decodingOptions.maxFrames = configuration.maxFrames
        // The service keeps its variants encoded; a decoded copy would hold each one twice.
        pipeline.memoryCache = nil
        #if DiskCache
            if let directory = configuration.cacheDirectory {
                pipeline.diskCache = try DiskCache(configuration: .init(directory: directory))
            }
        #endif
        return ImagePipeline(configuration: pipeline)
    }

    /// Bytes the service keeps in memory between requests (encoded variants and answered paths),
    /// at most ``ServerConfiguration/memoryBytes``.
    public var memoryInUse: Int { variants.totalCost + answeredPaths.totalCost }

    /// Requests making an image now.
    public var workInFlight: Int { work.inFlight }

    /// Returns once no image is being made, including work cut off by its deadline that is still
    /// winding down.
    public func untilNoWork() async { await work.untilIdle() }

    /// The answer to `request`, with its `X-Request-Id`.
    public func respond(to request: ServiceRequest) async -> ServiceResponse {
        let start = ContinuousClock.now
        metrics.inFlight.increment()
        defer { metrics.inFlight.decrement() }
        var response: ServiceResponse
        do {
            response = try await answer(request)
        } catch let error as ServerError {
            response = .error(error, head: request.isHead)
        } catch let error as ImagoError {
            response = .error(ServerError(loading: error), head: request.isHead)
        } catch {
            response = .error(ServerError(status: 500, "internal error"), head: request.isHead)
        }
        return finished(response, to: request, since: start)
    }

    /// The answer to a request whose variant is kept in memory, made without suspending, so the
    /// server can give it on its event loop before the request reaches the router; nil when the
    /// variant is not kept (then ``respond(to:)`` answers).
    public func keptResponse(to request: ServiceRequest) -> ServiceResponse? {
        let start = ContinuousClock.now
        let negotiation = Negotiation(request, avifEnabled: configuration.negotiatesAVIF)
        guard let response = kept(request, negotiation) else { return nil }
        return finished(response, to: request, since: start)
    }

    /// The kept variant for a path answered before, if both are still kept.
    private func kept(_ request: ServiceRequest, _ negotiation: Negotiation) -> ServiceResponse? {
        guard let answered = answeredPaths.value(forKey: negotiation.pathKey(request.path)),
            let variant = variants.value(forKey: answered.variantKey)
        else { return nil }
        if answered.delivery.hasExpired() { return .error(ServerError(status: 404, "expired URL"), head: request.isHead) }
        metrics.served(from: "variant-memory")
        return .image(variant, request: request, cacheControl: configuration.cacheControl, varies: answered.varies, delivery: answered.delivery)
    }

    /// `response` with its request id, counted and logged.
    private func finished(_ response: ServiceResponse, to request: ServiceRequest, since start: ContinuousClock.Instant) -> ServiceResponse {
        var response = response
        let id = request.requestID.flatMap(Self.acceptedRequestID) ?? Self.newRequestID()
        response.headers.append(name: "X-Request-Id", value: id)
        let elapsed = ContinuousClock.now - start
        metrics.total.record(elapsed)
        metrics.answered(status: response.status)
        logger.info(
            "answered",
            metadata: [
                "request_id": "\(id)", "method": "\(request.isHead ? "HEAD" : "GET")", "status": "\(response.status)",
                "ms": "\(Int(elapsed / .milliseconds(1)))", "bytes": "\(response.body.readableBytes)",
            ])
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

    static func newRequestID() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }

    private func answer(_ request: ServiceRequest) async throws -> ServiceResponse {
        let negotiation = Negotiation(request, avifEnabled: configuration.negotiatesAVIF)
        if let response = kept(request, negotiation) { return response }
        if configuration.servesGallery, request.path == "/gallery" || request.path == "/gallery/" { return try await answerGallery(request) }
        if configuration.dialect == .thumbor { return try await answerThumbor(request, negotiation) }
        if request.path.hasPrefix("/info/") { return try await answerInfo(request, negotiation) }
        let path = try ProcessingPath(parsing: request.path)
        guard configuration.signer.verify(path.signature, for: path.signedPart) else { throw ServerError.forbidden("invalid signature") }
        var options = try ProcessingOptions(parsing: path.options, presets: configuration.presets)
        if !options.raw, options.format == nil, let name = path.outputExtension {
            guard OutputFormat(extension: name) != nil else { throw ServerError.badRequest("Imago does not write '\(name)'") }
            options.format = name.lowercased()
        }
        try VariantProcessor.checkRequestedSize(options, maxPixels: configuration.maxSourcePixels)
        let url = try sources.url(for: path.source)
        let explicit = options.format.flatMap(OutputFormat.init(extension:))
        let delivery = DeliveryHeaders(options: options, source: url, returnsAttachment: configuration.returnsAttachment)
        if options.raw || !(options.skipProcessing + configuration.skipProcessingFormats).isEmpty {
            if let response = try await unprocessed(url: url, options: options, explicit: explicit, request: request, delivery: delivery) {
                return response
            }
        }
        let key = url.absoluteString + "\n" + options.key + "\n" + (explicit?.rawValue ?? negotiation.classes)
        let variant = try await variant(key: key) { [options] () async throws -> EncodedVariant in
            try await self.make(key: key, url: url, options: options, explicit: explicit, accepted: negotiation.accepted)
        }
        let pathKey = negotiation.pathKey(request.path)
        answeredPaths.setValue(
            AnsweredPath(variantKey: key, varies: explicit == nil, delivery: delivery), forKey: pathKey, cost: pathKey.utf8.count + key.utf8.count)
        metrics.keptBytes.set(Int64(memoryInUse))
        return .image(variant, request: request, cacheControl: configuration.cacheControl, varies: explicit == nil, delivery: delivery)
    }

    /// The cached variant, the one being made for an identical request, or a new one (which
    /// takes a place of the work limit, or fails with 503).
    func variant(key: String, make: @escaping @Sendable () async throws -> EncodedVariant) async throws -> EncodedVariant {
        if let cached = variants.value(forKey: key) {
            metrics.served(from: "variant-memory")
            return cached
        }
        let task = try making.withLock { making -> Task<EncodedVariant, any Error> in
            if let running = making[key] {
                metrics.coalesced.increment()
                return running
            }
            guard work.tryAcquire() else { throw ServerError.overloaded }
            metrics.workInFlight.increment()
            // Not the caller's child: a client that hangs up does not cancel what others wait for.
            // The work holds its place until it has really ended, even past its deadline.
            let work = Task {
                defer {
                    self.metrics.workInFlight.decrement()
                    self.work.release()
                }
                let variant = try await make()
                self.variants.setValue(variant, forKey: key, cost: variant.body.readableBytes)
                return variant
            }
            let task = Task {
                defer { _ = self.making.withLock { $0.removeValue(forKey: key) } }
                return try await WorkDeadline.value(of: work, within: self.configuration.workTimeout)
            }
            making[key] = task
            return task
        }
        return try await task.value
    }

    private func make(key: String, url: URL, options: ProcessingOptions, explicit: OutputFormat?, accepted: Set<String>) async throws -> EncodedVariant {
        let diskKey = "imago-serve:variant\n" + key
        if let stored = storedVariant(diskKey) {
            metrics.served(from: "variant-disk")
            return stored
        }
        if explicit == .svg { return try await sanitizedSVG(url: url, options: options) }
        let watermark = options.watermark == nil ? nil : try await watermarks.watermark()
        var processor = VariantProcessor(options: options, maxResultDimension: configuration.maxResultDimension, watermark: watermark)
        processor.maxPixels = configuration.maxSourcePixels
        let start = ContinuousClock.now
        do {
            // Kept once, encoded, by the service (also when the pipeline was given with a memory cache).
            var requestOptions: ImageRequest.Options = [.disableMemoryCacheWrites]
            if !(options.stripColorProfile ?? configuration.stripsColorProfile) { requestOptions.insert(.keepsColorProfile) }
            if !(options.stripMetadata ?? configuration.stripsMetadata) {
                requestOptions.insert(.keepsMetadata)
            } else if options.keepCopyright ?? configuration.keepsCopyright {
                requestOptions.insert(.keepsCopyright)
            }
            let response = try await pipeline.response(for: ImageRequest(url: url, options: requestOptions, processors: [processor]))
            metrics.served(from: response.source.rawValue)
            try SourceLimits(options: options).check(response)
            if explicit == nil, response.image.metadata.format == .svg, !configuration.alwaysRasterizesSVG {
                return try svgVariant(response.data, options: options, diskKey: diskKey)
            }
            var image = response.image
            let format =
                explicit
                ?? OutputFormat.negotiate(
                    accepted: accepted, source: response.image.metadata.format, hasAlpha: image.metadata.hasAlpha,
                    avifEnabled: configuration.negotiatesAVIF, preferred: configuration.preferredFormats)
            if !format.hasAlpha, image.metadata.hasAlpha {
                image = try ImageProcessors.Flatten(background: options.background ?? .white).process(image)
            }
            let quality = options.quality > 0 ? options.quality : options.formatQuality[format.rawValue] ?? configuration.defaultQuality
            // An autoquality the URL asks for wins; the server's applies when the URL fixes no quality.
            let fixed = options.autoQuality == nil && (options.quality > 0 || options.formatQuality[format.rawValue] != nil)
            let search =
                fixed
                ? nil
                : configuration.autoQuality.applying(options.autoQuality).search(
                    format: format, width: image.width, height: image.height, animated: image.isAnimated)
            let encodeStart = ContinuousClock.now
            let encoded = try await Self.encode(image, as: format, quality: quality, search: search, maxBytes: options.maxBytes)
            metrics.encodes.increment(by: Int64(encoded.encodes))
            stages.made(response, format: format, encode: encodeStart..<ContinuousClock.now, start: start)
            let etag = Self.etag(source: response, options: options, watermark: watermark, format: format)
            let variant = EncodedVariant(data: encoded.data, format: format, etag: etag)
            storeVariant(variant, diskKey)
            return variant
        } catch {
            stages.failed(error, start: start)
            throw error
        }
    }

    /// An SVG source asked for as SVG: sanitised and passed through; any other source is a 422.
    private func sanitizedSVG(url: URL, options: ProcessingOptions) async throws -> EncodedVariant {
        let response = try await pipeline.data(for: ImageRequest(url: url))
        metrics.served(from: response.source.rawValue)
        guard SourceFormat.sniff(response.data)?.name == "svg" else { throw ServerError(status: 422, "Imago writes SVG only from an SVG source") }
        try SourceLimits(options: options).check(bytes: response.data.count)
        return try svgVariant(response.data, options: options, diskKey: nil)
    }

    private func svgVariant(_ data: Data, options: ProcessingOptions, diskKey: String?) throws -> EncodedVariant {
        let sanitized = try SVGSanitizer.sanitize(data)
        var hash = SHA256()
        hash.update(data: sanitized)
        let variant = EncodedVariant(data: sanitized, format: .svg, etag: Self.quoted(hash))
        if let diskKey { storeVariant(variant, diskKey) }
        return variant
    }

    /// The encoded variant kept on disk under `diskKey`, when the server has a disk cache and the
    /// entry reads back whole.
    func storedVariant(_ diskKey: String) -> EncodedVariant? {
        guard let disk = pipeline.configuration.diskCache, let entry = disk.entry(for: diskKey),
            let format = entry.metadata.contentType.flatMap(OutputFormat.init(mimeType:)), let etag = entry.metadata.freshness.etag
        else { return nil }
        return EncodedVariant(data: entry.data, format: format, etag: etag)
    }

    /// Keeps `variant`'s own bytes on disk, so a restart or an evicted entry is answered without
    /// decoding or encoding again.
    func storeVariant(_ variant: EncodedVariant, _ diskKey: String) {
        guard let disk = pipeline.configuration.diskCache else { return }
        let now = Date()
        let freshness = HTTPFreshness(headers: ["ETag": variant.etag, "Cache-Control": "max-age=31536000"], receivedAt: now)
        disk.store(variant.data, for: diskKey, metadata: CacheMetadata(contentType: variant.format.mimeType, receivedAt: now, freshness: freshness))
    }

    /// The source's bytes as they came, for `raw`, or for `skip_processing` when the source is
    /// one of the listed formats and the answer's format is its own; nil when processing is not
    /// skipped.
    private func unprocessed(
        url: URL, options: ProcessingOptions, explicit: OutputFormat?, request: ServiceRequest, delivery: DeliveryHeaders
    ) async throws -> ServiceResponse? {
        let response = try await pipeline.data(for: ImageRequest(url: url))
        let sourceFormat = SourceFormat.sniff(response.data)
        if !options.raw {
            guard let sourceFormat, (options.skipProcessing + configuration.skipProcessingFormats).contains(sourceFormat.name),
                explicit == nil || explicit?.rawValue == sourceFormat.name
            else { return nil }
            try SourceLimits(options: options).check(bytes: response.data.count)
        }
        metrics.served(from: options.raw ? "raw" : "skip-processing")
        let type = sourceFormat?.mimeType ?? response.headers["Content-Type"] ?? "application/octet-stream"
        var hash = SHA256()
        hash.update(data: response.data)
        let etag = Self.quoted(hash)
        return .unprocessed(
            response.data, mimeType: type, etag: etag, request: request, cacheControl: configuration.cacheControl,
            delivery: delivery.with(extension: sourceFormat?.fileExtension))
    }

    /// Encodes off the cooperative pool: an encode takes tens of milliseconds to seconds. With
    /// `search`, autoquality chooses the quality (`quality` when it cannot); `max_bytes` then
    /// lowers it further when the answer is still too large.
    static func encode(
        _ image: Image, as format: OutputFormat, quality: Int, search: AutoQuality? = nil, maxBytes: Int
    ) async throws -> (data: Data, quality: Int, encodes: Int) {
        try await offThePool {
            guard let search, let imageFormat = format.imageFormat else {
                return try SizeBoundEncoding.encode(image, as: format, quality: quality, maxBytes: maxBytes)
            }
            let choice = try search.encode(image, format: imageFormat) { format.encoder(quality: $0) }
            guard maxBytes > 0, choice.data.count > maxBytes else { return (choice.data, choice.quality, choice.encodes) }
            let bounded = try SizeBoundEncoding.encode(image, as: format, quality: choice.quality, maxBytes: maxBytes)
            return (bounded.data, bounded.quality, choice.encodes + bounded.encodes)
        }
    }

    /// Synchronous work on a GCD thread, so it does not hold one of the cooperative pool's threads.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// A digest of what determines the bytes: the source's validators when it sent a strong one,
    /// else its bytes; the options; the format.
    static func etag(source: ImageResponse, options: ProcessingOptions, watermark: Watermark?, format: OutputFormat) -> String {
        etag(source: source, identity: options.key + "\n" + (watermark?.identifier ?? ""), format: format)
    }

    /// As above, for options given as text: `identity` names everything besides the source that
    /// made the bytes.
    static func etag(source: ImageResponse, identity: String, format: OutputFormat) -> String {
        let header = { (name: String) in source.headers[name] }
        var hash = SHA256()
        if let validator = header("etag"), !validator.hasPrefix("W/") {
            hash.update(data: Data(("etag:" + validator + source.url.absoluteString).utf8))
        } else {
            hash.update(data: source.data)
        }
        hash.update(data: Data(("\n" + identity + "\n" + format.rawValue).utf8))
        return quoted(hash)
    }

    /// A strong ETag: the first 16 bytes of `hash`'s digest in hex, quoted.
    static func quoted(_ hash: SHA256) -> String {
        "\"" + hash.finalize().prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }
}

/// What a request path was found to ask for: its variant's key and whether the answer varies with
/// Accept.
struct AnsweredPath: Sendable {
    var variantKey: String
    var varies: Bool
    var delivery: DeliveryHeaders
}

/// What of a request's Accept header can change its answer: whether it takes AVIF (when the
/// server offers it) and WebP.
struct Negotiation {
    var accepted: Set<String>
    /// `avif:…,webp:…`, part of the keys of negotiated variants.
    var classes: String

    init(_ request: ServiceRequest, avifEnabled: Bool) {
        accepted = OutputFormat.acceptedTypes(request.accept)
        let avif = avifEnabled && accepted.contains("image/avif"), webp = accepted.contains("image/webp")
        classes = "avif:\(avif),webp:\(webp)"
    }

    /// The key of a raw path answered under these classes.
    func pathKey(_ path: String) -> String { path + "\n" + classes }
}
