import Imago

/// Counts requests making an image; past the limit a request is refused at once (503) rather
/// than queued, so memory stays bounded under any load.
final class WorkLimiter: Sendable {
    private let limit: Int
    private let running = Locked(0)

    init(limit: Int) {
        self.limit = max(limit, 1)
    }

    /// Takes a place, or false when all are taken.
    func tryAcquire() -> Bool {
        running.withLock { running in
            guard running < limit else { return false }
            running += 1
            return true
        }
    }

    func release() {
        running.withLock { $0 -= 1 }
    }

    var inFlight: Int { running.withLock { $0 } }
}
