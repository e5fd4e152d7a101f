import Foundation

/// The cache stage: disk reads, on the pipeline's own bounded executor, before a request joins
/// the download queue and never holding a download slot. A handle's processed variant is looked
/// for first (``ImageRequest/Options/storesVariantOnDisk``); then the transfer's original, which
/// is served when fresh, or handed to the download to revalidate.
extension ImagePipeline {
    /// The HTTP cache for `request`'s original: only `http(s)` responses are kept, and those of
    /// loaders that follow HTTP's caching (``DataLoading/supportsHTTPCaching``: object stores).
    func httpCache(for request: ImageRequest) -> HTTPCache? {
        guard let disk = configuration.diskCache, let scheme = request.url.scheme?.lowercased(),
            scheme == "http" || scheme == "https" || (scheme != "file" && scheme != "data" && loaders.loader(for: request.url)?.supportsHTTPCaching == true)
        else { return nil }
        return HTTPCache(disk: disk, heuristicLifetime: configuration.heuristicFreshness)
    }

    /// The HTTP cache to look for `request`'s variant in, or nil when it should not be looked for.
    func variantCache(for request: ImageRequest) -> HTTPCache? {
        guard request.options.contains(.storesVariantOnDisk), request.hasVariant,
            request.cachePolicy != .reloadIgnoringCache, !request.options.contains(.disableDiskCacheReads)
        else { return nil }
        return httpCache(for: request)
    }

    /// Looks for `task`'s variant on disk: a servable entry is decoded on the CPU stage and
    /// completes the task; otherwise (or when it fails to decode) the task joins a transfer.
    func lookUpVariant(of task: ImageTask, in cache: HTTPCache) {
        state.withLock { $0.transfers.beginLookup() }
        let request = task.request
        cacheStage.submit(priority: request.priority) { [self] in
            let key = request.variantDiskKey
            let readStart = ContinuousClock.now
            guard case .fresh(let entry) = cache.lookup(key, policy: request.cachePolicy, now: Date()), !task.isFinished else {
                endVariantLookup(of: task, served: false)
                return
            }
            let read = readStart..<ContinuousClock.now
            cpuStage.submit(priority: request.priority) { [self] in
                let decodeStart = ContinuousClock.now
                // A variant that keeps its colour profile or metadata was written with them.
                guard let image = try? decoders.decode(entry.data, options: request.decodePlan.keeping(configuration.decodingOptions)) else {
                    // Never serve an entry known to fail: the variant is made again from the original.
                    cache.disk.remove(key)
                    endVariantLookup(of: task, served: false)
                    return
                }
                let headers = HTTPCache.headers(of: entry)
                var response = ImageResponse(
                    request: request, image: image, data: entry.data, url: request.url, statusCode: 200, headers: headers, source: .disk)
                remember(response)
                response.timings = ImageResponse.Timings(load: read, decode: decodeStart..<ContinuousClock.now)
                state.withLock { $0.statistics.diskHits += 1 }
                task.complete(with: .success(response))
                endVariantLookup(of: task, served: true)
            }
        }
    }

    private func endVariantLookup(of task: ImageTask, served: Bool) {
        if !served && !task.isFinished { attach(TransferHandle(task)) }
        updateState { $0.transfers.endLookup() }
    }

    /// Looks for transfer `transferID`'s original on disk: a servable entry goes to the CPU stage
    /// with no download; a stale one goes to the download queue to be revalidated, and so do the
    /// kept first bytes of one that broke off, to be resumed.
    func lookUpOriginal(_ transferID: UInt64, request: ImageRequest) {
        cacheStage.submit(priority: request.priority) { [self] in
            let start = ContinuousClock.now
            let cache = httpCache(for: request)
            let lookup = cache?.lookup(request.diskCacheKey, policy: request.cachePolicy, now: Date()) ?? .miss
            switch (lookup, cache) {
            case (.fresh(let entry), let cache?):
                let headers = HTTPCache.headers(of: entry)
                let loaded = Loaded(
                    response: ResponseHead(url: request.url, statusCode: 200, headers: headers, expectedContentLength: Int64(entry.data.count)),
                    data: entry.data, source: .disk, isStorable: true, metadata: entry.metadata,
                    pendingWrite: cache.served(request.diskCacheKey)
                )
                let next = updateState { $0.transfers.cacheHit(transferID) }
                reportProgress(of: transferID, received: Int64(entry.data.count), expected: Int64(entry.data.count))
                deliverFromCacheStage(transferID, request: request, result: .success(loaded), next: next, loading: start..<ContinuousClock.now)
            case _ where request.cachePolicy == .returnCacheDataDontLoad:
                let next = updateState { $0.transfers.cacheHit(transferID, succeeded: false) }
                let error = ImagoError(.notCached, url: request.url, stage: .caching)
                deliverFromCacheStage(transferID, request: request, result: .failure(error), next: next, loading: start..<ContinuousClock.now)
            case (.stale(let entry), _):
                transition { [.startDownloads($0.transfers.cacheMissed(transferID, stale: .stale(entry)))] }
            default:
                // A transfer that broke off may have left its first bytes beside the entries.
                let partial =
                    resumables.limit > 0 && request.cachePolicy != .reloadIgnoringCache
                    ? cache.flatMap { ResumableDataStore.read(request.diskCacheKey, from: $0.disk) } : nil
                transition { [.startDownloads($0.transfers.cacheMissed(transferID, stale: partial.map { .partial($0) }))] }
            }
        }
    }

    /// Whether a request may be answered from the memory cache.
    static func readsMemory(_ request: ImageRequest) -> Bool {
        !request.options.contains(.disableMemoryCacheReads)
            && request.cachePolicy != .refreshCached && request.cachePolicy != .reloadIgnoringCache
    }
}
