import Foundation

/// The CPU stage and delivery: a transfer's bytes (from disk or a download) are decoded once for
/// every handle that wants an image, each variant made once and cached, then every handle is
/// completed. This is the one place that decodes a transfer.
extension ImagePipeline {
    /// One transfer's decodes (full size, per thumbnail, scaled down) and the variants made from
    /// them so far.
    struct Decoded {
        var decodes: [ImageRequest.DecodePlan: Result<Image, ImagoError>] = [:]
        var variants: [ImageRequest.CacheKey: Result<Image, ImagoError>] = [:]
        /// When each decode ran, and each variant's decode and processing, for the responses.
        var decodeTimes: [ImageRequest.DecodePlan: Range<ContinuousClock.Instant>] = [:]
        var variantTimings: [ImageRequest.CacheKey: ImageResponse.Timings] = [:]
        /// The memory each variant of a request with `.holdsMemory` keeps held after delivery.
        var holds: [ImageRequest.CacheKey: MemoryHold] = [:]
    }

    /// What a transfer's decodes hold in the memory budget: all of it, and each variant's share
    /// of its processing (what a `.holdsMemory` request's response keeps).
    struct MemoryEstimate {
        var bytes = 0
        var width = 0
        var height = 0
        var shares: [ImageRequest.CacheKey: Int] = [:]
        var decodes: [ImageRequest.DecodePlan: Int] = [:]
    }

    /// Carries out `next` for transfer `transferID` whose bytes arrived as `result`: decodes on the
    /// CPU stage when handles want an image, settles the disk entry, and completes the handles.
    func deliver(
        _ transferID: UInt64, request: ImageRequest, result: Result<Loaded, ImagoError>,
        next: Transfers.NextStep, contacted: Bool, loading: Range<ContinuousClock.Instant>
    ) async {
        guard case .decode(let requests, let priority) = next, case .success(let loaded) = result else {
            finishUndecoded(transferID, request: request, result: result, next: next, contacted: contacted, loading: loading)
            return
        }
        // The decodes wait for room in the memory budget first; an image over the whole budget
        // fails its decodes (data-only handles still get the bytes).
        let (reservation, refusal) = await reserveMemory(for: requests, loaded: loaded, priority: priority)
        await cpuStage.run(priority: priority) {
            self.decodeAndFinish(
                transferID, request: request, requests: requests, loaded: loaded, reserved: reservation, refusal: refusal, contacted: contacted,
                loading: loading)
        }
    }

    /// ``deliver(_:request:result:next:contacted:loading:)`` from a thread of the cache stage: when
    /// the memory budget has room at once, the CPU stage takes the decodes straight from here (a
    /// disk hit's usual path, with no task in between); only a decode that must wait for room
    /// goes through a task.
    func deliverFromCacheStage(
        _ transferID: UInt64, request: ImageRequest, result: Result<Loaded, ImagoError>,
        next: Transfers.NextStep, loading: Range<ContinuousClock.Instant>
    ) {
        guard case .decode(let requests, let priority) = next, case .success(let loaded) = result else {
            finishUndecoded(transferID, request: request, result: result, next: next, contacted: false, loading: loading)
            return
        }
        let estimate = memoryEstimate(for: requests, data: loaded.data)
        // No room now, or more than the whole budget: the async path waits, or refuses the decode.
        guard configuration.decodeMemoryBudget.tryReserve(estimate.bytes) else {
            Task { await self.deliver(transferID, request: request, result: result, next: next, contacted: false, loading: loading) }
            return
        }
        cpuStage.submit(priority: priority) {
            self.decodeAndFinish(
                transferID, request: request, requests: requests, loaded: loaded, reserved: estimate, refusal: nil, contacted: false, loading: loading)
        }
    }

    /// Completes a transfer no handle decodes: its bytes are kept only if they sniff as an image.
    private func finishUndecoded(
        _ transferID: UInt64, request: ImageRequest, result: Result<Loaded, ImagoError>,
        next: Transfers.NextStep, contacted: Bool, loading: Range<ContinuousClock.Instant>
    ) {
        if case .success(let loaded) = result { loaded.pendingWrite?.settle(loaded.data, valid: sniffsAsImage(loaded.data)) }
        if case .gone = next { return }
        finish(transferID, request: request, result: result, decoded: Decoded(), contacted: contacted, loading: loading)
    }

