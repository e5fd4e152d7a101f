import Foundation

/// The download stage: transfers that left the queue, each on a task of its own holding one of
/// `maxConcurrentDownloads` slots, fetching through the loader with a conditional request when the
/// cache stage handed over a stale entry.
extension ImagePipeline {
    /// A transfer's bytes and where they came from.
    struct Loaded: Sendable {
        var response: ResponseHead
        var data: Data
        var source: ImageResponse.Source
        /// False for `Cache-Control: no-store`: no cache may keep it.
        var isStorable: Bool
        /// What a disk entry of these bytes (or of a variant made from them) says of freshness.
        var metadata: CacheMetadata?
        /// The disk write that waits for these bytes to validate.
        var pendingWrite: HTTPCache.PendingWrite?
        /// Set when the source is read by ranges: `data` is only its first bytes.
        var ranged: RangedSource?
    }

    /// Makes the tasks of downloads the state machine started, then tells it, cancelling any whose
    /// handles all left in between.
    func startDownloads(_ starts: [Transfers.Start]) {
        for start in starts {
            let transferID = start.transferID
            let sink = DataSink(
                url: start.request.url,
                maxSize: min(configuration.maxResponseSize, start.request.limits.maxResponseSize ?? .max),
                minimumRate: configuration.minimumTransferRate,
                rangeReadRule: start.decodesOnly ? rangeReadRule : nil,
                onResponse: { [observers] response in observers.receivedResponse(response) },
                onProgress: { [weak self] received, expected in
                    self?.reportProgress(of: transferID, received: received, expected: expected)
                }
            )
            let task = Task(priority: Self.taskPriority(start.priority)) {
                await self.run(start, sink: sink)
            }
            let download = RunningDownload(task: task, sink: sink)
            var missedPreview = false
            let recorded = transition { state in
                let outcome = state.transfers.started(transferID, job: download)
                missedPreview = outcome.preview
                return outcome.cancel.map { (false, [TransferAction.cancelJob($0)]) } ?? (true, [])
            }
            if missedPreview { startPreview(of: transferID) }
            if recorded, let limit = start.request.deadline ?? configuration.deadline {
                // Past the deadline the download stops as a cancel would stop it, saying `timedOut`.
                // The job is recorded by now; once the download is over, `job(of:)` finds none.
                deadlines.set(transferID, at: .now + limit) { [weak self] in
                    self?.state.withLock { $0.transfers.job(of: transferID) }?.expire()
                }
            }
        }
    }

    /// When a transfer stops after its first bytes to be read by ranges (``RangedSource``).
    private var rangeReadRule: DataSink.RangeReadRule? {
        guard let minimum = configuration.rangeReadMinimumSize else { return nil }
        let prefixLength = 256 << 10
        return DataSink.RangeReadRule(minimumLength: max(minimum, Int64(prefixLength) + 1), prefixLength: prefixLength) { [decoders] in
            decoders.readsRanges($0)
        }
    }

    private func run(_ start: Transfers.Start, sink: DataSink) async {
        let begin = ContinuousClock.now
        var contacted = false
        let request = start.request
        let result: Result<Loaded, ImagoError>
        do {
            result = .success(try await download(start.transferID, request, stale: start.stale, sink: sink, contacted: &contacted))
        } catch let error as ImagoError {
            result = .failure(error)
        } catch is CancellationError {
            result = .failure(ImagoError(.cancelled, url: request.url))
        } catch {
            result = .failure(ImagoError(.loaderFailed, url: request.url, underlying: error))
        }
        if case .success(let loaded) = result, loaded.source != .network {
            // A 304's bytes come from disk all at once; say so to progress handlers.
            let count = Int64(loaded.data.count)
            reportProgress(of: start.transferID, received: count, expected: count)
        }
        let succeeded = if case .success = result { true } else { false }
        let next = transition { state in
            let (starts, next) = state.transfers.downloaded(start.transferID, succeeded: succeeded)
            return (next, [.startDownloads(starts)])
        }
        await deliver(start.transferID, request: request, result: result, next: next, contacted: contacted, loading: begin..<ContinuousClock.now)
    }

    /// What the cache stage hands to a download: an entry to revalidate, or the kept first bytes
    /// of a transfer that broke off, to resume.
    enum CacheHandOff: Sendable {
        case stale(CacheEntry)
        case partial(ResumableData)
    }

