import Crypto
import Foundation
import Imago
import Tracing

/// The one answer path every dialect's plan takes.
extension ImageService {
    /// The answer to `plan`: its variant (kept, joined, stored or made), with the path remembered
    /// so a repeat is answered from memory without parsing.
    func serve(_ plan: VariantPlan, to request: ServiceRequest, negotiation: Negotiation) async throws -> ServiceResponse {
        let variant = try await variant(for: plan)
        let pathKey = negotiation.pathKey(request.path)
        let answer = PreparedAnswer(variant, cacheControl: configuration.cacheControl, varies: plan.varies, delivery: plan.delivery)
        answeredPaths.setValue(
            AnsweredPath(variantKey: plan.key, varies: plan.varies, delivery: plan.delivery, answer: answer), forKey: pathKey,
            cost: pathKey.utf8.count + plan.key.utf8.count + 256)
        metrics.keptBytes.set(Int64(memoryInUse))
        return answer.response(variant.body, to: request)
    }

    /// The answer to a request whose source could not be had (`failure`): `plan`'s variant, made
    /// from the dialect's fallback image, with `status` (0: the failure's own), `cacheControl` and
    /// `Fallback-Image: 1`. It is kept under the fallback plan's own key and never remembered for
    /// the request's path, so the next request tries the source again. When the fallback cannot be
    /// had either, the source's failure is the answer.
    func serveFallback(_ plan: VariantPlan, status: Int, cacheControl: String, failure: any Error, to request: ServiceRequest) async throws -> ServiceResponse {
        let variant: EncodedVariant
        do {
            variant = try await self.variant(for: plan)
        } catch {
            throw failure
        }
        served(from: "fallback")
        var response = PreparedAnswer(variant, cacheControl: cacheControl, varies: plan.varies, delivery: plan.delivery).response(variant.body, to: request)
        if response.status == 200, status != 0 {
            response.status = status
        } else if response.status == 200 {
            response.status = (failure as? ServerError)?.status ?? (failure as? ImagoError).map { ServerError(loading: $0).status } ?? 502
        }
        response.headers.append(name: "Fallback-Image", value: "1")
        return response
    }

    /// The kept variant, the one being made for an identical request, or a new one, made by one
    /// of the workers: at once when one is free, else after waiting in the queue (the deadline
    /// runs while it waits); `whenFull` when the queue is full too. The work holds its worker
    /// until it has really ended, even past its deadline, so the workers bound the memory in use.
    /// Work still waiting when every client asking for it has gone leaves the queue.
    func variant(
        key: String, whenFull: ServerError = .queueFull, make: @escaping @Sendable () async throws -> EncodedVariant
    ) async throws -> EncodedVariant {
        if let kept = variants.value(forKey: key) {
            served(from: "variant-memory")
            return kept
        }
        return try await making.value(
            for: key,
            joined: {
                metrics.coalesced.increment()
                RequestStages.current?.servedFrom.withLock { $0 = "coalesced" }
            },
            admit: { () throws(ServerError) -> WorkQueue.Ticket in
                guard !nearContainerLimit else { throw ServerError.overloaded }
                do {
                    return try work.enter()
                } catch {
                    metrics.queueFull.increment()
                    throw whenFull
                }
            },
            abandon: { [work] ticket in work.abandon(ticket) }
        ) { ticket in
            let work = Task {
                try await self.work.turn(ticket)
                self.metrics.workInFlight.increment()
                defer {
                    self.metrics.workInFlight.decrement()
                    self.work.release()
                }
                let variant = try await make()
                self.variants.setValue(variant, forKey: key, cost: variant.body.readableBytes)
                return variant
            }
            return try await WorkDeadline.value(of: work, within: self.configuration.workTimeout)
        }
    }