    /// On the CPU stage: every variant the handles want, made and cached before any handle
    /// completes (so a caller asking again right away hits it), the disk entry settled, then the
    /// handles completed. The `reserved` memory is given back, except the shares of variants whose
    /// requests hold theirs past delivery (``ImageRequest/Options/holdsMemory``).
    private func decodeAndFinish(
        _ transferID: UInt64, request: ImageRequest, requests: [ImageRequest], loaded: Loaded, reserved: MemoryEstimate, refusal: ImagoError?,
        contacted: Bool, loading: Range<ContinuousClock.Instant>
    ) {
        var decoded = Decoded()
        if let refusal { for request in requests { decoded.decodes[request.decodePlan] = .failure(refusal) } }
        // Full-size decodes first, so variants that could fold a resize reuse one instead.
        let ordered = requests.filter { $0.decodePlan.isFull } + requests.filter { !$0.decodePlan.isFull }
        for request in ordered { _ = variant(for: request, of: &decoded, loaded: loaded) }
        // Only bytes that decoded reach the disk cache.
        let valid = decoded.decodes.values.contains { if case .success = $0 { true } else { false } }
        loaded.pendingWrite?.settle(loaded.data, valid: valid)
        settleMemory(reserved, requests: requests, decoded: &decoded, loaded: loaded)
        finish(transferID, request: request, result: .success(loaded), decoded: decoded, contacted: contacted, loading: loading)
    }

    /// The decodes are over: what the made images still need passes to the holds of requests with
    /// ``ImageRequest/Options/holdsMemory``, the decodes are dropped, and the rest of `reserved` is
    /// given back.
    private func settleMemory(_ reserved: MemoryEstimate, requests: [ImageRequest], decoded: inout Decoded, loaded: Loaded) {
        var remaining = reserved.bytes
        for request in requests where request.options.contains(.holdsMemory) && decoded.holds[request.cacheKey] == nil {
            guard case .success = decoded.variants[request.cacheKey], let share = reserved.shares[request.cacheKey] else { continue }
            // A variant that is its decode's own pixels keeps the decode's bytes too.
            let isDecode = decoded.variants[request.cacheKey].flatMap { try? $0.get() }.map { variant in
                decoded.decodes.values.contains { (try? $0.get())?.frames.first?.pixels.sharesStorage(with: variant.frames.first?.pixels) == true }
            }
            let decodeBytes = isDecode == true ? reserved.decodes[request.decodePlan] ?? 0 : 0
            // The response keeps the source's bytes too (ImageResponse.data).
            let held = min(share + decodeBytes + loaded.data.count, remaining)
            decoded.holds[request.cacheKey] = MemoryHold(adopting: held, in: configuration.decodeMemoryBudget)
            remaining -= held
        }
        // The decodes go before their memory does (a variant that is one keeps it alive).
        decoded.decodes.removeAll()
        configuration.decodeMemoryBudget.release(remaining)
    }

    /// A handle that joined its transfer after the decodes were planned (while they ran): its
    /// variant is made apart, its memory reserved first like any other decode's, on the CPU stage.
    private func decodeLate(_ task: ImageTask, joined: Bool, loaded: Loaded, loading: Range<ContinuousClock.Instant>) {
        Task {
            let requests = [task.request]
            let (reserved, refusal) = await reserveMemory(for: requests, loaded: loaded, priority: task.request.priority)
            await cpuStage.run(priority: task.request.priority) {
                var decoded = Decoded()
                if let refusal { decoded.decodes[task.request.decodePlan] = .failure(refusal) }
                let made = self.variant(for: task.request, of: &decoded, loaded: loaded)
                self.settleMemory(reserved, requests: requests, decoded: &decoded, loaded: loaded)
                task.complete(with: made.map { self.response(task.request, image: $0, decoded: decoded, loaded: loaded, loading: loading, joined: joined) })
            }
        }
    }

