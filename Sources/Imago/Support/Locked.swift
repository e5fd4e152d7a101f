#if IMAGO_THREAD_SANITIZER
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif
#else
    import Synchronization
#endif

/// A value behind a lock: Imago's one lock type. It is `Synchronization.Mutex` (a futex that spins
/// briefly before it sleeps, and locks inline), with the value behind a pointer of its own so that
/// `withLock` can lend it to code that is not `sending`-clean: the lock already gives exclusive
/// access, so neither run-time exclusivity checks nor region checks add anything.
///
/// ThreadSanitizer cannot see `Mutex` on Linux (it waits in a futex TSan does not intercept), so
/// every state guarded by it would be reported as a race. `make sanitize` builds its TSan run with
/// `-DIMAGO_THREAD_SANITIZER`, which makes this a pthread mutex (of glibc's adaptive kind, which
/// also spins before sleeping) that TSan does see. `package`, so ImagoServer and the CLI lock
/// with it too.
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    #if IMAGO_THREAD_SANITIZER
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #else
        @usableFromInline let mutex = Mutex<Void>(())
    #endif
    @usableFromInline let value: UnsafeMutablePointer<Value>

    @inlinable
    package init(_ value: Value) {
        self.value = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        self.value.initialize(to: value)
        #if IMAGO_THREAD_SANITIZER
            mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if canImport(Glibc)
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            #endif
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        #endif
    }

    @inlinable
    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        #if IMAGO_THREAD_SANITIZER
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        #endif
    }

    /// Runs `body` with the value while holding the lock. `body` must not call back into code
    /// that takes the same lock, nor run user code.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        let value = self.value
        #if IMAGO_THREAD_SANITIZER
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        #else
            return try mutex.withLock { _ throws(Failure) -> sending Result in
                // The result leaves the lock as `withLock` hands it back; it was the caller's before.
                nonisolated(unsafe) let result = try body(&value.pointee)
                return result
            }
        #endif
    }
}
