import Foundation

/// Whole-pipeline control, as SDWebImage's downloader offers: suspend and resume starting
/// downloads, cancel everything, invalidate.
extension ImagePipeline {
    /// Stops starting queued downloads; running ones go on, and cache hits are still served.
    public func suspend() {
        state.withLock { $0.transfers.suspend() }
    }

    /// Starts queued downloads again after ``suspend()``.
    public func resume() {
        transition { [.startDownloads($0.transfers.resume())] }
    }

    /// Whether ``suspend()`` holds queued downloads back.
    public var isSuspended: Bool {
        state.withLock { $0.transfers.isSuspended }
    }

    /// Cancels every handle in a transfer: each completes with `cancelled`, and every download stops.
    public func cancelAll() {
        transition { state in
            let cancellations = state.transfers.cancelAll()
            state.statistics.stopped += cancellations.filter { $0.stoppedRequest != nil }.count
            return cancellations.map(TransferAction.cancelled)
        }
    }

    /// Cancels everything and refuses new work: every handle made from now on completes at once
    /// with `cancelled`. Connections are released as the stopped downloads return.
    public func invalidate() {
        state.withLock { $0.isInvalidated = true }
        cancelAll()
    }

    /// Empties what the pipeline keeps in memory between requests: its memory cache and the kept
    /// bytes of downloads that broke off (the disk cache stays as it is). A service calls it when
    /// it stops, so that a heap profiler's list of what was never freed names only real leaks.
    public func removeAllFromMemory() {
        configuration.memoryCache?.removeAll()
        resumables.removeAllFromMemory()
    }
}
