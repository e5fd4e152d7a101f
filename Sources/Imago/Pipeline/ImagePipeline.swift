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
    private struct State {
        var nextID: UInt64 = 0
        var transfers: [UInt64: Transfer] = [:]
        var transferByKey: [ImageRequest.TransferKey: UInt64] = [:]
        var transferOfHandle: [UInt64: UInt64] = [:]
        var queue: DownloadQueue
        var running = 0
        /// Handles whose variant is being looked for on disk, not yet in a transfer.
        var variantLookups = 0
        var statistics = Statistics()
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        var isIdle: Bool { transfers.isEmpty && running == 0 && variantLookups == 0 }

        /// The waiters to resume if the pipeline just became idle.
        mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
            guard isIdle else { return [] }
            defer { idleWaiters = [] }
            return idleWaiters
        }

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    /// How this pipeline loads.
    public let configuration: Configuration
    /// The loaders this pipeline chooses from; register your own schemes here.
    public let loaders: LoaderRegistry
    /// The decoders this pipeline chooses from by sniffing the bytes; register your own formats here.
    public let decoders: DecoderRegistry
    private let state: Locked<State>
    private let observers: PipelineObservers
    /// Where this pipeline decodes and processes: as many jobs at once as there are cores.
    let cpuStage = CPUStage(width: ProcessInfo.processInfo.activeProcessorCount)

    /// A pipeline with the default configuration and loaders, for apps that want one, with a disk
    /// cache in ``DiskCache/defaultDirectory`` (none if that directory cannot be opened).
    public static let shared: ImagePipeline = {
        var configuration = Configuration()
        configuration.diskCache = try? DiskCache()
        return ImagePipeline(configuration: configuration)
    }()

    /// Makes a pipeline.
    public init(configuration: Configuration = Configuration(), loaders: LoaderRegistry = .standard(), decoders: DecoderRegistry = .standard()) {
        self.configuration = configuration
        self.loaders = loaders
        self.decoders = decoders
        self.state = Locked(State(queue: DownloadQueue(order: configuration.executionOrder)))
        self.observers = PipelineObservers(logger: configuration.logger, factory: configuration.metricsFactory)
    }

    deinit {
        observers.finishStreams()
    }

    // MARK: - Loading

    /// Loads and decodes `url`, calling back as bytes arrive and once at the end with the response
    /// and its image (the seeds' callback API), and with previews when `options` has `.previews`
    /// (the seeds' `finished == false`). Returns the handle, already started. `preview` comes last so
    /// an unlabelled trailing closure is the completion.
    @discardableResult
    public func loadImage(
        with url: URL,
        options: ImageRequest.Options = [],
        progress: ImageTask.ProgressHandler? = nil,
        completion: ImageTask.Completion? = nil,
        preview: ImageTask.PreviewHandler? = nil
    ) -> ImageTask {
        imageTask(with: ImageRequest(url: url, options: options), progress: progress, completion: completion, preview: preview)
    }

    /// Loads and decodes `url` and calls `completion` once: `loadImage(with: url) { result in … }`.
    @discardableResult
    public func loadImage(with url: URL, options: ImageRequest.Options = [], completion: @escaping ImageTask.Completion) -> ImageTask {
        imageTask(with: ImageRequest(url: url, options: options), progress: nil, completion: completion, preview: nil)
    }

    /// Starts loading and decoding `request` and returns its handle.
    @discardableResult
    public func imageTask(
        with request: ImageRequest,
        progress: ImageTask.ProgressHandler? = nil,
        completion: ImageTask.Completion? = nil,
        preview: ImageTask.PreviewHandler? = nil
    ) -> ImageTask {
        makeTask(with: request, decodes: true, progress: progress, preview: preview, completion: completion)
    }

    /// Starts loading `request`'s bytes, without decoding them, and returns its handle.
    @discardableResult
    public func dataTask(
        with request: ImageRequest,
        progress: ImageTask.ProgressHandler? = nil,
        completion: ImageTask.Completion? = nil
    ) -> ImageTask {
        makeTask(with: request, decodes: false, progress: progress, preview: nil, completion: completion)
    }

    private func makeTask(
        with request: ImageRequest,
        decodes: Bool,
        progress: ImageTask.ProgressHandler?,
        preview: ImageTask.PreviewHandler?,
        completion: ImageTask.Completion?
    ) -> ImageTask {
        let request = selectingSource(request)
        if decodes, Self.readsMemory(request), let cached = configuration.memoryCache?.value(forKey: request.cacheKey) {
            return memoryHit(cached, request: request, progress: progress, preview: preview, completion: completion)
        }
        if decodes, let disk = variantDiskCache(for: request) {
            // The variant may be on disk: look (read and decode, on the CPU stage) before joining
            // or starting a transfer.
            let id = state.withLock { state in
                state.variantLookups += 1
                return state.makeID()
            }
            let task = ImageTask(id: id, request: request, decodes: true, pipeline: self, onProgress: progress, onPreview: preview, onCompletion: completion)
            cpuStage.submit(priority: request.priority) { [self] in
                if let response = diskVariant(for: request, in: disk) {
                    state.withLock { $0.statistics.diskHits += 1 }
                    task.complete(with: .success(response))
                } else if !task.isFinished {
                    attach(task)
                }
                let idleWaiters = state.withLock { state in
                    state.variantLookups -= 1
                    return state.takeIdleWaiters()
                }
                for waiter in idleWaiters { waiter.resume() }
            }
            return task
        }
        let task = ImageTask(
            id: state.withLock { $0.makeID() }, request: request, decodes: decodes, pipeline: self,
            onProgress: progress, onPreview: preview, onCompletion: completion
        )
        attach(task)
        return task
    }

    /// Adds `task` to the transfer its request needs, starting one when none is queued or running.
    private func attach(_ task: ImageTask) {
        let request = task.request
        let key = request.transferKey
        var joinedURL: URL?
        state.withLock { state in
            if let transferID = state.transferByKey[key] {
                state.transferOfHandle[task.id] = transferID
                state.transfers[transferID]!.handles[task.id] = (task, request.priority)
                state.statistics.coalesced += 1
                Self.reprioritize(transferID, in: &state)
                joinedURL = request.url
            } else {
                let transferID = state.makeID()
                let token = state.makeID()
                var transfer = Transfer(
                    id: transferID, key: key, request: request, priority: request.priority, phase: .queued(token: token),
                    previewDecoder: PreviewDecoder(options: configuration.decodingOptions)
                )
                transfer.handles[task.id] = (task, request.priority)
                state.transfers[transferID] = transfer
                state.transferByKey[key] = transferID
                state.transferOfHandle[task.id] = transferID
                state.queue.push(.init(transferID: transferID, token: token), priority: request.priority)
                startQueued(in: &state)
            }
        }
        if let joinedURL { observers.coalesced(joinedURL) }
        // Cancelled while its disk variant was being looked for: let its transfer go.
        if task.isFinished { cancel(task) }
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
            return state.makeID()
        }
        let task = ImageTask(id: id, request: request, decodes: true, pipeline: self, onProgress: progress, onPreview: preview, onCompletion: completion)
        var response = cached
        response.request = request
        response.source = .memory
        task.complete(with: .success(response))
        return task
    }

    /// Loads and decodes `request` and returns the response with its image. Cancelling the calling
    /// task cancels the load.
    public func response(for request: ImageRequest) async throws -> ImageResponse {
        try await imageTask(with: request).response
    }

    /// Loads and decodes `request`.
    public func image(for request: ImageRequest) async throws -> Image {
        // An image task always completes with an image or an error.
        try await response(for: request).image!
    }

    /// Loads and decodes `url`.
    public func image(for url: URL) async throws -> Image {
        try await image(for: ImageRequest(url: url))
    }

    /// Loads `request`'s bytes, without decoding, and returns the response.
    public func dataResponse(for request: ImageRequest) async throws -> ImageResponse {
        try await dataTask(with: request).response
    }

    /// Loads `request` and returns its bytes, without decoding.
    public func data(for request: ImageRequest) async throws -> Data {
        try await dataResponse(for: request).data
    }

    /// Loads `url` and returns its bytes.
    public func data(for url: URL) async throws -> Data {
        try await data(for: ImageRequest(url: url))
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
        state.withLock { ($0.transfers.count, $0.running) }
    }

    /// Suspends until no transfer is queued or running, including transfers that were cancelled
    /// and are still winding down.
    public func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let isIdle = state.withLock { state in
                if !state.isIdle { state.idleWaiters.append(continuation) }
                return state.isIdle
            }
            if isIdle { continuation.resume() }
        }
    }

    // MARK: - Handles

    func cancel(_ task: ImageTask) {
        let (stoppedURL, idleWaiters) = state.withLock { state -> (URL?, [CheckedContinuation<Void, Never>]) in
            guard let transferID = state.transferOfHandle.removeValue(forKey: task.id) else { return (nil, []) }
            state.transfers[transferID]!.handles[task.id] = nil
            guard state.transfers[transferID]!.handles.isEmpty else {
                Self.reprioritize(transferID, in: &state)
                return (nil, [])
            }
            let transfer = state.transfers.removeValue(forKey: transferID)!
            state.transferByKey[transfer.key] = nil
            state.statistics.stopped += 1
            // A decoding transfer just finishes unseen; a queued one is skipped when popped.
            if case .running(let runningTask, let sink) = transfer.phase {
                sink.cancel()
                runningTask.cancel()
            }
            return (transfer.request.url, state.takeIdleWaiters())
        }
        task.complete(with: .failure(ImagoError(.cancelled, url: task.request.url)))
        if let stoppedURL { observers.stopped(stoppedURL) }
        for waiter in idleWaiters { waiter.resume() }
    }

    func setPriority(_ priority: ImageRequest.Priority, of task: ImageTask) {
        state.withLock { state in
            guard let transferID = state.transferOfHandle[task.id] else { return }
            state.transfers[transferID]!.handles[task.id]!.priority = priority
            Self.reprioritize(transferID, in: &state)
        }
    }

    /// Sets a transfer's priority to the highest of its handles; a queued one moves lanes at once.
    private static func reprioritize(_ transferID: UInt64, in state: inout State) {
        guard var transfer = state.transfers[transferID] else { return }
        let priority = transfer.handlesPriority
        guard priority != transfer.priority else { return }
        transfer.priority = priority
        if transfer.isQueued {
            let token = state.makeID()
            transfer.phase = .queued(token: token)
            state.queue.push(.init(transferID: transferID, token: token), priority: priority)
        }
        state.transfers[transferID] = transfer
    }

    // MARK: - Transfers

    /// Starts queued transfers while slots are free. Tasks are made under the lock so a cancel can
    /// always find the task it must stop.
    private func startQueued(in state: inout State) {
        while state.running < configuration.maxConcurrentDownloads {
            let entry = state.queue.pop { [transfers = state.transfers] entry in
                guard case .queued(let token) = transfers[entry.transferID]?.phase else { return false }
                return token == entry.token
            }
            guard let entry, let transfer = state.transfers[entry.transferID] else { return }
            let transferID = transfer.id
            let sink = DataSink(
                url: transfer.request.url,
                maxSize: configuration.maxResponseSize,
                minimumRate: configuration.minimumTransferRate,
                onResponse: { [observers] response in observers.receivedResponse(response) },
                onProgress: { [weak self] received, expected in
                    self?.reportProgress(of: transferID, received: received, expected: expected)
                }
            )
            let request = transfer.request
            let task = Task(priority: Self.taskPriority(transfer.priority)) {
                await self.run(transferID, request: request, sink: sink)
            }
            state.transfers[transferID]!.phase = .running(task: task, sink: sink)
            state.running += 1
        }
    }

    private func run(_ transferID: UInt64, request: ImageRequest, sink: DataSink) async {
        let start = ContinuousClock.now
        var contacted = false
        let result: Result<Loaded, ImagoError>
        do {
            result = .success(try await load(request, sink: sink, start: start, contacted: &contacted))
        } catch let error as ImagoError {
            result = .failure(error)
        } catch is CancellationError {
            result = .failure(ImagoError(.cancelled, url: request.url))
        } catch {
            result = .failure(ImagoError(.loaderFailed, url: request.url, underlying: error))
        }
        let elapsed = ContinuousClock.now - start
        if case .success(let loaded) = result, loaded.source != .network {
            // Cached bytes arrive all at once; say so to progress handlers.
            let count = Int64(loaded.data.count)
            reportProgress(of: transferID, received: count, expected: count)
        }
        // Give the download slot back, and keep the transfer joinable while it decodes.
        let decodes = state.withLock { state -> Bool in
            state.running -= 1
            defer { startQueued(in: &state) }
            guard case .success = result, state.transfers[transferID]?.handles.values.contains(where: \.task.decodes) == true else { return false }
            state.transfers[transferID]!.phase = .decoding
            return true
        }
        guard decodes, case .success(let loaded) = result else {
            if case .success(let loaded) = result { settleDisk(loaded, valid: sniffsAsImage(loaded.data)) }
            finish(transferID, request: request, result: result, decoded: Decoded(), contacted: contacted, elapsed: elapsed)
            return
        }
        // Decoding, processing and the handles' completions run on the CPU stage, off the pool the
        // transfers' tasks need. Every variant the handles want now is made and cached before any
        // handle completes, so a caller asking again right away hits it.
        let (requests, priority) = state.withLock { state in
            (state.transfers[transferID]?.handles.values.filter(\.task.decodes).map(\.task.request) ?? [],
             state.transfers[transferID]?.priority ?? request.priority)
        }
        // The decodes wait for room in the memory budget first; an image over the whole budget
        // fails its decodes (data-only handles still get the bytes).
        let (reservation, refusal) = await reserveMemory(for: requests, data: loaded.data, url: loaded.response.url)
        await cpuStage.run(priority: priority) { [contacted] in
            var decoded = Decoded()
            if let refusal { for request in requests { decoded.decodes[request.decodePlan] = .failure(refusal) } }
            for request in requests { _ = self.variant(for: request, of: &decoded, loaded: loaded) }
            // Only bytes that decoded reach the disk cache.
            self.settleDisk(loaded, valid: decoded.decodes.values.contains { if case .success = $0 { true } else { false } })
            self.finish(transferID, request: request, result: result, decoded: decoded, contacted: contacted, elapsed: elapsed)
        }
        configuration.decodeMemoryBudget.release(reservation)
    }

    /// Reserves in the decode memory budget what decoding `data` for `requests` will hold: each
    /// distinct decode's estimate, doubled when processors make copies. Returns the bytes held
    /// (to release after the decodes) or why the decodes may not run.
    private func reserveMemory(for requests: [ImageRequest], data: Data, url: URL) async -> (bytes: Int, refusal: ImagoError?) {
        var bytes = 0, width = 0, height = 0
        for plan in Set(requests.map(\.decodePlan)) {
            let estimate = decoders.estimate(data, options: decodingOptions(for: plan))
            bytes = bytes.addingReportingOverflow(estimate.bytes).overflow ? Int.max : bytes + estimate.bytes
            (width, height) = estimate.bytes > 0 ? (estimate.width, estimate.height) : (width, height)
        }
        if requests.contains(where: { !$0.processors.isEmpty }) { bytes = bytes > Int.max / 2 ? Int.max : bytes * 2 }
        do {
            try await configuration.decodeMemoryBudget.reserve(bytes, width: width, height: height)
            return (bytes, nil)
        } catch {
            var error = error
            error.url = url
            return (0, error)
        }
    }

    /// One transfer's decodes (full size, per thumbnail, scaled down) and the variants made from
    /// them so far.
    struct Decoded {
        var decodes: [ImageRequest.DecodePlan: Result<Image, ImagoError>] = [:]
        var variants: [ImageRequest.CacheKey: Result<Image, ImagoError>] = [:]
    }

    /// The image `request` wants: decoded (at full size, or reduced for its thumbnail and
    /// resampled), then through its processors; each decode and each variant made once per
    /// transfer, and every variant remembered in the memory cache.
    private func variant(for request: ImageRequest, of decoded: inout Decoded, loaded: Loaded) -> Result<Image, ImagoError> {
        let key = request.cacheKey
        if let made = decoded.variants[key] { return made }
        let plan = request.decodePlan, thumbnail = request.thumbnail
        if decoded.decodes[plan] == nil {
            decoded.decodes[plan] = decode(loaded.data, url: loaded.response.url, plan: plan)
        }
        var made = decoded.decodes[plan]!
        if !request.processors.isEmpty, case .success(let image) = made {
            state.withLock { $0.statistics.processed += 1 }
            made = process(image, with: request.processors, url: loaded.response.url)
        }
        made = made.map { image in
            var image = image
            image.scale = thumbnail?.scale ?? request.scaleFromFileName ?? 1
            return image
        }
        decoded.variants[key] = made
        remember(made, loaded: loaded, request: request)
        if case .success(let image) = made { storeVariant(image, for: request, loaded: loaded) }
        return made
    }

    /// Decodes `data` as `plan` says: reduced for a thumbnail and resampled to it, or reduced and
    /// resampled under the large-image limit, or at full size.
    private func decode(_ data: Data, url: URL, plan: ImageRequest.DecodePlan) -> Result<Image, ImagoError> {
        decode(data, url: url, options: decodingOptions(for: plan)).flatMap { image in
            if let thumbnail = plan.thumbnail {
                return Self.attempt(url) { () throws(ImagoError) in try thumbnail.finish(image) }
            }
            let limit = configuration.largeImagePixelLimit
            guard plan.scalesDown, image.width * image.height > limit else { return .success(image) }
            let scale = (Double(limit) / Double(image.width * image.height)).squareRoot()
            let box = PixelSize(width: max(1, Int(Double(image.width) * scale)), height: max(1, Int(Double(image.height) * scale)))
            return process(image, with: [ImageProcessors.Resize(checkedSize: box)], url: url)
        }
    }

    /// The configuration's decoding options as `plan` needs them.
    private func decodingOptions(for plan: ImageRequest.DecodePlan) -> DecodingOptions {
        var options = configuration.decodingOptions
        if let thumbnail = plan.thumbnail {
            options = thumbnail.decodingOptions(options)
        } else if plan.scalesDown {
            options.scaleDownPixelLimit = configuration.largeImagePixelLimit
        }
        return options
    }

    private func process(_ image: Image, with processors: [any ImageProcessing], url: URL) -> Result<Image, ImagoError> {
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

    /// A loader is about to be asked for `url`.
    func transferStarted(_ url: URL) {
        state.withLock { $0.statistics.transfers += 1 }
        observers.started(url)
    }

    /// Puts a decoded image in the memory cache, its cost the pixels plus the encoded bytes, unless
    /// the request or the response (`no-store`) forbids it.
    private func remember(_ image: Result<Image, ImagoError>, loaded: Loaded, request: ImageRequest) {
        guard case .success(let decoded) = image, loaded.isStorable else { return }
        remember(ImageResponse(
            request: request, data: loaded.data, image: decoded, url: loaded.response.url,
            statusCode: loaded.response.statusCode, headers: loaded.response.headers, source: loaded.source
        ))
    }

    /// Puts `response` in the memory cache under its request's key, unless the request forbids it.
    func remember(_ response: ImageResponse) {
        guard let cache = configuration.memoryCache, let image = response.image,
              !response.request.options.contains(.disableMemoryCacheWrites) else { return }
        cache.setValue(response, forKey: response.request.cacheKey, cost: image.cost + response.data.count)
    }

    private func decode(_ data: Data, url: URL, options: DecodingOptions) -> Result<Image, ImagoError> {
        state.withLock { $0.statistics.decodes += 1 }
        return Self.attempt(url) { () throws(ImagoError) in try decoders.decode(data, options: options) }
    }

    private func finish(
        _ transferID: UInt64, request: ImageRequest, result: Result<Loaded, ImagoError>,
        decoded: Decoded, contacted: Bool, elapsed: Duration
    ) {
        let (transfer, idleWaiters) = state.withLock { state -> (Transfer?, [CheckedContinuation<Void, Never>]) in
            let transfer = state.transfers.removeValue(forKey: transferID)
            if let transfer {
                state.transferByKey[transfer.key] = nil
                for handleID in transfer.handles.keys { state.transferOfHandle[handleID] = nil }
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
            return (transfer, state.takeIdleWaiters())
        }
        defer { for waiter in idleWaiters { waiter.resume() } }
        // A transfer no handle wanted any more was already reported as stopped.
        guard let transfer else { return }
        if contacted {
            observers.finished(request.url, result: result.map { $0.source == .network ? $0.data.count : 0 }, elapsed: elapsed)
        }
        // A handle that wants an image may have joined after the decode was decided (decode then),
        // or after its variants were made (make its own then).
        var decoded = decoded
        for (task, _) in transfer.handles.values {
            let outcome = result.flatMap { loaded -> Result<ImageResponse, ImagoError> in
                var imageResult: Result<Image?, ImagoError> = .success(nil)
                if task.decodes {
                    imageResult = variant(for: task.request, of: &decoded, loaded: loaded).map { $0 }
                }
                return imageResult.map { image in
                    ImageResponse(
                        request: task.request, data: loaded.data, image: image, url: loaded.response.url,
                        statusCode: loaded.response.statusCode, headers: loaded.response.headers, source: loaded.source
                    )
                }
            }
            task.complete(with: outcome)
        }
    }

    private func reportProgress(of transferID: UInt64, received: Int64, expected: Int64?) {
        guard let transfer = state.withLock({ $0.transfers[transferID] }) else { return }
        for (task, _) in transfer.handles.values {
            task.reportProgress(received: received, expected: expected, url: transfer.request.url)
        }
        if transfer.wantsPreviews { startPreview(of: transferID) }
    }

    /// Decodes a preview from the bytes so far, off the loader's task, when the interval has passed
    /// and no other preview of the transfer is being made.
    private func startPreview(of transferID: UInt64) {
        let now = ContinuousClock.now
        let job = state.withLock { state -> (PreviewDecoder, Data)? in
            guard let transfer = state.transfers[transferID], !transfer.isMakingPreview,
                  case .running(_, let sink) = transfer.phase,
                  transfer.lastPreview.map({ now - $0 >= configuration.previewInterval }) ?? true else { return nil }
            state.transfers[transferID]!.isMakingPreview = true
            return (transfer.previewDecoder, sink.snapshot)
        }
        guard let (startingDecoder, data) = job else { return }
        cpuStage.submit(priority: .veryLow) { [self] in
            var decoder = startingDecoder
            let image = decoder.preview(of: data)
            let transfer = state.withLock { state -> Transfer? in
                guard state.transfers[transferID] != nil else { return nil }
                state.transfers[transferID]!.isMakingPreview = false
                state.transfers[transferID]!.previewDecoder = decoder
                if image != nil { state.transfers[transferID]!.lastPreview = .now }
                // Only while the bytes are still arriving: a finished transfer delivers the image.
                guard case .running = state.transfers[transferID]!.phase else { return nil }
                return state.transfers[transferID]
            }
            guard let image, let transfer else { return }
            // Each variant's previews are resized and processed like its final image, once per variant.
            var variants: [ImageRequest.CacheKey: Image?] = [:]
            for (task, _) in transfer.handles.values where task.decodes && task.request.options.contains(.previews) {
                let key = task.request.cacheKey
                if variants[key] == nil {
                    let steps = (task.request.thumbnail.map { [$0.resize] } ?? []) + task.request.processors
                    variants[key] = try? process(image, with: steps, url: transfer.request.url).get()
                }
                guard let processed = variants[key] ?? nil else { continue }
                task.reportPreview(ImageResponse(
                    request: task.request, data: data, image: processed, url: transfer.request.url,
                    statusCode: nil, headers: [], source: .network, isPreview: true
                ))
            }
        }
    }
}
