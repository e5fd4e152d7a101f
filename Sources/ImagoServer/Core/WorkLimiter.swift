import Imago

/// Counts requests making an image; past the limit a request is refused at once (503) rather
/// than queued, so memory stays bounded under any load.
final class WorkLimiter: Sendable {
    private struct State {
        var running = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = max(limit, 1)
    }

    /// Takes a place, or false when all are taken.
    func tryAcquire() -> Bool {
        state.withLock { state in
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
    }

    func release() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var inFlight: Int { state.withLock { $0.running } }

    /// Returns once no place is taken (at once when none is): how a drain or a test knows that
    /// cancelled work has really ended, without polling.
    func untilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.running == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
