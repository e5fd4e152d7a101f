import Imago

/// At most `count` reads from the store at once, each of at most the largest object: the memory
/// store reads may hold is bounded before any byte arrives. A read waits for a slot in arrival
/// order; a cancelled waiter leaves the line.
final class ReadSlots: Sendable {
    private struct State {
        var free: Int
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    private let state: Locked<State>

    init(_ count: Int) {
        state = Locked(State(free: max(1, count)))
    }

    /// `body`'s value, run holding a slot.
    func withSlot<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await take()
        defer { give() }
        return try await body()
    }

    private func take() async throws {
        let id = state.withLock { state -> UInt64? in
            if state.free > 0 {
                state.free -= 1
                return nil
            }
            state.nextID &+= 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiting.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Hands the slot to the first waiter, or frees it.
    private func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
