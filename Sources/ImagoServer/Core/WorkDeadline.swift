import Imago

/// Bounds the time a client waits for work: the work's value, or ``ServerError/workTimedOut``
/// once the deadline passes, whichever comes first. On the deadline the work is cancelled (the
/// pipeline stops at its next step); an encode already running finishes on its own thread and is
/// dropped. The work keeps its place in the work limit until it has really ended, so a timed-out
/// request frees no memory it still uses.
enum WorkDeadline {
    static func value<Value: Sendable>(of work: Task<Value, any Error>, within timeout: Duration) async throws -> Value {
        let outcome = Outcome<Value>()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.continuation.withLock { $0 = continuation }
            let timer = Task {
                // A cancelled sleep throws: the work ended first and has answered.
                try await Task.sleep(for: timeout)
                if outcome.resume(with: .failure(ServerError.workTimedOut)) { work.cancel() }
            }
            Task {
                let result = await work.result
                timer.cancel()
                outcome.resume(with: result)
            }
        }
    }

    /// The continuation, resumed by the first of the work and the timer.
    private final class Outcome<Value: Sendable>: Sendable {
        let continuation = Locked<CheckedContinuation<Value, any Error>?>(nil)

        /// Resumes the waiter unless the other side already has; true when this call did.
        @discardableResult
        func resume(with result: Result<Value, any Error>) -> Bool {
            guard let waiting = continuation.withLock({ $0.take() }) else { return false }
            waiting.resume(with: result)
            return true
        }
    }
}
