import Imago

/// Makes each value once however many ask for it at the same time: the first caller for a key
/// starts the work, later callers join it, and the key is free again once the work has ended, so a
/// failure is not remembered and the next caller tries again. Serves variants, watermarks,
/// thumbor's overlay images and the gallery page alike. The work is not the caller's child: a
/// caller that is cancelled does not cancel what others wait for.
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let running = Locked<[Key: Task<Value, any Error>]>([:])

    /// The value for `key`: joined when its work is running (`joined` is called), else made by
    /// `make` after `admit` (called under the lock, so it may take a place of a limit; what it
    /// throws fails this caller and starts nothing).
    func value(
        for key: Key, joined: () -> Void = {}, admit: () throws -> Void = {}, make: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let task = try running.withLock { running -> Task<Value, any Error> in
            if let task = running[key] {
                joined()
                return task
            }
            try admit()
            let task = Task {
                defer { _ = self.running.withLock { $0.removeValue(forKey: key) } }
                return try await make()
            }
            running[key] = task
            return task
        }
        return try await task.value
    }

    /// How many values are being made now.
    var count: Int { running.withLock { $0.count } }
}

/// One value made once on first use and kept: made again only after a failure.
final class KeptOnce<Value: Sendable>: Sendable {
    private let kept = Locked<Value?>(nil)
    private let flight = SingleFlight<Int, Value>()

    /// The kept value, or the one `make` gives (once, whoever else asks meanwhile).
    func value(_ make: @escaping @Sendable () async throws -> Value) async throws -> Value {
        if let value = kept.withLock({ $0 }) { return value }
        return try await flight.value(for: 0) {
            let value = try await make()
            self.kept.withLock { $0 = value }
            return value
        }
    }
}