    /// `plan`'s variant, from the first tier that has it: the node's memory, its disk, the shared
    /// store (``SharedStorage``), else made by a worker. The disk and the store are read before
    /// the work queue is entered, so a read holds no worker; one read per key at a time.
    func variant(for plan: VariantPlan) async throws -> EncodedVariant {
        if let kept = variants.value(forKey: plan.key) {
            served(from: "variant-memory")
            return kept
        }
        if let stored = try await lookups.value(for: plan.key, make: { await self.storedVariant(plan) }) {
            variants.setValue(stored, forKey: plan.key, cost: stored.body.readableBytes)
            return stored
        }
        // The source too is looked for in the fleet's store before any worker is taken.
        let sourceKey = sharedSourceKey(plan)
        if let sourceKey { await sourceStorage?.prepare(sourceKey) }
        let made: Result<EncodedVariant, any Error>
        do {
            made = .success(try await variant(key: plan.key, whenFull: plan.failures.queueFull) { try await self.make(plan) })
        } catch {
            made = .failure(error)
        }
        if let sourceKey { await sourceStorage?.ended(sourceKey) }
        if case .failure(let error) = made, let refusal = error as? ServerError, refusal == plan.failures.queueFull || refusal == .overloaded {
            // Refused before any work began: a lease taken for it ends now, not when it expires.
            await resultStorage?.releaseNow(key: diskKey(for: plan))
        }
        return try made.get()
    }

    /// `plan`'s variant as the node's disk or the shared store keeps it; a variant read from the
    /// store is kept on the disk too.
    private func storedVariant(_ plan: VariantPlan) async -> EncodedVariant? {
        // A stored variant keeps the source's Last-Modified, not its Cache-Control or Expires.
        guard !plan.delivery.passesSourceCacheControl else { return nil }
        let diskKey = diskKey(for: plan)
        if let stored = storedVariant(diskKey) {
            served(from: "variant-disk")
            return stored
        }
        guard let resultStorage, sharesResult(plan) else { return nil }
        let result: StoredObject
        switch await resultStorage.read(key: diskKey) {
        case .result(let found): result = found
        case .failed: return nil
        case .absent:
            // Another node may be making it: one make for the fleet (SharedStorage+Lease).
            guard case .found(let found) = await resultStorage.lookUpAfterMiss(key: diskKey) else { return nil }
            result = found
        }
        served(from: "variant-shared")
        guard let etag = result.etag else { return nil }
        let variant = EncodedVariant.stored(result.body, mimeType: result.contentType, etag: etag, lastModified: result.lastModified)
        storeVariant(variant, diskKey)
        return variant
    }

    /// Whether `plan`'s variant is read from and written to the shared store: an image made by
    /// the server's own rules alone (not with a client's cookies, not carrying the source's
    /// Cache-Control, which a store does not keep).
    private func sharesResult(_ plan: VariantPlan) -> Bool {
        guard case .image = plan.product, plan.sharesResult else { return false }
        return plan.sourceHeaders.isEmpty && !plan.delivery.passesSourceCacheControl
    }

    /// The key `plan`'s original is kept under in the fleet's source store (the pipeline's disk
    /// key), nil when it is not shared there: sources not fetched over http(s), or fetched with a
    /// client's cookies or headers.
    private func sharedSourceKey(_ plan: VariantPlan) -> String? {
        guard sourceStorage != nil, plan.sourceHeaders.isEmpty, let scheme = plan.source.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        return request(plan, options: []).diskCacheKey
    }

    /// Makes `plan`'s variant from the source, keeps it on disk and, after it is answered, in the
    /// shared store.
    private func make(_ plan: VariantPlan) async throws -> EncodedVariant {
        let diskKey = diskKey(for: plan)
        let start = ContinuousClock.now
        do {
            let variant: EncodedVariant
            switch plan.product {
            case .image(let recipe): variant = try await makeImage(plan, recipe, start: start)
            case .report(let report): variant = try await makeReport(plan, report)
            case .passThrough: variant = try await passedThrough(plan)
            }
            storeVariant(variant, diskKey)
            if let resultStorage, sharesResult(plan) { resultStorage.write(StoredObject(variant), key: diskKey) }
            return variant
        } catch {
            stages.failed(error, start: start)
            resultStorage?.release(key: diskKey)
            throw plan.explain(error)
        }
    }

    /// The key `plan`'s variant is stored under on disk: the server's output settings
    /// (``OutputSettings/identity``) and the plan's key, so a restart with other settings makes anew.
    func diskKey(for plan: VariantPlan) -> String {
        "imago-serve:variant\n" + outputIdentity + "\n" + plan.key
    }

