import Foundation

/// Loads images: queues, coalesces and runs transfers through the loader registry, then decodes
/// through the decoder registry.
///
/// ```swift
/// let pipeline = ImagePipeline()
/// let image = try await pipeline.image(for: URL(string: "https://example.com/a.jpg")!)
/// let data = try await pipeline.data(for: url)          // the bytes, not decoded
///
/// let task = pipeline.loadImage(with: url, progress: { received, expected, url in … }) { result in … }
/// task.priority = .high
/// task.cancel()
/// ```
///
/// Requests with the same ``ImageRequest/transferKey`` share one transfer while it is queued or
/// running; each caller keeps its own ``ImageTask``. At most `maxConcurrentDownloads` transfers run;
/// the rest wait by priority, FIFO or LIFO. A transfer is decoded once for all its handles that
/// want an image, after its download slot is given back and its decodes have room in the
/// ``Configuration/decodeMemoryBudget``; decoding runs on the pipeline's CPU stage.
public final class ImagePipeline: Sendable {
    typealias Transfers = TransferStateMachine<TransferHandle, RunningDownload, CacheHandOff>

    /// A download under way: cancelling both stops the loader wherever it is waiting.
    struct RunningDownload: Sendable {
        let task: Task<Void, Never>
        let sink: DataSink

        func cancel() {
            sink.cancel()
            task.cancel()
        }

        /// Stops it as ``cancel()`` does, but the loader's error says `timedOut`.
        func expire() {
            sink.expire()
            task.cancel()
        }
    }

    struct State {
        var transfers: Transfers
        var statistics = Statistics()
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var nextHandleID: UInt64 = 0
        /// Set by ``invalidate()``: every new handle fails at once.
        var isInvalidated = false

        /// The waiters to resume if the pipeline just became idle.
        mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
            guard transfers.isIdle else { return [] }
            defer { idleWaiters = [] }
            return idleWaiters
        }

