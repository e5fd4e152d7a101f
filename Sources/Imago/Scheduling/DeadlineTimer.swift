import Dispatch

/// The deadlines of a pipeline's transfers, with one timer for all of them. Setting or clearing a
/// deadline is a lock and a heap step; the timer is re-armed only when the earliest deadline
/// changes, which for transfers given the same limit in the order they start is never. (A task
/// group with a sleeping child per transfer cost two task creations and a timer syscall each.)
/// The expiry action runs on the timer's queue, after the lock.
final class DeadlineTimer: Sendable {
    /// The pending deadlines, as a plain value: the timer's decisions, testable without a clock.
    struct Schedule {
        /// Earliest first; an entry whose ID no longer has an action was cleared and is skipped.
        private var heap = Heap()
        private var actions: [UInt64: Entry] = [:]

        struct Entry {
            var instant: ContinuousClock.Instant
            var action: @Sendable () -> Void
        }

        /// Sets `id`'s deadline (replacing an earlier one). Returns the instant the timer must
        /// now fire at, or nil when the earliest deadline did not change.
        mutating func set(_ id: UInt64, at instant: ContinuousClock.Instant, action: @escaping @Sendable () -> Void) -> ContinuousClock.Instant? {
            let earliest = self.earliest
            actions[id] = Entry(instant: instant, action: action)
            heap.push(instant, id)
            compactIfSparse()
            if let earliest, earliest <= instant { return nil }
            return instant
        }

        /// Clears `id`'s deadline. The timer may then fire early once, and find nothing due.
        mutating func clear(_ id: UInt64) {
            actions[id] = nil
            compactIfSparse()
        }

        /// Removes and returns the actions due at `now`, with the instant of the next deadline.
        mutating func expire(at now: ContinuousClock.Instant) -> (due: [@Sendable () -> Void], next: ContinuousClock.Instant?) {
            var due: [@Sendable () -> Void] = []
            while let (instant, id) = heap.top, instant <= now {
                heap.pop()
                // An entry replaced by a later deadline for the same ID is not due yet.
                if let entry = actions[id], entry.instant == instant {
                    actions[id] = nil
                    due.append(entry.action)
                }
            }
            return (due, earliest)
        }

        /// The earliest live deadline.
        var earliest: ContinuousClock.Instant? {
            mutating get {
                while let (instant, id) = heap.top, actions[id]?.instant != instant { heap.pop() }
                return heap.top?.0
            }
        }

        var count: Int { actions.count }

        /// Cleared entries stay in the heap until they reach its top; past twice the live count
        /// (and a floor, so a small heap is left alone) the heap is rebuilt from the live ones.
        private mutating func compactIfSparse() {
            guard heap.count > 64, heap.count > 2 * actions.count else { return }
            heap = Heap()
            for (id, entry) in actions { heap.push(entry.instant, id) }
        }
    }

    /// A binary min-heap of (instant, ID).
    struct Heap {
        private var items: [(ContinuousClock.Instant, UInt64)] = []

        var count: Int { items.count }
        var top: (ContinuousClock.Instant, UInt64)? { items.first }

        mutating func push(_ instant: ContinuousClock.Instant, _ id: UInt64) {
            items.append((instant, id))
            var child = items.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard items[child].0 < items[parent].0 else { break }
                items.swapAt(child, parent)
                child = parent
            }
        }

        mutating func pop() {
            guard !items.isEmpty else { return }
            items.swapAt(0, items.count - 1)
            items.removeLast()
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < items.count, items[left].0 < items[smallest].0 { smallest = left }
                if right < items.count, items[right].0 < items[smallest].0 { smallest = right }
                guard smallest != parent else { return }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
    }

    /// The schedule and the timer that serves it, touched only under the lock.
    private struct State {
        var schedule = Schedule()
        let timer: any DispatchSourceTimer
    }

    private let state: Locked<State>

    init() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "imago.deadlines"))
        state = Locked(State(timer: timer))
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.activate()
    }

    deinit {
        state.withLock { $0.timer.cancel() }
    }

    /// Calls `action` once `instant` has passed, unless ``clear(_:)`` is called for `id` first.
    func set(_ id: UInt64, at instant: ContinuousClock.Instant, action: @escaping @Sendable () -> Void) {
        // Armed under the lock, so two re-arms cannot land in the wrong order.
        state.withLock { state in
            if let rearm = state.schedule.set(id, at: instant, action: action) { Self.arm(state.timer, at: rearm) }
        }
    }

    /// Forgets `id`'s deadline.
    func clear(_ id: UInt64) {
        state.withLock { $0.schedule.clear(id) }
    }

    /// The deadlines not yet passed or cleared.
    var count: Int { state.withLock { $0.schedule.count } }

    private func fire() {
        let due = state.withLock { state in
            let (due, next) = state.schedule.expire(at: .now)
            if let next { Self.arm(state.timer, at: next) }
            return due
        }
        for action in due { action() }
    }

    /// Dispatch counts in its own clock: the timer is set by the time left, at most a year.
    private static func arm(_ timer: any DispatchSourceTimer, at instant: ContinuousClock.Instant) {
        let left = min(max(ContinuousClock.now.duration(to: instant), .zero), .seconds(365 * 86_400))
        let (seconds, attoseconds) = left.components
        timer.schedule(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)), leeway: .milliseconds(1))
    }
}