    /// Loads `request`'s bytes through the loader, revalidating a stale entry when it has
    /// validators, else resuming kept bytes when there are some. `contacted` becomes true once a
    /// loader is asked, so a transfer is reported only when made. When the transfer fails, what
    /// can be resumed of it is kept.
    private func download(
        _ transferID: UInt64, _ request: ImageRequest, stale handOff: CacheHandOff?, sink: DataSink, contacted: inout Bool
    ) async throws -> Loaded {
        if request.cachePolicy == .returnCacheDataDontLoad {
            throw ImagoError(.notCached, url: request.url, stage: .caching)
        }
        guard let loader = loaders.loader(for: request.url) else {
            throw ImagoError(.noLoader, url: request.url)
        }
        let cache = httpCache(for: request)
        let key = request.diskCacheKey
        let writes = !request.options.contains(.disableDiskCacheWrites)
        var stale: CacheEntry?
        var kept = resumables.take(key)
        switch handOff {
        case .stale(let entry): stale = entry
        case .partial(let partial): kept = kept ?? partial
        case nil: break
        }
        let validators = HTTPCache.validationHeaders(for: stale)
        var loadRequest = loadRequest(for: request)
        loadRequest.headers.append(contentsOf: validators)
        contacted = true
        defer { deadlines.clear(transferID) }
        let deadline = (request.deadline ?? configuration.deadline).map { ContinuousClock.now + $0 }
        do {
            var loaded = try await load(
                loadRequest, resuming: validators.isEmpty ? kept : nil, with: loader, into: sink, stale: stale, cache: cache, key: key, writes: writes)
            if sink.endedAtRangePrefix {
                loaded.ranged = RangedSource(
                    response: loaded.response, prefix: loaded.data, request: loadRequest, maxFetchedBytes: sink.maxSize, deadline: deadline
                ) { [weak self] request, sink in
                    guard let self else { throw CancellationError() }
                    let modified = try await self.configuration.requestModifier?(request) ?? request
                    try await self.rateLimiter?.acquire()
                    self.transferStarted(request.url)
                    try await loader.load(modified, into: sink)
                }
                if loaded.ranged == nil { throw ImagoError(.invalidResponse, url: request.url) }
            }
            if kept != nil || sink.joinedBytes > 0, let disk = cache?.disk {
                await cacheStage.run(priority: request.priority) { ResumableDataStore.remove(key, from: disk) }
            }
            return loaded
        } catch {
            if Self.mayResume(after: error) {
                await keepForResumption(sink.resumable, key: key, disk: writes ? cache?.disk : nil, priority: request.priority)
            }
            throw error
        }
    }

    /// One transfer through the loader (its attempts), made into what the cache stage and the
    /// decoder take: the bytes with their freshness, or a stale entry a `304` revalidated.
    private func load(
        _ conditional: DataLoadRequest, resuming kept: ResumableData?, with loader: any DataLoading, into sink: DataSink, stale: CacheEntry?,
        cache: HTTPCache?, key: String, writes: Bool
    ) async throws -> Loaded {
        var receivedAt = Date()
        do {
            do {
                receivedAt = try await attempts(conditional, resuming: kept, with: loader, into: sink)
                try Task.checkCancellation()
            } catch {
                // The deadline stopped it as a cancel would: say so.
                throw sink.hasExpired ? ImagoError(.timedOut, url: conditional.url) : error
            }
            let (response, data) = try sink.finish()
            if sink.endedAtRangePrefix {
                // Read by ranges: no disk write of these first bytes as the source (the download
                // stage sets `ranged`); an image made of them may be kept.
                let metadata = HTTPCache.metadata(of: response, receivedAt: receivedAt, heuristicLifetime: configuration.heuristicFreshness)
                return Loaded(response: response, data: data, source: .network, isStorable: metadata.freshness.isStorable, metadata: metadata)
            }
            if sink.joinedBytes > 0 { state.withLock { $0.statistics.resumed += 1 } }
            guard let cache else {
                let metadata = HTTPCache.metadata(of: response, receivedAt: receivedAt, heuristicLifetime: configuration.heuristicFreshness)
                return Loaded(response: response, data: data, source: .network, isStorable: metadata.freshness.isStorable, metadata: metadata)
            }
            let received = cache.received(response, at: receivedAt, key: key, writes: writes)
            return Loaded(
                response: response, data: data, source: .network, isStorable: received.isStorable,
                metadata: received.metadata, pendingWrite: received.pendingWrite
            )
        } catch let error as ImagoError where error.code == .notModified {
            // A 304 is an answer only to our conditional request; otherwise it stays an error.
            guard let stale, let cache, !HTTPCache.validationHeaders(for: stale).isEmpty else { throw error }
            let head = sink.response ?? ResponseHead(url: conditional.url, statusCode: 304)
            let received = cache.revalidated(head, stale: stale, at: receivedAt, key: key, writes: writes)
            return Loaded(
                response: ResponseHead(url: head.url, statusCode: 304, headers: head.headers, expectedContentLength: Int64(stale.data.count)),
                data: stale.data, source: .revalidated, isStorable: received.isStorable,
                metadata: received.metadata, pendingWrite: received.pendingWrite
            )
        }
    }

