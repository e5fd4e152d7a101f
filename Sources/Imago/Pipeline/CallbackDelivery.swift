import Dispatch

/// Where a pipeline calls a handle's progress, preview and completion closures
/// (``ImagePipeline/Configuration/callbackDelivery``).
///
/// Whichever is chosen, one handle's callbacks come in order, progress and previews before its
/// completion, and the completion once. `async` APIs and ``PipelineTask/events`` are not affected.
public enum CallbackDelivery: Sendable {
    /// On the thread where the pipeline is when the event happens (a loader's, the CPU stage's, or
    /// the caller's for a memory-cache hit, before `loadImage` returns): the least latency, for
    /// code that hops where it needs to. The default. For http(s), progress comes on one of NIO's
    /// event-loop threads, which other connections share: keep the closure short.
    case immediately
    /// On the main actor (the main dispatch queue), later: for UI code. Inside the closure,
    /// `MainActor.assumeIsolated { … }` reaches main-actor state. The process must run the main
    /// actor (an `async` main, `dispatchMain()`, or a run loop on the main thread).
    case mainActor
    /// On `queue`, later; a serial queue keeps the order of calls across handles too.
    case queue(DispatchQueue)

    /// Runs `call` as this delivery says. Called under the handle's lock, so that calls for one
    /// handle are queued in the order they happened; `.immediately` is the caller's to run after.
    func enqueue(_ call: @escaping @Sendable () -> Void) {
        switch self {
        case .immediately: call()
        case .mainActor: DispatchQueue.main.async(execute: call)
        case .queue(let queue): queue.async(execute: call)
        }
    }

    /// Whether calls are queued elsewhere rather than made on the spot.
    var isQueued: Bool {
        if case .immediately = self { return false }
        return true
    }
}