        mutating func makeHandleID() -> UInt64 {
            nextHandleID += 1
            return nextHandleID
        }
    }

    /// How this pipeline loads.
    public let configuration: Configuration
    /// The loaders this pipeline chooses from; register your own schemes here.
    public let loaders: LoaderRegistry
    /// The decoders this pipeline chooses from by sniffing the bytes; register your own formats here.
    public let decoders: DecoderRegistry
    let state: Locked<State>
    let observers: PipelineObservers
    /// Where this pipeline reads its disk cache, before and apart from the download queue.
    let cacheStage: WorkStage
    /// Where this pipeline decodes and processes.
    let cpuStage: WorkStage
    /// The running transfers' deadlines (`request.deadline ?? configuration.deadline`).
    let deadlines = DeadlineTimer()
    /// Bytes of transfers that broke off, for the next transfer of the same image to resume.
    let resumables: ResumableDataStore
    /// Bytes of broken-off transfers kept in memory now, for the next transfer of the same image
    /// to resume (at most ``Configuration/resumableDataLimit``).
    public var resumableBytes: Int { resumables.bytes }

    /// Where requests wait their turn under ``Configuration/rateLimit``.
    let rateLimiter: RateLimiter?

    /// A pipeline with the default configuration and loaders, for apps that want one, with a disk
    /// cache in ``DiskCache/defaultDirectory`` with the `DiskCache` trait (none if that directory
    /// cannot be opened, or without the trait).
    public static let shared: ImagePipeline = {
        var configuration = Configuration()
        #if DiskCache
            configuration.diskCache = try? DiskCache()
        #endif
        return ImagePipeline(configuration: configuration)
    }()

    /// Makes a pipeline.
    public init(configuration: Configuration = Configuration(), loaders: LoaderRegistry = .standard(), decoders: DecoderRegistry = .standard()) {
        self.configuration = configuration
        self.loaders = loaders
        self.decoders = decoders
        self.state = Locked(State(transfers: Transfers(maxRunning: configuration.maxConcurrentDownloads, order: configuration.executionOrder)))
        self.cacheStage = WorkStage(width: configuration.cacheStageWidth)
        self.cpuStage = WorkStage(width: configuration.cpuStageWidth)
        self.resumables = ResumableDataStore(limit: configuration.resumableDataLimit)
        self.rateLimiter = configuration.rateLimit.map(RateLimiter.init)
        if let cache = configuration.memoryCache { configuration.memoryPressureMonitor?.register(cache) }
        self.observers = PipelineObservers(logger: configuration.logger, factory: configuration.metricsFactory)
    }

    deinit {
        observers.finishStreams()
    }

    // MARK: - Loading

    /// Starts loading and decoding `request` and returns its handle, already started. `completion`
    /// is called once with the response and its image; `progress` as bytes arrive; `preview` with
    /// each preview (a response whose `isPreview` is true) when the request has `.previews`.
    /// Callbacks in SDWebImage's manner, delivered as ``Configuration/callbackDelivery`` says;
    /// `completion` comes first so that a trailing closure is the completion.
    @discardableResult
    public func imageTask(
        with request: ImageRequest,
        completion: ImageTask.Completion? = nil,
        progress: ImageTask.ProgressHandler? = nil,
        preview: ImageTask.PreviewHandler? = nil
    ) -> ImageTask {
        let request = selectingSource(request)
        if Self.readsMemory(request), let cached = configuration.memoryCache?.value(forKey: request.cacheKey) {
            return memoryHit(cached, request: request, progress: progress, preview: preview, completion: completion)
        }
        let id = state.withLock { $0.makeHandleID() }
        let task = ImageTask(id: id, request: request, pipeline: self, onProgress: progress, onPreview: preview, onCompletion: completion)
        if refusesInvalidated(TransferHandle(task)) { return task }
        if let cache = variantCache(for: request) {
            lookUpVariant(of: task, in: cache)
        } else {
            attach(TransferHandle(task))
        }
        return task
    }

    /// Starts loading `request`'s bytes, without decoding them, and returns its handle, already
    /// started. `completion` is called once; `progress` as bytes arrive.
    @discardableResult
    public func dataTask(
        with request: ImageRequest,
        completion: DataTask.Completion? = nil,
        progress: DataTask.ProgressHandler? = nil
    ) -> DataTask {
        let request = selectingSource(request)
        let id = state.withLock { $0.makeHandleID() }
        let task = DataTask(id: id, request: request, pipeline: self, onProgress: progress, onPreview: nil, onCompletion: completion)
        if !refusesInvalidated(TransferHandle(task)) { attach(TransferHandle(task)) }
        return task
    }

    /// Fails `handle` at once when the pipeline was invalidated.
    private func refusesInvalidated(_ handle: TransferHandle) -> Bool {
        guard state.withLock({ $0.isInvalidated }) else { return false }
        handle.fail(ImagoError(.cancelled, url: handle.request.url))
        return true
    }

    /// Adds `task` to the transfer its request needs, starting one when none is under way.
    func attach(_ task: TransferHandle) {
        let request = task.request
        let looksUp =
            httpCache(for: request) != nil && !request.options.contains(.disableDiskCacheReads)
            && request.cachePolicy != .reloadIgnoringCache
        transition { state -> [TransferAction] in
            switch state.transfers.join(task.id, handle: task, request: request, decodes: task.decodes, looksUp: looksUp) {
            case .coalesced:
                state.statistics.coalesced += 1
                return [.reportCoalesced(request.url)]
            case .lookUp(let transferID, let request): return [.lookUpOriginal(transferID: transferID, request: request)]
            case .start(let starts): return [.startDownloads(starts)]
            }
        }
        // Cancelled while its variant was being looked for: let its transfer go.
        if task.isFinished { cancelHandle(task.id) }
    }

    /// The response the memory cache holds for `request`, answered synchronously; nil on a miss.
    /// The disk cache is not consulted: use `returnCacheDataDontLoad` for that.
    public func cachedResponse(for request: ImageRequest) -> ImageResponse? {
        configuration.memoryCache?.value(forKey: request.cacheKey).map { cached in
            var response = cached
            response.request = request
            response.source = .memory
            return response
        }
    }

    /// A handle completed before it is returned: its callbacks run on the caller's thread, with no
    /// transfer, task or decode.
    private func memoryHit(
        _ cached: ImageResponse, request: ImageRequest,
        progress: ImageTask.ProgressHandler?, preview: ImageTask.PreviewHandler?, completion: ImageTask.Completion?
    ) -> ImageTask {
        let id = state.withLock { state in
            state.statistics.memoryHits += 1
            return state.makeHandleID()
        }
        let task = ImageTask(id: id, request: request, pipeline: self, onProgress: progress, onPreview: preview, onCompletion: completion)
        var response = cached
        response.request = request
        response.source = .memory
        task.complete(with: .success(response))
        return task
    }

    /// Loads and decodes `request` and returns the response with its image. Cancelling the calling
    /// task cancels the load.
    public func response(for request: ImageRequest) async throws(ImagoError) -> ImageResponse {
        try await imageTask(with: request).response
    }

    /// Loads and decodes `request`.
    public func image(for request: ImageRequest) async throws(ImagoError) -> Image {
        try await response(for: request).image
    }

    /// Loads and decodes `url`.
    public func image(for url: URL) async throws(ImagoError) -> Image {
        try await image(for: ImageRequest(url: url))
    }

    /// Loads `request`'s bytes, without decoding, and returns them with where they came from.
    /// Cancelling the calling task cancels the load.
    public func data(for request: ImageRequest) async throws(ImagoError) -> DataResponse {
        try await dataTask(with: request).response
    }

    /// A stream of this pipeline's transfer events, from now until the stream is dropped.
    public func events() -> AsyncStream<Event> {
        observers.events()
    }

    /// Counts since the pipeline was made.
    public var statistics: Statistics {
        state.withLock { $0.statistics }
    }

    /// Transfers queued or running that some handle still wants, and transfers whose tasks have not
    /// yet ended. Both are 0 when the pipeline is idle.
    public var activity: (transfers: Int, running: Int) {
        state.withLock { ($0.transfers.transfers.count, $0.transfers.running) }
    }

    /// Suspends until no transfer is queued or running, including transfers that were cancelled
    /// and are still winding down.
    public func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let isIdle = state.withLock { state in
                if !state.transfers.isIdle { state.idleWaiters.append(continuation) }
                return state.transfers.isIdle
            }
            if isIdle { continuation.resume() }
        }
    }

    // MARK: - Handles

    /// Takes handle `id` out of its transfer (stopping the transfer when it was the last) and
    /// completes it as cancelled; a handle in no transfer (its variant still being looked for, or
    /// already finished) is completed by `otherwise`.
    func cancelHandle(_ id: UInt64, otherwise: () -> Void = {}) {
        let inTransfer = transition { state -> (Bool, [TransferAction]) in
            guard let cancellation = state.transfers.cancel(id) else { return (false, []) }
            if cancellation.stoppedRequest != nil { state.statistics.stopped += 1 }
            return (true, [.cancelled(cancellation)])
        }
        if !inTransfer { otherwise() }
    }

    /// Changes the state under the lock, then runs `afterwards` with the result (completing the
    /// handles the change ended, say); when the change left the pipeline idle, those waiting for it
    /// are resumed after both, so a caller of `waitUntilIdle` sees those completions already run.
    @discardableResult
    func updateState<Value>(_ body: (inout State) -> Value, afterwards: (Value) -> Void = { _ in }) -> Value {
        let (value, idleWaiters) = state.withLock { state in (body(&state), state.takeIdleWaiters()) }
        afterwards(value)
        for waiter in idleWaiters { waiter.resume() }
        return value
    }

    func setPriority(_ priority: ImageRequest.Priority, of handleID: UInt64) {
        state.withLock { $0.transfers.setPriority(priority, of: handleID) }
    }
}
