import Dispatch
import Foundation
import Imago
import ImagoTestSupport
import Testing

@Suite("Callback delivery", .timeLimit(.minutes(6)))
struct CallbackDeliveryTests {
    /// What a callback saw: its kind and whether it ran where the delivery promised.
    struct Call: Sendable, Equatable {
        var kind: String
        var inPlace: Bool
    }

    /// Loads `path` twice (a transfer with progress, then a memory-cache hit) and returns the calls
    /// each load's callbacks made, `inPlace` from `check` run inside the callback.
    static func calls(
        delivery: CallbackDelivery, check: @escaping @Sendable () -> Bool
    ) async throws -> (transfer: [Call], hit: [Call]) {
        var result: (transfer: [Call], hit: [Call]) = ([], [])
        try await withOrigin(configure: { $0.callbackDelivery = delivery }) { origin, pipeline in
            origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            for round in 0..<2 {
                let calls = Recorder<Call>()
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    pipeline.imageTask(
                        with: ImageRequest(url: origin.url("/a.jpg")),
                        completion: { result in
                            calls.append(Call(kind: (try? result.get().image) != nil ? "completed" : "failed", inPlace: check()))
                            done.resume()
                        },
                        progress: { _, _, _ in calls.append(Call(kind: "progress", inPlace: check())) })
                }
                // One run of progress calls is enough to compare.
                let kinds = calls.all.reduce(into: [Call]()) { if $0.last != $1 { $0.append($1) } }
                if round == 0 { result.transfer = kinds } else { result.hit = kinds }
            }
        }
        return result
    }

    @Test("on the main actor: every call on the main queue, main-actor isolated, progress before the completion, a memory hit too")
    func mainActor() async throws {
        // The main queue is the main actor's executor; after dispatchMain() (as in this test runner)
        // it may be drained by a thread other than the first.
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let (transfer, hit) = try await Self.calls(delivery: .mainActor) {
            DispatchQueue.getSpecific(key: key) == "main" && MainActor.assumeIsolated { true }
        }
        #expect(transfer == [Call(kind: "progress", inPlace: true), Call(kind: "completed", inPlace: true)])
        #expect(hit == [Call(kind: "completed", inPlace: true)])
    }

    @Test("on a queue: every call on that queue, in order")
    func queue() async throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "callbacks")
        queue.setSpecific(key: key, value: "callbacks")
        let (transfer, hit) = try await Self.calls(delivery: .queue(queue)) { DispatchQueue.getSpecific(key: key) == "callbacks" }
        #expect(transfer == [Call(kind: "progress", inPlace: true), Call(kind: "completed", inPlace: true)])
        #expect(hit == [Call(kind: "completed", inPlace: true)])
    }

    @Test("immediately (the default): a memory hit completes before loadImage returns, on the caller's thread")
    func immediately() async throws {
        #expect(ImagePipeline.Configuration().callbackDelivery.isImmediate)
        try await withOrigin { origin, pipeline in
            origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/a.jpg")
            _ = try await pipeline.image(for: origin.url("/a.jpg"))
            let completed = Recorder<Bool>()
            pipeline.imageTask(with: ImageRequest(url: origin.url("/a.jpg"))) { result in completed.append((try? result.get()) != nil) }
            #expect(completed.all == [true])
        }
    }
}

extension CallbackDelivery {
    fileprivate var isImmediate: Bool {
        if case .immediately = self { return true }
        return false
    }
}