    /// The response a handle gets for `image`, its variant of `loaded`.
    private func response(
        _ request: ImageRequest, image: Image, decoded: Decoded, loaded: Loaded, loading: Range<ContinuousClock.Instant>, joined: Bool
    ) -> ImageResponse {
        var response = ImageResponse(
            request: request, image: image, data: loaded.data, url: loaded.response.url, statusCode: loaded.response.statusCode,
            headers: loaded.response.headers, source: loaded.source, joinedTransfer: joined)
        response.timings = decoded.variantTimings[request.cacheKey] ?? response.timings
        response.timings.load = loading
        response.rangeReadBytes = loaded.ranged?.fetchedBytes
        response.memoryHold = decoded.holds[request.cacheKey]
        return response
    }

    /// Whether bytes fetched for a request that wants no image may be kept: they must sniff as a
    /// format a registered decoder claims (an HTML error page or a gzip body does not).
    func sniffsAsImage(_ data: Data) -> Bool {
        decoders.decoder(for: data) != nil
    }

    /// Reserves in the decode memory budget what decoding `loaded` for `requests` will hold
    /// (``memoryEstimate(for:data:ranged:)``). Returns what is held (settled after the decodes,
    /// ``settleMemory(_:requests:decoded:loaded:)``) or why the decodes may not run.
    private func reserveMemory(
        for requests: [ImageRequest], loaded: Loaded, priority: ImageRequest.Priority
    ) async -> (MemoryEstimate, refusal: ImagoError?) {
        let url = loaded.response.url
        let estimate: MemoryEstimate
        if let ranged = loaded.ranged {
            // Its header is read by range requests that block their thread: on the CPU stage.
            estimate = await cpuStage.run(priority: priority) { self.memoryEstimate(for: requests, data: loaded.data, ranged: ranged) }
        } else {
            estimate = memoryEstimate(for: requests, data: loaded.data)
        }
        do {
            try await configuration.decodeMemoryBudget.reserve(estimate.bytes, width: estimate.width, height: estimate.height)
            return (estimate, nil)
        } catch {
            var error = error
            error.url = url
            return (MemoryEstimate(), error)
        }
    }

    /// What decoding `data` for `requests` will hold: the source's bytes, each distinct decode's
    /// estimate at the scale it will use, and each variant's processing (what a
    /// ``ReducedDecodeProcessing`` says its steps make, else the decode's size again); the size
    /// of the image that makes it.
    private func memoryEstimate(for requests: [ImageRequest], data: Data, ranged: RangedSource? = nil) -> MemoryEstimate {
        var total = MemoryEstimate(bytes: data.count)
        func add(_ amount: Int) { total.bytes = total.bytes.addingReportingOverflow(amount).overflow ? Int.max : total.bytes + amount }
        if ranged != nil { add(RangedSource.maxKeptBytes) }
        for plan in Set(requests.map(\.decodePlan)) {
            var options = decodingOptions(for: plan)
            options.rangedSource = ranged
            let estimate = decoders.estimate(data, options: options)
            add(estimate.bytes)
            total.decodes[plan] = estimate.bytes
            if estimate.bytes > 0 { (total.width, total.height) = (estimate.width, estimate.height) }
            for request in requests where request.decodePlan == plan && !request.processors.isEmpty && total.shares[request.cacheKey] == nil {
                let share = Self.processingBytes(request.processors, after: estimate)
                total.shares[request.cacheKey] = share
                add(share)
            }
        }
        return total
    }

    /// What `processors` hold beside a decode `estimate`d: a lone ``ReducedDecodeProcessing``'s
    /// own figure when it gives one, else the decode's size again (each processor's output, one at
    /// a time).
    private static func processingBytes(_ processors: [any ImageProcessing], after estimate: DecodeEstimate) -> Int {
        let original = PixelSize(width: estimate.width, height: estimate.height)
        if processors.count == 1, let processor = processors[0] as? any ReducedDecodeProcessing, original.width > 0, original.height > 0,
            let bytes = processor.workingBytes(decoded: estimate.decodedSize ?? original, original: original, format: estimate.format)
        {
            // A full decode's estimate counts every frame of an animation; the processor's, one.
            return max(bytes, estimate.decodedSize == nil ? estimate.bytes : 0)
        }
        return estimate.bytes
    }