    /// The pipeline's request for `plan`'s source with `options` and `processors`, under the
    /// plan's limits.
    private func request(_ plan: VariantPlan, options: ImageRequest.Options, processors: [any ImageProcessing] = []) -> ImageRequest {
        // Kept once, encoded, by the service (also when the pipeline was given with a memory cache).
        var request = ImageRequest(url: plan.source, options: options.union(.disableMemoryCacheWrites), processors: processors)
        request.limits = plan.limits.request
        request.videoFrame = plan.videoFrame
        request.pages = plan.pages
        if !plan.sourceHeaders.isEmpty {
            // Another client's cookies may give other bytes: never read or kept under the URL alone.
            request.headers = plan.sourceHeaders
            request.options.formUnion([.disableDiskCacheReads, .disableDiskCacheWrites])
        }
        if configuration.telemetry.propagatesToSources, let context = ServiceContext.current {
            stages.tracer.inject(context, into: &request.traceHeaders, using: HeaderFieldsInjector())
        }
        return request
    }

    private func makeImage(_ plan: VariantPlan, _ recipe: ImageRecipe, start: ContinuousClock.Instant) async throws -> EncodedVariant {
        let policy = recipe.answer
        if policy.answersSanitizedSVG { return try await sanitizedSVG(plan) }
        if !recipe.passesThrough.isEmpty, let skipped = try await skippingProcessing(plan, formats: recipe.passesThrough) { return skipped }
        let (planner, overlayIdentity) = try await recipe.steps.loaded()
        var processor = PlanProcessor(planner, maxPixels: configuration.limits.maxSourcePixels)
        let output = configuration.output
        processor.reducesDecode = !output.decodesWhole
        processor.linearLight = output.resizesInLinearLight
        processor.encodeBytesPerPixel = { policy.encoding.encodeBytesPerPixel(source: $0, settings: output) }
        // The decode's reservation stays held until the encode below has ended.
        let response = try await pipeline.response(for: request(plan, options: recipe.requestOptions.union(.holdsMemory), processors: [processor]))
        served(from: response.source.rawValue)
        try plan.limits.check(response)
        if policy.passesSVGThrough, response.image.metadata.format == .svg { return try svgVariant(response.data) }
        var image = response.image
        var copies = 0
        let encoding = policy.encoding.choose(for: image, settings: configuration.output)
        if !encoding.format.hasAlpha, image.metadata.hasAlpha {
            switch policy.alpha {
            case .flatten(let background): image = try ImageProcessors.Flatten(background: background).process(image)
            case .drop: image = FramePixels.eachFrame(image, alpha: false) { FramePixels.makeOpaque(&$0) }
            }
            copies = 1
        }
        if let maxSide = encoding.format.imageFormat?.info?.maxSide, image.width > maxSide || image.height > maxSide {
            // The format's largest side (ICO's 256): the result is fitted into it.
            image = try ImageProcessors.Resize(size: PixelSize(width: maxSide, height: maxSide), contentMode: .aspectFit, upscale: false).process(image)
            copies = 1
        }
        let encodeStart = ContinuousClock.now
        let encoded = try await encode(
            image, as: encoding.format, quality: encoding.quality, search: encoding.search, maxBytes: encoding.maxBytes,
            holding: response.memoryHold, copies: copies)
        metrics.encodes.increment(by: Int64(encoded.encodes))
        let encodeEnd = ContinuousClock.now
        let etag = Self.etag(source: response, identity: recipe.identity + "\n" + overlayIdentity + "\n" + outputIdentity, format: encoding.format)
        var variant = EncodedVariant(data: encoded.data, format: encoding.format, etag: etag)
        variant.sourceCaching = .init(response.headers)
        let source = response.image.metadata
        variant.made = .init(
            sourceBytes: response.rangeReadBytes == nil ? response.data.count : Int(response.headers["content-length"] ?? "") ?? response.data.count,
            sourceWidth: source.originalWidth, sourceHeight: source.originalHeight, width: image.width,
            height: image.height)
        stages.made(
            response, sourceHost: plan.source.host, format: encoding.format, bytes: encoded.data.count, facts: variant.made,
            encode: encodeStart..<encodeEnd, start: start)
        return variant
    }

