import Foundation

/// A display target's current load: its key, its handle, and a receipt number that tells the
/// current load's completion from an older one's. Released with its target, it cancels the load.
public final class ImageBinding: Sendable {
    private struct State {
        var receipt: UInt64 = 0
        var key: ImageRequest.CacheKey?
        var task: ImageTask?
    }

    private let state = Locked(State())

    /// Makes an empty binding.
    public init() {}

    deinit {
        state.withLock { $0.task }?.cancel()
    }

    /// Whether a load of `key` is in flight for this target.
    func isLoading(_ key: ImageRequest.CacheKey) -> Bool {
        state.withLock { $0.key == key && $0.task?.isFinished == false }
    }

    /// Starts a new load of `key`; returns its receipt.
    func begin(_ key: ImageRequest.CacheKey) -> UInt64 {
        state.withLock { state in
            state.receipt += 1
            state.key = key
            state.task = nil
            return state.receipt
        }
    }

    /// Keeps `task` as the handle of the load `receipt`, unless a newer one began meanwhile.
    func attach(_ task: ImageTask, receipt: UInt64) {
        let stale = state.withLock { state -> Bool in
            guard state.receipt == receipt else { return true }
            // A memory hit may already have completed it; then nothing is in flight.
            if !task.isFinished { state.task = task }
            return false
        }
        if stale { task.cancel() }
    }

    /// Whether the load `receipt` is still the target's current one; it is then over.
    func finish(_ receipt: UInt64) -> Bool {
        state.withLock { state in
            guard state.receipt == receipt else { return false }
            state.key = nil
            state.task = nil
            return true
        }
    }

    /// Cancels the current load; its completion will be ignored.
    func cancel() {
        let task = state.withLock { state -> ImageTask? in
            state.receipt += 1
            state.key = nil
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }
}