    /// The image `request` wants: decoded (at full size, or reduced for its thumbnail and
    /// resampled), then through its processors; each decode and each variant made once per
    /// transfer, and every variant remembered in the memory cache.
    private func variant(for request: ImageRequest, of decoded: inout Decoded, loaded: Loaded) -> Result<Image, ImagoError> {
        let key = request.cacheKey
        if let made = decoded.variants[key] { return made }
        var plan = request.decodePlan
        var processors = request.processorsAfterDecode
        // A folded resize saves a decode only when no full-size one is made anyway.
        if plan.resize != nil || plan.requirement != nil, case .success = decoded.decodes[plan.full] {
            plan = plan.full
            processors = request.processors
        }
        let decodedImage: Result<Image, ImagoError>
        if let maxSize = request.limits.maxResponseSize, Int64(loaded.data.count) > maxSize {
            // Bytes from disk, or shared with a request without the limit, never met this one's.
            decodedImage = .failure(ImagoError(.tooLarge(limit: maxSize), url: loaded.response.url))
        } else if let done = decoded.decodes[plan] {
            decodedImage = done
        } else {
            let start = ContinuousClock.now
            decodedImage = decode(loaded.data, url: loaded.response.url, plan: plan, ranged: loaded.ranged)
            decoded.decodes[plan] = decodedImage
            decoded.decodeTimes[plan] = start..<ContinuousClock.now
        }
        var timings = ImageResponse.Timings(decode: decoded.decodeTimes[plan])
        var made = decodedImage
        if !request.processors.isEmpty, case .success(let image) = made {
            state.withLock { $0.statistics.processed += 1 }
            let start = ContinuousClock.now
            made = process(image, with: processors, url: loaded.response.url)
            timings.process = start..<ContinuousClock.now
        }
        made = made.map { image in
            var image = image
            image.scale = request.thumbnail?.scale ?? request.scaleFromFileName ?? 1
            return image
        }
        decoded.variants[key] = made
        decoded.variantTimings[key] = timings
        remember(made, loaded: loaded, request: request)
        if case .success(let image) = made { storeVariant(image, for: request, loaded: loaded) }
        return made
    }

    /// Decodes `data` as `plan` says: reduced for a thumbnail and resampled to it, or reduced and
    /// resampled under the large-image limit, or at full size. A reduced image is converted to
    /// sRGB after its resize, at the smallest size the work reaches.
    private func decode(_ data: Data, url: URL, plan: ImageRequest.DecodePlan, ranged: RangedSource?) -> Result<Image, ImagoError> {
        var options = decodingOptions(for: plan)
        options.rangedSource = ranged
        // The header first: a size it declares over the limits fails here, before a decoder is
        // asked for pixels (decoders check it again, for formats whose size this cannot read).
        let header = decoders.estimate(data, options: options)
        // The same estimate is what was reserved for this decode: a decoder keeps within it.
        options.reservedBytes = header.bytes
        if header.width > 0, header.height > 0 {
            if case .failure(var error) = Result(catching: { () throws(ImagoError) in try options.check(width: header.width, height: header.height) }) {
                error.url = url
                return .failure(error)
            }
        }
        state.withLock { $0.statistics.decodes += 1 }
        var decoded = Self.attempt(url) { () throws(ImagoError) in try decoders.decode(data, options: options) }
        if case .failure(let error) = decoded, case .reservedBytes(let reserved, let needed)? = error.code.limit,
            configuration.decodeMemoryBudget.tryReserve(needed - reserved)
        {
            // A path the estimate did not count (a damaged progressive JPEG's full decode): once,
            // with the difference reserved now and given back after.
            defer { configuration.decodeMemoryBudget.release(needed - reserved) }
            options.reservedBytes = needed
            decoded = Self.attempt(url) { () throws(ImagoError) in try decoders.decode(data, options: options) }
        }
        let reduced = decoded.flatMap { image -> Result<Image, ImagoError> in
            if let thumbnail = plan.thumbnail {
                return Self.attempt(url) { () throws(ImagoError) in try thumbnail.finish(image) }
            }
            if let resize = plan.resize {
                return Self.attempt(url) { () throws(ImagoError) in try resize.finishingReducedDecode(image) }
            }
            let limit = configuration.largeImagePixelLimit
            guard plan.scalesDown, image.width * image.height > limit else { return .success(image) }
            let scale = (Double(limit) / Double(image.width * image.height)).squareRoot()
            let box = PixelSize(width: max(1, Int(Double(image.width) * scale)), height: max(1, Int(Double(image.height) * scale)))
            return process(image, with: [ImageProcessors.Resize(checkedSize: box)], url: url)
        }
        return options.defersColorConversion ? reduced.map { $0.convertedToSRGB(options: options) } : reduced
    }

