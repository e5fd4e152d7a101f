import NIOConcurrencyHelpers

/// A value behind a lock: Imago's one lock type. It is a pthread mutex (NIO's `NIOLock`) rather
/// than `Synchronization.Mutex` because ThreadSanitizer sees pthread mutexes, while `Mutex` on
/// Linux waits in a futex TSan does not see, so every state guarded by it would be reported as a
/// race and `make sanitize` could not tell a real one from the noise.
@usableFromInline
final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let lock = NIOLock()
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value while holding the lock. `body` must not call back into code
    /// that takes the same lock, nor run user code.
    @inlinable
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
