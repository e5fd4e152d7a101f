import Imago

/// Makes each value once however many ask for it at the same time: the first caller for a key
/// starts the work, later callers join it, and the key is free again once the work has ended, so a
/// failure is not remembered and the next caller tries again. Serves variants, watermarks,
/// thumbor's overlay images and the gallery page alike. The work is not the caller's child: a
/// caller that is cancelled does not cancel what others wait for.
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<Value, any Error>
        /// Callers waiting for it who have not been cancelled.
        var callers = 1
        /// Stops work no caller waits for any more, when it can still be stopped (true).
        let abandon: @Sendable () -> Bool
    }

    private let running = Locked<[Key: Flight]>([:])
    private let nextID = Locked<UInt64>(0)

    /// The value for `key`: joined when its work is running (`joined` is called), else made by
    /// `make` after `admit` (called under the lock, so it may take a place of a limit; what it
    /// throws fails this caller and starts nothing).
    func value(
        for key: Key, joined: () -> Void = {}, admit: () throws -> Void = {}, make: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await value(for: key, joined: joined, admit: admit, abandon: { false }, make: { _ in try await make() })
    }

    /// The value for `key`, as above, with what `admit` gave handed to `make`; when every caller
    /// has been cancelled, `abandon` is asked to stop the work (true when it did, and the key is
    /// free at once).
    func value<Admission: Sendable>(
        for key: Key, joined: () -> Void = {}, admit: () throws -> Admission, abandon: @escaping @Sendable (Admission) -> Bool,
        make: @escaping @Sendable (Admission) async throws -> Value
    ) async throws -> Value {
        let task = try running.withLock { running -> Task<Value, any Error> in
            if let flight = running[key] {
                joined()
                running[key]?.callers += 1
                return flight.task
            }
            let admission = try admit()
            let id = nextID.withLock { id in
                id &+= 1
                return id
            }
            let task = Task {
                defer {
                    // Only this flight's entry: an abandoned one may have been replaced already.
                    self.running.withLock { running in
                        if running[key]?.id == id { running[key] = nil }
                    }
                }
                return try await make(admission)
            }
            running[key] = Flight(id: id, task: task, abandon: { abandon(admission) })
            return task
        }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            leave(key, task)
        }
    }

    /// A caller of `task` was cancelled: the last one asks for the work to stop.
    private func leave(_ key: Key, _ task: Task<Value, any Error>) {
        running.withLock { running in
            guard var flight = running[key], flight.task == task else { return }
            flight.callers -= 1
            if flight.callers == 0, flight.abandon() {
                running[key] = nil
            } else {
                running[key] = flight
            }
        }
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