    /// Whether a transfer that failed so may be resumed later: it was stopped or broke off, not
    /// refused for what it is (too large, not HTTP, an address refused).
    static func mayResume(after error: any Error) -> Bool {
        guard let error = error as? ImagoError else { return error is CancellationError }
        return [.cancelled, .timedOut, .tooSlow, .connectionReset, .connectionFailed, .truncated, .httpStatus].contains(error.code.kind)
    }

    /// Keeps the bytes of a transfer that failed for the next one of `key` to resume: in memory,
    /// and in the disk cache (written on the cache stage, as the disk is never touched on Swift's
    /// pool) unless the request forbids disk writes. Returns once the write is made, so a process
    /// that flushes its cache after its transfers ends with the bytes stored.
    private func keepForResumption(_ kept: ResumableData?, key: String, disk: (any DiskCaching)?, priority: ImageRequest.Priority) async {
        guard let kept, resumables.limit > 0 else { return }
        resumables.keep(kept, for: key)
        if let disk {
            await cacheStage.run(priority: priority) { ResumableDataStore.write(kept, for: key, to: disk, at: Date()) }
        }
    }

    /// Loads `request` into `sink`, trying again as the retry policy allows after a transient
    /// failure, each attempt through the request modifier and the rate limiter. An attempt resumes the bytes kept so far
    /// (`kept`, then what earlier attempts received) when it can; a server that will not continue
    /// them (`416`, or a `206` that is not their rest) gets one attempt from byte 0 at once.
    /// Returns the time the last attempt was sent, taken before its load: the request time from
    /// which RFC 9111 reckons a response's age.
    private func attempts(_ request: DataLoadRequest, resuming kept: ResumableData?, with loader: any DataLoading, into sink: DataSink) async throws -> Date {
        var retry = 0
        var startedAfresh = false
        if let kept, resumables.limit > 0 { sink.resume(from: kept) }
        while true {
            var attempt = request
            let resuming = sink.resuming
            if let resuming { attempt.headers = resuming.requestHeaders(request.headers) }
            let modified = try await configuration.requestModifier?(attempt) ?? attempt
            try await rateLimiter?.acquire()
            transferStarted(request.url)
            let receivedAt = Date()
            do {
                try await loader.load(modified, into: sink)
                return receivedAt
            } catch  where sink.endedAtRangePrefix {
                // Stopped after the first bytes of a body read by ranges: the rest is not wanted.
                return receivedAt
            } catch let error as ImagoError {
                if resuming != nil, !startedAfresh, error.code == .invalidResponse || error.code.httpStatus == 416, !Task.isCancelled {
                    startedAfresh = true
                    sink.abandonResumption()
                    continue
                }
                retry += 1
                guard !Task.isCancelled, let policy = configuration.retryPolicy,
                    let delay = policy.delay(beforeRetry: retry, after: error, retryAfter: sink.response?.headers["Retry-After"])
                else { throw error }
                state.withLock { $0.statistics.retries += 1 }
                observers.retrying(request.url, after: error, delay: delay)
                try await Task.sleep(for: delay)
                if resumables.limit > 0, let resumable = sink.resumable { sink.resume(from: resumable) } else { sink.reset() }
            }
        }
    }

    /// A loader is about to be asked for `url`.
    func transferStarted(_ url: URL) {
        state.withLock { $0.statistics.transfers += 1 }
        observers.started(url)
    }
}
