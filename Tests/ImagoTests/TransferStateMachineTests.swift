import Foundation
@testable import Imago
import Testing

/// The transfer state machine alone: no I/O, no pipeline. Handles are names, jobs numbers, stale
/// entries strings.
@Suite("Transfer state machine")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine<String, Int, String>

    static func request(_ path: String, priority: ImageRequest.Priority = .normal) -> ImageRequest {
        ImageRequest(url: URL(string: "https://example.com/\(path)")!, priority: priority)
    }

    /// Joins without a cache lookup and returns the downloads that started.
    static func join(_ machine: inout Machine, _ id: UInt64, _ path: String, priority: ImageRequest.Priority = .normal, decodes: Bool = true) -> [Machine.Start]
    {
        switch machine.join(id, handle: "h\(id)", request: request(path, priority: priority), decodes: decodes, looksUp: false) {
        case .start(let starts): return starts
        case .coalesced, .lookUp: return []
        }
    }

    @Test("a second handle for the same key joins the running transfer; one of another key waits for the only slot")
    func coalescesAndQueues() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let starts = Self.join(&machine, 1, "a")
        #expect(starts.map(\.request.url.lastPathComponent) == ["a"])
        guard case .coalesced(let transferID) = machine.join(2, handle: "h2", request: Self.request("a"), decodes: false, looksUp: false) else {
            Issue.record("expected to join")
            return
        }
        #expect(transferID == starts[0].transferID)
        #expect(Self.join(&machine, 3, "b").isEmpty)
        #expect(machine.transfers.count == 2)
        #expect(machine.running == 1)
        #expect(machine.started(transferID, job: 10).cancel == nil)

        let (next, nextNext) = machine.downloaded(transferID, succeeded: true)
        #expect(next.map(\.request.url.lastPathComponent) == ["b"])
        guard case .decode(let requests, _) = nextNext else {
            Issue.record("expected a decode, got \(nextNext)")
            return
        }
        // Only the handle that wants an image decodes.
        #expect(requests.count == 1)
        #expect(Set(machine.finish(transferID)?.map(\.handle) ?? []) == ["h1", "h2"])
        #expect(machine.finish(transferID) == nil)
    }

    /// Joins one request that wants previews to an empty machine; its transfer starts at once.
    static func startPreviewTransfer(_ machine: inout Machine) -> UInt64? {
        guard
            case .start(let starts) = machine.join(
                1, handle: "h1", request: ImageRequest(url: URL(string: "https://example.com/p")!, options: .previews), decodes: true, looksUp: false),
            let transferID = starts.first?.transferID
        else {
            Issue.record("expected a start")
            return nil
        }
        return transferID
    }

    @Test("bytes that arrive while a preview is made ask for another once it ends; none is made after the download")
    func previewAgain() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let start = ContinuousClock.now
        guard let transferID = Self.startPreviewTransfer(&machine) else { return }
        // No bytes came before the job: recording it asks for no preview.
        let outcome = machine.started(transferID, job: 10)
        #expect(outcome.cancel == nil && !outcome.preview)
        guard let (decoder, job) = machine.beginPreview(transferID, now: start, interval: .zero, newDecoder: PreviewDecoder()) else {
            Issue.record("expected a preview to begin")
            return
        }
        #expect(job == 10)
        // More bytes while it is made: no second preview at once, but one asked for after.
        #expect(machine.beginPreview(transferID, now: start, interval: .zero, newDecoder: PreviewDecoder()) == nil)
        let first = machine.endPreview(transferID, decoder: decoder, made: false, now: start)
        #expect(first.members.isEmpty && first.again)
        #expect(machine.beginPreview(transferID, now: start, interval: .zero, newDecoder: PreviewDecoder()) != nil)
        let second = machine.endPreview(transferID, decoder: decoder, made: true, now: start)
        #expect(second.members.map(\.handle) == ["h1"] && !second.again)
        _ = machine.downloaded(transferID, succeeded: true)
        #expect(machine.beginPreview(transferID, now: start, interval: .zero, newDecoder: PreviewDecoder()) == nil)
    }

    @Test("bytes that arrive before the download's job is recorded get their preview when it is")
    func previewBeforeJob() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let start = ContinuousClock.now
        guard let transferID = Self.startPreviewTransfer(&machine) else { return }
        // The download's task ran and reported bytes before the pipeline recorded it.
        #expect(machine.beginPreview(transferID, now: start, interval: .zero, newDecoder: PreviewDecoder()) == nil)
        let outcome = machine.started(transferID, job: 10)
        #expect(outcome.cancel == nil && outcome.preview)
        #expect(machine.beginPreview(transferID, now: start, interval: .zero, newDecoder: PreviewDecoder()) != nil)
    }

    @Test("a cache lookup: a hit decodes with no slot; a miss queues with the stale entry to revalidate")
    func cacheLookup() {
        var machine = Machine(maxRunning: 2, order: .fifo)
        guard case .lookUp(let hitID, _) = machine.join(1, handle: "h1", request: Self.request("hit"), decodes: true, looksUp: true),
            case .lookUp(let missID, _) = machine.join(2, handle: "h2", request: Self.request("miss"), decodes: false, looksUp: true)
        else {
            Issue.record("expected lookups")
            return
        }
        #expect(machine.lookups == 2)
        guard case .decode = machine.cacheHit(hitID) else {
            Issue.record("expected a decode")
            return
        }
        #expect(machine.running == 0)
        let starts = machine.cacheMissed(missID, stale: "etag-1")
        #expect(starts.map(\.stale) == ["etag-1"])
        #expect(machine.lookups == 0)
        #expect(machine.finish(hitID)?.map(\.handle) == ["h1"])
        guard case .finish = machine.downloaded(missID, succeeded: true).next else {
            Issue.record("a data-only transfer finishes without decoding")
            return
        }
        #expect(machine.finish(missID)?.map(\.handle) == ["h2"])
        #expect(machine.isIdle)
    }

    @Test("a lookup whose handles all left ends unseen, and the machine is idle only once it returns")
    func cancelledLookup() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        guard case .lookUp(let transferID, _) = machine.join(1, handle: "h1", request: Self.request("a"), decodes: true, looksUp: true) else {
            Issue.record("expected a lookup")
            return
        }
        let cancellation = machine.cancel(1)
        #expect(cancellation?.handle == "h1")
        #expect(cancellation?.stoppedRequest != nil)
        #expect(cancellation?.job == nil)
        #expect(!machine.isIdle)
        #expect(machine.cacheMissed(transferID, stale: nil).isEmpty)
        #expect(machine.isIdle)
    }

    @Test("cancelling the last handle of a running transfer returns its job; the slot is held until the job returns")
    func cancelRunning() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let transferID = Self.join(&machine, 1, "a")[0].transferID
        #expect(Self.join(&machine, 2, "b").isEmpty)
        #expect(machine.started(transferID, job: 7).cancel == nil)
        #expect(machine.cancel(1)?.job == 7)
        #expect(machine.cancel(1) == nil)
        // The slot is still held: "b" waits until the cancelled job returns.
        #expect(machine.running == 1)
        let (starts, next) = machine.downloaded(transferID, succeeded: false)
        #expect(starts.map(\.request.url.lastPathComponent) == ["b"])
        guard case .gone = next else {
            Issue.record("expected gone, got \(next)")
            return
        }
    }

    @Test("a job made after its handles left is returned to be cancelled; one made after it returned is not")
    func startedRaces() {
        var machine = Machine(maxRunning: 2, order: .fifo)
        let first = Self.join(&machine, 1, "a")[0].transferID
        _ = machine.cancel(1)
        #expect(machine.started(first, job: 1).cancel == 1)
        let second = Self.join(&machine, 2, "b")[0].transferID
        _ = machine.downloaded(second, succeeded: true)
        #expect(machine.started(second, job: 2).cancel == nil)
    }

    @Test("a queued transfer whose handles all left is skipped when a slot frees")
    func cancelQueued() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let running = Self.join(&machine, 1, "a")[0].transferID
        #expect(Self.join(&machine, 2, "b").isEmpty)
        #expect(Self.join(&machine, 3, "c").isEmpty)
        #expect(machine.cancel(2)?.stoppedRequest?.url.lastPathComponent == "b")
        #expect(machine.downloaded(running, succeeded: true).starts.map(\.request.url.lastPathComponent) == ["c"])
    }

    @Test("one handle of two leaving keeps the transfer; it runs at the highest priority of those left")
    func cancelOneOfTwo() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let blocker = Self.join(&machine, 1, "blocker")[0].transferID
        #expect(Self.join(&machine, 2, "shared", priority: .veryHigh).isEmpty)
        #expect(Self.join(&machine, 3, "shared", priority: .low).isEmpty)
        #expect(Self.join(&machine, 4, "other", priority: .normal).isEmpty)
        let cancellation = machine.cancel(2)
        #expect(cancellation?.stoppedRequest == nil)
        // "shared" now runs at low: "other" (normal) starts first.
        #expect(machine.downloaded(blocker, succeeded: true).starts.map(\.request.url.lastPathComponent) == ["other"])
    }

    @Test("raising a queued handle's priority moves its transfer ahead; lowering it moves it back")
    func reprioritise() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let blocker = Self.join(&machine, 1, "blocker")[0].transferID
        #expect(Self.join(&machine, 2, "first").isEmpty)
        #expect(Self.join(&machine, 3, "second", priority: .low).isEmpty)
        machine.setPriority(.veryHigh, of: 3)
        machine.setPriority(.veryLow, of: 3)
        machine.setPriority(.high, of: 3)
        let (starts, _) = machine.downloaded(blocker, succeeded: true)
        #expect(starts.map(\.request.url.lastPathComponent) == ["second"])
        #expect(starts.first?.priority == .high)
        machine.setPriority(.veryHigh, of: 99)
    }

    @Test("a handle that joins while the transfer decodes is completed with the others")
    func joinWhileDecoding() {
        var machine = Machine(maxRunning: 1, order: .fifo)
        let transferID = Self.join(&machine, 1, "a")[0].transferID
        _ = machine.downloaded(transferID, succeeded: true)
        guard case .coalesced = machine.join(2, handle: "late", request: Self.request("a"), decodes: true, looksUp: false) else {
            Issue.record("expected to join the decoding transfer")
            return
        }
        #expect(Set(machine.finish(transferID)?.map(\.handle) ?? []) == ["h1", "late"])
        // A new request for the key after the finish starts anew.
        #expect(Self.join(&machine, 3, "a").count == 1)
    }

    @Test("suspended, nothing starts; resumed, the queue starts in order; cancelAll returns every handle and job")
    func suspendResumeCancelAll() {
        var machine = Machine(maxRunning: 2, order: .lifo)
        machine.suspend()
        #expect(Self.join(&machine, 1, "a").isEmpty)
        #expect(Self.join(&machine, 2, "b").isEmpty)
        #expect(Self.join(&machine, 3, "c").isEmpty)
        let starts = machine.resume()
        #expect(starts.map(\.request.url.lastPathComponent) == ["c", "b"])
        #expect(machine.started(starts[0].transferID, job: 30).cancel == nil)
        let cancellations = machine.cancelAll()
        #expect(Set(cancellations.map(\.handle)) == ["h1", "h2", "h3"])
        #expect(cancellations.compactMap(\.job) == [30])
        #expect(machine.transfers.isEmpty)
        for start in starts { _ = machine.downloaded(start.transferID, succeeded: false) }
        #expect(machine.isIdle)
    }

    /// One step of the exhaustive test below.
    enum Step: CaseIterable, CustomStringConvertible {
        case joinA, joinB, cancelA, cancelB, lookUp, download, decode, finish
        var description: String { "\(self)" }
    }

    @Test("every order of join, cancel, lookup, download and finish for two handles of one key: each handle ends exactly once, and the machine ends idle")
    func everyOrder() {
        var orders = 0
        for order in Self.permutations(Step.allCases) {
            var machine = Machine(maxRunning: 1, order: .fifo)
            var ended: [String] = []
            var joined: [String] = []
            // What the pipeline would have under way: lookups to answer, jobs to return, transfers
            // to finish.
            var lookingUp: [UInt64] = [], running: [UInt64] = [], delivering: [UInt64] = []
            func answerLookups() {
                for id in lookingUp { running += machine.cacheMissed(id, stale: nil).map(\.transferID) }
                lookingUp = []
            }
            func returnJobs() {
                while !running.isEmpty {
                    let id = running.removeFirst()
                    let (starts, next) = machine.downloaded(id, succeeded: true)
                    running += starts.map(\.transferID)
                    if case .decode = next { delivering.append(id) }
                }
            }
            func finishAll() {
                for id in delivering { ended += machine.finish(id)?.map(\.handle) ?? [] }
                delivering = []
            }
            for step in order {
                switch step {
                case .joinA, .joinB:
                    let name = step == .joinA ? "A" : "B"
                    joined.append(name)
                    let action = machine.join(step == .joinA ? 1 : 2, handle: name, request: Self.request("x"), decodes: true, looksUp: true)
                    if case .lookUp(let id, _) = action { lookingUp.append(id) }
                case .cancelA, .cancelB:
                    if let cancellation = machine.cancel(step == .cancelA ? 1 : 2) { ended.append(cancellation.handle) }
                case .lookUp: answerLookups()
                case .download: returnJobs()
                case .decode, .finish: finishAll()
                }
            }
            answerLookups()
            returnJobs()
            finishAll()
            #expect(ended.sorted() == joined.sorted(), "order \(order)")
            #expect(machine.isIdle, "order \(order)")
            orders += 1
        }
        #expect(orders == 40320)
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }
}
