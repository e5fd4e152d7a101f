import DequeModule

/// Bytes of pixels that all decodes sharing this budget may hold at once. A decode reserves what
/// its header says it will hold before it starts, and waits, first come first served, while the
/// others hold too much; one that alone needs more than the whole budget is refused at once.
/// Pipelines share ``shared`` unless their configuration names another.
public final class DecodeMemoryBudget: Sendable {
    private struct Waiter {
        var id: UInt64
        var bytes: Int
        var continuation: CheckedContinuation<Void, any Error>
        /// Queued ahead of the decodes waiting (an encode finishing what a decode began).
        var ahead = false
    }

    private struct State {
        var held = 0
        var nextID: UInt64 = 0
        var waiters = Deque<Waiter>()

        /// The waiters at the head of the queue that now fit, their bytes counted as held.
        mutating func admit(limit: Int) -> [CheckedContinuation<Void, any Error>] {
            var admitted: [CheckedContinuation<Void, any Error>] = []
            while let first = waiters.first, held + first.bytes <= limit {
                held += first.bytes
                admitted.append(waiters.removeFirst().continuation)
            }
            return admitted
        }
    }

    /// The budget in bytes.
    public let bytes: Int
    private let state = Locked(State())

    /// The budget every pipeline uses by default: 1 GiB, two decodes at the per-image maximum.
    public static let shared = DecodeMemoryBudget(bytes: 1 << 30)

    /// Makes a budget of `bytes`.
    public init(bytes: Int) {
        self.bytes = max(0, bytes)
    }

    /// Bytes held by decodes now.
    public var held: Int { state.withLock { $0.held } }

    /// Decodes waiting for room now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits until `amount` bytes fit, then holds them until ``release(_:)``. Throws `cancelled`
    /// when the task is cancelled while waiting, and `imageTooLarge` naming this budget when
    /// `amount` is more than the whole budget (`width × height` name the image in that error).
    /// `ahead` queues it before the waiting decodes (after others queued ahead): work that
    /// finishes what a decode began, so the images made do not pile up behind new decodes.
    func reserve(_ amount: Int, width: Int, height: Int, ahead: Bool = false) async throws(ImagoError) {
        guard amount <= bytes else {
            throw ImagoError(.imageTooLarge(width: width, height: height, limit: .decodeMemoryBudget(bytes)), url: nil, stage: .decoding)
        }
        guard amount > 0 else { return }
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let admitted = state.withLock { state -> Bool in
                        if Task.isCancelled { return false }
                        let waiter = Waiter(id: id, bytes: amount, continuation: continuation, ahead: ahead)
                        if ahead, let first = state.waiters.firstIndex(where: { !$0.ahead }) {
                            state.waiters.insert(waiter, at: first)
                        } else {
                            state.waiters.append(waiter)
                        }
                        return true
                    }
                    if !admitted {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    let ready = state.withLock { $0.admit(limit: bytes) }
                    for continuation in ready { continuation.resume() }
                }
            } onCancel: {
                // A waiter that leaves may have held up smaller ones behind it.
                let (removed, ready) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<Void, any Error>]) in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
                    let removed = state.waiters.remove(at: index).continuation
                    return (removed, state.admit(limit: bytes))
                }
                removed?.resume(throwing: CancellationError())
                for continuation in ready { continuation.resume() }
            }
        } catch {
            throw ImagoError(.cancelled, url: nil, stage: .decoding)
        }
    }

    /// Holds `amount` bytes now when they fit and no decode waits ahead (first come, first
    /// served); false leaves the caller to ``reserve(_:width:height:)`` and wait.
    func tryReserve(_ amount: Int) -> Bool {
        guard amount > 0 else { return true }
        return state.withLock { state in
            guard state.waiters.isEmpty, amount <= bytes - state.held else { return false }
            state.held += amount
            return true
        }
    }

    /// Gives back `amount` bytes reserved earlier, letting waiters that now fit go.
    func release(_ amount: Int) {
        guard amount > 0 else { return }
        let ready = state.withLock { state in
            state.held -= amount
            return state.admit(limit: bytes)
        }
        for continuation in ready { continuation.resume() }
    }
}
