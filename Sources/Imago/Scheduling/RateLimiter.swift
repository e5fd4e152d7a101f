import Foundation

/// How fast a pipeline may make requests: at most `requestsPerSecond` on average, with bursts of
/// up to `burst` at once (a token bucket, as Nuke's rate limiter). A list scrolled fast asks for
/// many images and cancels most of them; spread over time, the cancelled ones are dropped before
/// they ever reach the network.
public struct RateLimit: Sendable, Hashable {
    /// Requests per second on average, more than 0.
    public var requestsPerSecond: Double
    /// Requests that may start at once when none were made for a while, at least 1.
    public var burst: Int

    /// A limit; the defaults are Nuke's (80 a second, bursts of 25).
    public init(requestsPerSecond: Double = 80, burst: Int = 25) {
        self.requestsPerSecond = requestsPerSecond.isFinite && requestsPerSecond > 0 ? requestsPerSecond : 80
        self.burst = max(1, burst)
    }
}

/// Tokens that come back at a steady rate up to a capacity: a request takes one.
struct TokenBucket: Sendable {
    let rate: Double
    let capacity: Double
    private(set) var tokens: Double
    private var updated: ContinuousClock.Instant

    /// A full bucket at `now`.
    init(_ limit: RateLimit, now: ContinuousClock.Instant) {
        rate = limit.requestsPerSecond
        capacity = Double(limit.burst)
        tokens = capacity
        updated = now
    }

    /// Takes a token if there is one at `now`.
    mutating func take(at now: ContinuousClock.Instant) -> Bool {
        refill(at: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// How long from `now` until a token is there.
    mutating func timeUntilToken(at now: ContinuousClock.Instant) -> Duration {
        refill(at: now)
        return tokens >= 1 ? .zero : .seconds((1 - tokens) / rate)
    }

    private mutating func refill(at now: ContinuousClock.Instant) {
        guard now > updated else { return }
        let elapsed = now - updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(capacity, tokens + seconds * rate)
        updated = now
    }
}

/// Makes requests wait their turn under a ``RateLimit``: first come, first served; a waiter whose
/// task is cancelled leaves the line at once without taking a token.
final class RateLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var bucket: TokenBucket
        var waiters: [Waiter] = []
        /// Waiters cancelled before they were in line.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var isDraining = false
    }

    private let state: Locked<State>

    init(_ limit: RateLimit) {
        state = Locked(State(bucket: TokenBucket(limit, now: .now)))
    }

    /// Requests waiting now.
    var waiting: Int {
        state.withLock { $0.waiters.count }
    }

    /// Returns when the caller may make its request; throws `CancellationError` when its task is
    /// cancelled first.
    func acquire() async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case go, cancelled, wait, waitAndDrain }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelled.remove(id) != nil { return .cancelled }
                    if state.waiters.isEmpty, state.bucket.take(at: .now) { return .go }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    if state.isDraining { return .wait }
                    state.isDraining = true
                    return .waitAndDrain
                }
                switch outcome {
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                case .waitAndDrain: Task { await self.drain() }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        // Let go by the line but cancelled on the way: the mark is no longer needed.
        state.withLock { _ = $0.cancelled.remove(id) }
    }

    /// Lets waiters go as tokens come, until none is left.
    private func drain() async {
        while true {
            let delay = state.withLock { $0.bucket.timeUntilToken(at: .now) }
            if delay > .zero { try? await Task.sleep(for: delay) }
            let (ready, done) = state.withLock { state -> ([Waiter], Bool) in
                var ready: [Waiter] = []
                while !state.waiters.isEmpty, state.bucket.take(at: .now) { ready.append(state.waiters.removeFirst()) }
                if state.waiters.isEmpty { state.isDraining = false }
                return (ready, state.waiters.isEmpty)
            }
            for waiter in ready { waiter.continuation.resume() }
            if done { return }
        }
    }
}