    /// A report's JSON: the dialect's facts about the source's full decode.
    private func makeReport(_ plan: VariantPlan, _ report: any SourceReporting) async throws -> EncodedVariant {
        let response = try await pipeline.response(for: request(plan, options: report.requestOptions))
        served(from: response.source.rawValue)
        let json = try await report.report(response, pipeline: pipeline)
        return EncodedVariant(data: json, format: .json, etag: Self.etag(source: response, identity: report.identity + "\n" + outputIdentity, format: .json))
    }

    /// `raw`: the source's bytes as they came, whatever they are.
    private func passedThrough(_ plan: VariantPlan) async throws -> EncodedVariant {
        let response = try await pipeline.data(for: request(plan, options: []))
        served(from: "raw")
        let sniffed = ImageFormat.sniff(response.data, decoders: pipeline.decoders)
        return .passedThrough(response.data, sniffed: sniffed, headers: response.headers)
    }

    /// `skip_processing`: the source's bytes as they came when it is one of `formats`, else nil
    /// (it is processed).
    private func skippingProcessing(_ plan: VariantPlan, formats: Set<String>) async throws -> EncodedVariant? {
        let response = try await pipeline.data(for: request(plan, options: []))
        guard let sniffed = ImageFormat.sniff(response.data, decoders: pipeline.decoders), formats.contains(sniffed.rawValue) else { return nil }
        try plan.limits.check(bytes: response.data.count)
        served(from: "skip-processing")
        return .passedThrough(response.data, sniffed: sniffed, headers: response.headers)
    }

    /// An SVG source asked for as SVG: sanitised and passed through; any other source is a 422.
    private func sanitizedSVG(_ plan: VariantPlan) async throws -> EncodedVariant {
        let response = try await pipeline.data(for: request(plan, options: []))
        served(from: response.source.rawValue)
        guard ImageFormat.sniff(response.data, decoders: pipeline.decoders) == .svg else {
            throw ServerError(status: 422, "Imago writes SVG only from an SVG source")
        }
        try plan.limits.check(bytes: response.data.count)
        return try svgVariant(response.data)
    }

    private func svgVariant(_ data: Data) throws -> EncodedVariant {
        let sanitized = configuration.output.sanitizesSVG ? try SVGSanitizer.sanitize(data) : data
        return EncodedVariant(data: sanitized, format: .svg, etag: Self.etag(sourceBytes: sanitized, format: ""))
    }

    /// The encoded variant kept on disk under `diskKey`, when the server has a disk cache and the
    /// entry reads back whole.
    func storedVariant(_ diskKey: String) -> EncodedVariant? {
        guard let disk = pipeline.configuration.diskCache, let entry = disk.entry(for: diskKey), let mimeType = entry.metadata.contentType,
            let etag = entry.metadata.freshness.etag
        else { return nil }
        return .stored(entry.data, mimeType: mimeType, etag: etag, lastModified: entry.metadata.freshness.lastModified)
    }

    /// Keeps `variant`'s own bytes on disk, so a restart or an evicted entry is answered without
    /// decoding or encoding again.
    func storeVariant(_ variant: EncodedVariant, _ diskKey: String) {
        guard let disk = pipeline.configuration.diskCache else { return }
        let now = Date()
        var headers: HeaderFields = ["ETag": variant.etag, "Cache-Control": "max-age=31536000"]
        if let lastModified = variant.sourceCaching.lastModified { headers["Last-Modified"] = lastModified }
        let freshness = HTTPFreshness(headers: headers, receivedAt: now)
        disk.store(variant.data, for: diskKey, metadata: CacheMetadata(contentType: variant.mimeType, receivedAt: now, freshness: freshness))
    }

    /// Whether the container's memory is nearly used up: new work is shed before the kernel's OOM
    /// killer would stop the process (answers already made are still given).
    var nearContainerLimit: Bool {
        guard let container = configuration.containerMemory, let usage = container.usage() else { return false }
        let near = Double(usage) > Double(container.limit) * configuration.shedsAboveMemoryFraction
        if near { metrics.shedForMemory.increment() }
        return near
    }

