import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

@Suite("Deadline timer", .timeLimit(.minutes(6)))
struct DeadlineTimerTests {
    typealias Schedule = DeadlineTimer.Schedule

    @Test("the timer is re-armed only when the earliest deadline moves earlier")
    func rearming() {
        let start = ContinuousClock.now
        var schedule = Schedule()
        #expect(schedule.set(1, at: start + .seconds(10), action: {}) == start + .seconds(10))
        #expect(schedule.set(2, at: start + .seconds(20), action: {}) == nil)
        #expect(schedule.set(3, at: start + .seconds(10), action: {}) == nil)
        #expect(schedule.set(4, at: start + .seconds(5), action: {}) == start + .seconds(5))
        #expect(schedule.count == 4)
    }

    @Test("expiry returns what is due, earliest first, and the next deadline; cleared and replaced ones are skipped")
    func expiry() {
        let start = ContinuousClock.now
        let fired = Recorder<UInt64>()
        var schedule = Schedule()
        for id in UInt64(1)...5 {
            _ = schedule.set(id, at: start + .seconds(Int64(id)), action: { fired.append(id) })
        }
        schedule.clear(2)
        // 3 moves later than 4.
        _ = schedule.set(3, at: start + .seconds(30), action: { fired.append(30) })
        let (due, next) = schedule.expire(at: start + .seconds(4))
        for action in due { action() }
        #expect(fired.all == [1, 4])
        #expect(next == start + .seconds(5))
        #expect(schedule.count == 2)
        let (rest, none) = schedule.expire(at: start + .seconds(60))
        for action in rest { action() }
        #expect(fired.all == [1, 4, 5, 30])
        #expect(none == nil && schedule.count == 0)
    }

    @Test("a heap of mostly cleared entries is compacted and keeps the live ones")
    func compaction() {
        let start = ContinuousClock.now
        var schedule = Schedule()
        for id in UInt64(0)..<1_000 { _ = schedule.set(id, at: start + .milliseconds(Int64(id)), action: {}) }
        for id in UInt64(0)..<1_000 where id % 10 != 0 { schedule.clear(id) }
        #expect(schedule.count == 100)
        let (due, next) = schedule.expire(at: start + .milliseconds(500))
        // 0, 10, …, 500.
        #expect(due.count == 51)
        #expect(next == start + .milliseconds(510))
    }

    @Test("the timer calls a deadline's action once it passes, and not a cleared one's")
    func timerFires() async {
        let timer = DeadlineTimer()
        let cleared = Recorder<Int>()
        // Cleared long before it is due (at 1 ms, a thread descheduled between the two calls
        // under a loaded machine let it fire), and passed before the second one fires.
        timer.set(1, at: .now + .milliseconds(500), action: { cleared.append(1) })
        timer.clear(1)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            timer.set(2, at: .now + .milliseconds(520), action: { continuation.resume() })
        }
        #expect(cleared.all.isEmpty)
        #expect(timer.count == 0)
    }

    /// (Whether the connection closes depends on how far it got in 300 ms: one still being set up
    /// when the deadline passes goes to the pool idle. FailureTests checks a body cut off mid-way.)
    @Test("a stalled transfer past its deadline is timedOut, and no deadline is left behind")
    func stalledTransfer() async throws {
        try await withOrigin { origin, pipeline in
            origin.serve(payload(100), at: "/stalled.jpg")
            let stalled = await loadError(pipeline, ImageRequest(url: origin.url("/stalled.jpg?gate=never"), deadline: .milliseconds(300)))
            #expect(stalled?.code == .timedOut)
            let data = try await pipeline.data(for: ImageRequest(url: origin.url("/stalled.jpg"))).data
            #expect(data.count == 100)
            #expect(pipeline.deadlines.count == 0)
        }
    }
}
