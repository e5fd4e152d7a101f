import DequeModule
import Dispatch
import Foundation

/// A bounded executor for one stage of a pipeline: at most `width` jobs at once, highest priority
/// first, FIFO within a priority, on GCD's global threads rather than Swift's cooperative pool, so
/// that transfers, whose tasks live on that pool, keep moving while the stage works. A pipeline has
/// two: the cache stage (disk reads) and the CPU stage (decoding and processing), each its own, so
/// one pipeline's long decodes never hold up another's, nor a disk read wait behind a decode.
final class WorkStage: Sendable {
    private struct State {
        var lanes = Array(repeating: Deque<@Sendable () -> Void>(), count: ImageRequest.Priority.allCases.count)
        var running = 0
    }

    let width: Int
    private let state = Locked(State())

    init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `work` on the stage and returns its result.
    func run<Value: Sendable>(priority: ImageRequest.Priority, _ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            submit(priority: priority) { continuation.resume(returning: work()) }
        }
    }

    /// Queues `work`; a worker starts when fewer than `width` are running.
    func submit(priority: ImageRequest.Priority, _ work: @escaping @Sendable () -> Void) {
        let startsWorker = state.withLock { state -> Bool in
            state.lanes[priority.rawValue].append(work)
            guard state.running < width else { return false }
            state.running += 1
            return true
        }
        if startsWorker { DispatchQueue.global().async { self.drain() } }
    }

    /// A worker: runs queued jobs, highest priority first, until none is left.
    private func drain() {
        while let job = state.withLock({ state -> (@Sendable () -> Void)? in
            for lane in state.lanes.indices.reversed() {
                if let job = state.lanes[lane].popFirst() { return job }
            }
            state.running -= 1
            return nil
        }) {
            job()
        }
    }
}