    /// Encodes on the pipeline's CPU stage, under the same bound as decodes: an encode takes tens
    /// of milliseconds to seconds (an auto-quality search ~200 times one encode). With `search`,
    /// auto quality chooses the quality (`quality` when it cannot); `max_bytes` then lowers it
    /// further when the answer is still too large.
    /// A `hold` (the decode's reservation, kept past delivery) counts toward what the encode
    /// reserves, and is released when it ends; `copies` are images made from the response's
    /// beside it (a flattened copy), counted too.
    func encode(
        _ image: Image, as format: OutputFormat, quality: Int, search: AutoQuality? = nil, maxBytes: Int, holding hold: MemoryHold? = nil, copies: Int = 0
    ) async throws -> (data: Data, quality: Int, encodes: Int) {
        let settings = configuration.output.encoding
        // The encoder's memory is held from the pipeline's budget first: a libjxl encode of a
        // 50 MP image needs 2 GB, which the budget refuses before anything is allocated.
        // The made image is counted too: the budget then bounds the images waiting to be encoded
        // (each decode's reservation ends with it), so a burst of large images cannot pile up
        // their pixels beside new decodes.
        let imageBytes = image.frames.reduce(0) { $0 + $1.pixels.count }
        let working = format.encoder(quality: quality, settings: settings).workingBytes(for: image) + imageBytes * (1 + copies)
        guard working <= pipeline.configuration.decodeMemoryBudget.bytes else {
            throw ServerError(
                status: 422, "the result (\(image.width)×\(image.height)) needs more memory to encode as \(format.rawValue) than the server's budget holds")
        }
        return try await pipeline.runOnCPUStage(reserving: working, holding: hold, for: image) {
            guard let search, let imageFormat = format.imageFormat else {
                return try SizeBoundEncoding.encode(image, as: format, quality: quality, maxBytes: maxBytes, settings: settings)
            }
            let choice = try search.encode(image, format: imageFormat) { format.encoder(quality: $0, settings: settings) }
            guard maxBytes > 0, choice.data.count > maxBytes else { return (choice.data, choice.quality, choice.encodes) }
            let bounded = try SizeBoundEncoding.encode(image, as: format, quality: choice.quality, maxBytes: maxBytes, settings: settings)
            return (bounded.data, bounded.quality, choice.encodes + bounded.encodes)
        }
    }

    /// The one ETag rule: a digest of what determines an answer's bytes. The source is named by its
    /// strong validator and URL when it sent one, else by its bytes; `identity` is everything
    /// besides the source that made the bytes (the plan's recipe and the server's
    /// ``OutputSettings/identity``; empty for bytes answered as they came); then the format.
    static func etag(sourceBytes: Data, validator: String? = nil, url: URL? = nil, identity: String = "", format: String) -> String {
        var hash = SHA256()
        if let validator, let url, !validator.hasPrefix("W/") {
            hash.update(data: Data(("etag:" + validator + url.absoluteString).utf8))
        } else {
            hash.update(data: sourceBytes)
        }
        if !identity.isEmpty || !format.isEmpty { hash.update(data: Data(("\n" + identity + "\n" + format).utf8)) }
        return "\"" + hash.finalize().prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// ``etag(sourceBytes:validator:url:identity:format:)`` of a variant made from `source`.
    /// A source read by ranges (``ImageResponse/rangeReadBytes``) had a strong ETag or a
    /// Last-Modified date, which named every range: its version is that, not its first bytes.
    static func etag(source: ImageResponse, identity: String, format: OutputFormat) -> String {
        var validator = source.headers["etag"]
        if source.rangeReadBytes != nil, validator == nil || validator?.hasPrefix("W/") == true {
            validator = "last-modified:" + (source.headers["last-modified"] ?? "") + " length:" + (source.headers["content-length"] ?? "")
        }
        return etag(sourceBytes: source.data, validator: validator, url: source.url, identity: identity, format: format.rawValue)
    }
}