    /// The configuration's decoding options as `plan` needs them.
    func decodingOptions(for plan: ImageRequest.DecodePlan) -> DecodingOptions {
        var options = plan.keeping(configuration.decodingOptions)
        if let thumbnail = plan.thumbnail {
            options = thumbnail.decodingOptions(options)
        } else if let resize = plan.resize {
            options = resize.reducedDecodingOptions(options)
        } else if plan.scalesDown {
            options.scaleDownPixelLimit = configuration.largeImagePixelLimit
        } else if let requirement = plan.requirement {
            options.sizeRequirement = requirement
        }
        // A reduced decode is converted to sRGB after its resize (decode(_:url:plan:)), on fewer pixels.
        let reduces = plan.thumbnail != nil || plan.resize != nil || plan.scalesDown
        options.defersColorConversion = reduces && options.colorProfileHandling == .convertToSRGB
        return options
    }

    func process(_ image: Image, with processors: [any ImageProcessing], url: URL) -> Result<Image, ImagoError> {
        Self.attempt(url) { () throws(ImagoError) in
            var image = image
            for processor in processors { image = try processor.process(image) }
            return image
        }
    }

    /// `body`'s result, its error saying which URL it was about.
    private static func attempt<Value>(_ url: URL, _ body: () throws(ImagoError) -> Value) -> Result<Value, ImagoError> {
        Result(catching: body).mapError { error in
            var error = error
            error.url = url
            return error
        }
    }

    /// Writes `image`, made for `request` from `loaded`, to the disk cache as an encoded variant
    /// with the original's freshness, when the request asks and the response may be stored.
    /// Animated variants are not kept.
    func storeVariant(_ image: Image, for request: ImageRequest, loaded: Loaded) {
        guard request.options.contains(.storesVariantOnDisk), request.hasVariant, loaded.isStorable,
            !request.options.contains(.disableDiskCacheWrites), !image.isAnimated,
            var metadata = loaded.metadata, let cache = httpCache(for: request)
        else { return }
        let encoded: Data
        do {
            encoded = image.metadata.hasAlpha ? try PNGEncoder().encode(image) : try JPEGEncoder(quality: 90).encode(image)
        } catch {
            configuration.logger.warning("could not encode the variant of \(request.url.redactedString) for the disk cache: \(error)")
            return
        }
        metadata.contentType = image.metadata.hasAlpha ? "image/png" : "image/jpeg"
        cache.disk.store(encoded, for: request.variantDiskKey, metadata: metadata)
    }

    /// Puts a decoded image in the memory cache, its cost the pixels plus the encoded bytes, unless
    /// the request or the response (`no-store`) forbids it.
    private func remember(_ image: Result<Image, ImagoError>, loaded: Loaded, request: ImageRequest) {
        guard case .success(let decoded) = image, loaded.isStorable else { return }
        remember(
            ImageResponse(
                request: request, image: decoded, data: loaded.data, url: loaded.response.url,
                statusCode: loaded.response.statusCode, headers: loaded.response.headers, source: loaded.source
            ))
    }

    /// Puts `response` in the memory cache under its request's key, unless the request forbids it.
    func remember(_ response: ImageResponse) {
        guard let cache = configuration.memoryCache, !response.request.options.contains(.disableMemoryCacheWrites) else { return }
        cache.setValue(response, forKey: response.request.cacheKey, cost: response.image.cost + response.data.count)
    }

