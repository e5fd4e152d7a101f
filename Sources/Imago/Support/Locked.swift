#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a lock: Imago's one lock type. It is a pthread mutex rather than
/// `Synchronization.Mutex` because ThreadSanitizer sees pthread mutexes, while `Mutex` on Linux
/// waits in a futex TSan does not see, so every state guarded by it would be reported as a race
/// and `make sanitize` could not tell a real one from the noise. On glibc the mutex is of the
/// adaptive kind: under contention it spins briefly before it sleeps, as `Mutex` does, which
/// short critical sections (a cache hit) need; a plain pthread mutex sleeps at once and measured
/// half the throughput on two threads.
@usableFromInline
final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    @inlinable
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock. `body` must not call back into code
    /// that takes the same lock, nor run user code.
    @inlinable
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
