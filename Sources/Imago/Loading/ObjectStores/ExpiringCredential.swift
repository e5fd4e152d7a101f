#if HTTPClientLoader
    import Foundation

    /// A credential an object store's loader signs in for (GCS's OAuth token, Swift's token and
    /// storage URL): kept until a minute before it expires, one sign-in in flight however many
    /// loads wait for it.
    final class ExpiringCredential<Value: Sendable>: Sendable {
        private struct Held: Sendable {
            var value: Value
            var expires: ContinuousClock.Instant
        }

        private let held = Locked<Held?>(nil)
        /// The sign-in in flight, which every load arriving meanwhile awaits.
        private let pending = Locked<Task<Value, any Error>?>(nil)

        init() {}

        /// The credential, valid for at least another minute: the one held, else what `signIn`
        /// gives (with its lifetime), asked for once however many loads wait. Its failure is the
        /// load of `url`'s.
        func value(
            for url: URL, signIn: @escaping @Sendable () async throws(ImagoError) -> (value: Value, lifetime: Duration)
        ) async throws(ImagoError)
            -> Value
        {
            if let current = held.withLock({ $0 }), current.expires - .seconds(60) > .now { return current.value }
            let task = pending.withLock { pending in
                if let running = pending { return running }
                let task = Task { () async throws -> Value in
                    defer { self.pending.withLock { $0 = nil } }
                    let (value, lifetime) = try await signIn()
                    self.held.withLock { $0 = Held(value: value, expires: .now + lifetime) }
                    return value
                }
                pending = task
                return task
            }
            do {
                return try await task.value
            } catch let error as ImagoError {
                throw error
            } catch {
                throw ImagoError(.loaderFailed, url: url)
            }
        }

        /// Drops the credential held when `isRefused` says the store refused it.
        func forget(where isRefused: (Value) -> Bool) {
            held.withLock { if let current = $0, isRefused(current.value) { $0 = nil } }
        }
    }
#endif