    /// Ends the transfer and completes its handles. A handle that wants an image may have joined
    /// after the decode was decided (decode then), or after its variants were made (make its own).
    private func finish(
        _ transferID: UInt64, request: ImageRequest, result: Result<Loaded, ImagoError>,
        decoded: Decoded, contacted: Bool, loading: Range<ContinuousClock.Instant>
    ) {
        updateState { state in
            let members = state.transfers.finish(transferID)
            if members != nil {
                switch result {
                case .success(let loaded):
                    switch loaded.source {
                    case .network: state.statistics.bytes += Int64(loaded.data.count)
                    case .disk: state.statistics.diskHits += 1
                    case .revalidated: state.statistics.revalidated += 1
                    case .memory: break
                    }
                case .failure: state.statistics.errors += 1
                }
            }
            return members
        } afterwards: { members in
            // A transfer no handle wanted any more was already reported as stopped.
            guard let members else { return }
            complete(members, request: request, result: result, decoded: decoded, contacted: contacted, loading: loading)
        }
    }

    /// Completes a finished transfer's handles, each with its variant.
    private func complete(
        _ members: [Transfers.Member], request: ImageRequest, result: Result<Loaded, ImagoError>,
        decoded: Decoded, contacted: Bool, loading: Range<ContinuousClock.Instant>
    ) {
        if contacted {
            observers.finished(
                request.url, result: result.map { $0.source == .network ? $0.data.count : 0 }, elapsed: loading.upperBound - loading.lowerBound)
        }
        var decoded = decoded
        for member in members {
            switch member.handle {
            case .data(let task):
                task.complete(
                    with: result.flatMap { loaded in
                        // Joined a transfer whose source is read by ranges: its bytes were never all received.
                        guard loaded.ranged == nil else { return .failure(ImagoError(.tooLarge(limit: loaded.ranged?.length ?? 0), url: loaded.response.url)) }
                        return .success(
                            DataResponse(
                                request: task.request, data: loaded.data, url: loaded.response.url, statusCode: loaded.response.statusCode,
                                headers: loaded.response.headers, source: loaded.source, joinedTransfer: member.joined, loadTime: loading))
                    })
            case .image(let task):
                if case .success(let loaded) = result, decoded.variants[task.request.cacheKey] == nil {
                    decodeLate(task, joined: member.joined, loaded: loaded, loading: loading)
                    continue
                }
                task.complete(
                    with: result.flatMap { loaded in
                        variant(for: task.request, of: &decoded, loaded: loaded).map {
                            response(task.request, image: $0, decoded: decoded, loaded: loaded, loading: loading, joined: member.joined)
                        }
                    })
            }
        }
    }
}

extension ImagePipeline {
    /// Runs `work` on the pipeline's CPU stage, beside its decodes and processing and under the same
    /// bound (``Configuration/cpuStageWidth`` at once), and returns its result: for CPU work an app
    /// does with the pipeline's images, such as encoding them, so that it competes for the same
    /// cores instead of adding threads of its own. With `bytes`, the work first holds that much of
    /// the pipeline's ``Configuration/decodeMemoryBudget`` (waiting while decodes and other work
    /// hold too much, ahead of the decodes that wait: it finishes what they began) until it
    /// ends; more than the whole budget throws
    /// `imageTooLarge` (naming `image`'s size) at once, before anything is allocated. An encode
    /// reserves its encoder's ``ImageEncoding/workingBytes(for:)``. A `hold` (a response's
    /// ``ImageResponse/memoryHold``) counts toward `bytes`, and is released when the work ends.
    public func runOnCPUStage<Value: Sendable>(
        priority: ImageRequest.Priority = .normal, reserving bytes: Int = 0, holding hold: MemoryHold? = nil, for image: Image? = nil,
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        let budget = configuration.decodeMemoryBudget
        let more = max(0, bytes - (hold?.bytes ?? 0))
        try await budget.reserve(more, width: image?.width ?? 0, height: image?.height ?? 0, ahead: true)
        defer {
            budget.release(more)
            hold?.release()
        }
        return try await cpuStage.run(priority: priority) { Result { try work() } }.get()
    }
}
