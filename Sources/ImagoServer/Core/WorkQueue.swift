import DequeModule
import Imago

/// Images made at once (imgproxy's `IMGPROXY_WORKERS`) and a bounded line of requests waiting for
/// a place, in arrival order (`IMGPROXY_REQUESTS_QUEUE_SIZE`): past the line a request is refused
/// at once (429). A place is held until the work has really ended, so the number of workers bounds
/// the memory in use; a request in the line holds only its connection and its plan.
///
/// A request enters under the caller's lock (``enter()``, so that the line's length and the
/// single-flight table agree), then waits for its turn (``turn(_:)``) inside its deadline. One
/// that is abandoned while it waits (its deadline passed, every client gone) leaves the line.
final class WorkQueue: Sendable {
    /// A request's place: running at once, or waiting in the line.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
        /// Whether it entered the line rather than a free place.
        let queued: Bool
    }

    /// The line is full.
    struct Full: Error {}

    private struct Waiter {
        let id: UInt64
        let since: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var running = 0
        var line = Deque<Waiter>()
        /// Waiters given a place before they started waiting for it.
        var granted = Set<UInt64>()
        var nextID: UInt64 = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Callers of ``untilQueued(_:)`` by the length they wait for.
        var lengthWaiters: [(length: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The length waiters the line's length now satisfies, taken out.
        mutating func satisfiedLengthWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !lengthWaiters.isEmpty else { return [] }
            let count = line.count
            let satisfied = lengthWaiters.filter { $0.length == count }.map(\.continuation)
            lengthWaiters.removeAll { $0.length == count }
            return satisfied
        }
    }

    /// Places: work running at once.
    let workers: Int
    /// Requests that may wait for a place.
    let lineLength: Int
    private let state = Locked(State())
    /// Called with the line's new length and, when a waiter got its place, how long it waited.
    private let observe: @Sendable (_ queued: Int, _ waited: Duration?) -> Void

    init(workers: Int, lineLength: Int, observe: @escaping @Sendable (_ queued: Int, _ waited: Duration?) -> Void = { _, _ in }) {
        self.workers = max(workers, 1)
        self.lineLength = max(lineLength, 0)
        self.observe = observe
    }

    /// A free place, or one in the line; ``Full`` when the line is full too.
    func enter() throws(Full) -> Ticket {
        let (ticket, queued, satisfied) = try state.withLock { state throws(Full) -> (Ticket, Int?, [CheckedContinuation<Void, Never>]) in
            state.nextID &+= 1
            if state.running < workers, state.line.isEmpty {
                state.running += 1
                return (Ticket(id: state.nextID, queued: false), nil, [])
            }
            guard state.line.count < lineLength else { throw Full() }
            state.line.append(Waiter(id: state.nextID, since: .now))
            return (Ticket(id: state.nextID, queued: true), state.line.count, state.satisfiedLengthWaiters())
        }
        if let queued { observe(queued, nil) }
        for waiter in satisfied { waiter.resume() }
        return ticket
    }

    /// Returns once `ticket` holds a place (at once for one that entered a free place); throws
    /// `CancellationError` when it was abandoned, or the waiting task is cancelled, first.
    func turn(_ ticket: Ticket) async throws {
        guard ticket.queued else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.granted.remove(ticket.id) != nil { return .success(()) }
                    guard let index = state.line.firstIndex(where: { $0.id == ticket.id }) else { return .failure(CancellationError()) }
                    state.line[index].continuation = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            abandon(ticket)
        }
    }

    /// Takes `ticket` out of the line: its waiter fails, and a place given to it and not yet
    /// taken is given on. True when it had not started running.
    @discardableResult
    func abandon(_ ticket: Ticket) -> Bool {
        guard ticket.queued else { return false }
        enum Found {
            case waiting(CheckedContinuation<Void, any Error>?, queued: Int, satisfied: [CheckedContinuation<Void, Never>])
            case granted, running
        }
        let found = state.withLock { state -> Found in
            if let index = state.line.firstIndex(where: { $0.id == ticket.id }) {
                let waiter = state.line.remove(at: index)
                return .waiting(waiter.continuation, queued: state.line.count, satisfied: state.satisfiedLengthWaiters())
            }
            return state.granted.remove(ticket.id) != nil ? .granted : .running
        }
        switch found {
        case .waiting(let continuation, let queued, let satisfied):
            observe(queued, nil)
            continuation?.resume(throwing: CancellationError())
            for waiter in satisfied { waiter.resume() }
            return true
        case .granted:
            release()
            return true
        case .running:
            return false
        }
    }

    /// Gives a place back: to the first in the line, or free.
    func release() {
        enum Next {
            case waiter(Waiter, queued: Int, satisfied: [CheckedContinuation<Void, Never>])
            case none([CheckedContinuation<Void, Never>])
        }
        let next = state.withLock { state -> Next in
            if let first = state.line.popFirst() {
                if first.continuation == nil { state.granted.insert(first.id) }
                return .waiter(first, queued: state.line.count, satisfied: state.satisfiedLengthWaiters())
            }
            state.running -= 1
            guard state.running == 0 else { return .none([]) }
            defer { state.idleWaiters = [] }
            return .none(state.idleWaiters)
        }
        switch next {
        case .waiter(let waiter, let queued, let satisfied):
            observe(queued, .now - waiter.since)
            waiter.continuation?.resume()
            for waiter in satisfied { waiter.resume() }
        case .none(let idle):
            for waiter in idle { waiter.resume() }
        }
    }

    /// Places taken now.
    var inFlight: Int { state.withLock { $0.running } }

    /// Requests waiting in the line now.
    var queued: Int { state.withLock { $0.line.count } }

    /// Returns once exactly `length` requests wait in the line (at once when they do): how a test
    /// knows a request has entered or left the line, without polling.
    func untilQueued(_ length: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.line.count == length { return true }
                state.lengthWaiters.append((length, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Returns once no place is taken (at once when none is): how a drain or a test knows that
    /// cancelled work has really ended, without polling.
    func untilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.running == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
