import Foundation

/// Loads images ahead of need at low priority, so that showing them later is a cache hit.
///
/// Each request started here gets its own handle on the pipeline: a visible load of the same
/// image joins the prefetch's transfer (and raises its priority to its own), and stopping a
/// prefetch cancels only the prefetcher's handle, so a transfer someone else wants goes on.
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images end up.
    public enum Destination: Sendable {
        /// Decoded into the memory cache (and the disk cache, as any load).
        case memoryCache
        /// Bytes only, into the disk cache: no decode, nothing held in memory.
        case diskCache
    }

    /// The pipeline loads go through.
    public let pipeline: ImagePipeline
    /// Where prefetched images end up.
    public let destination: Destination
    /// The priority prefetches run at until a visible load raises it.
    public let priority: ImageRequest.Priority
    private let tasks = Locked<[ImageRequest.CacheKey: TransferHandle]>([:])

    /// Makes a prefetcher over `pipeline`.
    public init(pipeline: ImagePipeline = .shared, destination: Destination = .memoryCache, priority: ImageRequest.Priority = .low) {
        self.pipeline = pipeline
        self.destination = destination
        self.priority = priority
    }

    /// Starts loading each request not already being prefetched, at the prefetch priority.
    public func startPrefetching(with requests: [ImageRequest]) {
        for var request in requests {
            request.priority = priority
            let key = request.cacheKey
            if destination == .memoryCache, pipeline.cachedResponse(for: request) != nil { continue }
            guard tasks.withLock({ $0[key] == nil }) else { continue }
            let task: TransferHandle
            switch destination {
            case .memoryCache: task = .image(pipeline.imageTask(with: request) { [weak self] _ in self?.forget(key) })
            case .diskCache: task = .data(pipeline.dataTask(with: request) { [weak self] _ in self?.forget(key) })
            }
            // Checked under the lock its completion's `forget` takes, so a load that already
            // finished is never kept.
            tasks.withLock { tasks in
                if !task.isFinished { tasks[key] = task }
            }
        }
    }

    /// Starts loading each URL.
    public func startPrefetching(with urls: [URL]) {
        startPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    /// Cancels the prefetcher's loads of these requests; a transfer another caller wants goes on.
    public func stopPrefetching(with requests: [ImageRequest]) {
        let stopped = tasks.withLock { tasks in requests.compactMap { tasks.removeValue(forKey: $0.cacheKey) } }
        for task in stopped { task.cancel() }
    }

    /// Cancels the prefetcher's loads of these URLs.
    public func stopPrefetching(with urls: [URL]) {
        stopPrefetching(with: urls.map { ImageRequest(url: $0) })
    }

    /// Cancels every prefetch.
    public func stopPrefetching() {
        let stopped = tasks.withLock { tasks in
            defer { tasks = [:] }
            return Array(tasks.values)
        }
        for task in stopped { task.cancel() }
    }

    /// How many prefetches are in flight.
    public var count: Int { tasks.withLock { $0.count } }

    private func forget(_ key: ImageRequest.CacheKey) {
        tasks.withLock { _ = $0.removeValue(forKey: key) }
    }

    deinit {
        stopPrefetching()
    }
}
