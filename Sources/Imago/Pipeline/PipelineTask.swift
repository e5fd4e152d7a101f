import Foundation

/// An image request's handle (``ImageTask``, completed with an ``ImageResponse``).
public typealias ImageTask = PipelineTask<ImageResponse>
/// A data-only request's handle (``DataTask``, completed with a ``DataResponse``: the bytes, not decoded).
public typealias DataTask = PipelineTask<DataResponse>

/// A caller's handle on one request: its priority, progress, `cancel()`, and its response, an
/// ``ImageResponse`` for an ``ImageTask`` and a ``DataResponse`` for a ``DataTask``.
///
/// Several handles may share one transfer. Cancelling a handle completes it at once with a
/// `cancelled` error and drops only its callbacks; the transfer stops when its last handle goes.
/// A handle completes exactly once. Callbacks run where the pipeline's
/// ``ImagePipeline/Configuration/callbackDelivery`` says: by default on the pipeline's own threads.
/// Tip: with `.mainActor`, `MainActor.assumeIsolated { … }` inside a callback reaches UI state.
public final class PipelineTask<Response: Sendable>: Sendable, Hashable, Identifiable {
    /// Bytes received and expected (nil when the server did not say).
    public struct Progress: Sendable, Hashable {
        /// Bytes of the body received so far.
        public var receivedBytes: Int64
        /// The body's announced length, or nil when the server did not say.
        public var expectedBytes: Int64?
    }

    /// Called as bytes arrive: `(receivedBytes, expectedBytes, url)`.
    public typealias ProgressHandler = @Sendable (_ receivedBytes: Int64, _ expectedBytes: Int64?, _ url: URL) -> Void
    /// Called once when the handle finishes, fails or is cancelled.
    public typealias Completion = @Sendable (Result<Response, ImagoError>) -> Void
    /// Called with each preview (`isPreview == true`) of an image request with `.previews`.
    public typealias PreviewHandler = @Sendable (ImageResponse) -> Void

    /// What happens to a handle, in order: progress and previews, then `finished` once.
    public enum Event: Sendable {
        /// Bytes arrived.
        case progress(Progress)
        /// A preview of the bytes so far (image requests with `.previews`).
        case preview(ImageResponse)
        /// The handle finished, failed or was cancelled; the last event.
        case finished(Result<Response, ImagoError>)
    }

    private struct State {
        var priority: ImageRequest.Priority
        var progress = Progress(receivedBytes: 0, expectedBytes: nil)
        var result: Result<Response, ImagoError>?
        var onProgress: ProgressHandler?
        var onCompletion: Completion?
        var onPreview: PreviewHandler?
        var waiters: [CheckedContinuation<Result<Response, ImagoError>, Never>] = []
        var streams: [AsyncStream<Event>.Continuation] = []
    }

    /// Unique within the process.
    public let id: UInt64
    /// The request this handle was made for.
    public let request: ImageRequest
    private let pipeline: ImagePipeline
    private let state: Locked<State>
    private var delivery: CallbackDelivery { pipeline.configuration.callbackDelivery }

    init(
        id: UInt64, request: ImageRequest, pipeline: ImagePipeline,
        onProgress: ProgressHandler?, onPreview: PreviewHandler?, onCompletion: Completion?
    ) {
        self.id = id
        self.request = request
        self.pipeline = pipeline
        self.state = Locked(State(priority: request.priority, onProgress: onProgress, onCompletion: onCompletion, onPreview: onPreview))
    }

    /// The handle's events from now on: progress, previews, then `finished`, after which the stream
    /// ends. A stream made after the handle finished yields only `finished`.
    public var events: AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let result = state.withLock { state in
            if state.result == nil { state.streams.append(continuation) }
            return state.result
        }
        if let result {
            continuation.yield(.finished(result))
            continuation.finish()
        }
        return stream
    }

    /// The handle's priority. Changing it re-orders a queued transfer at once; a shared transfer runs
    /// at the highest priority of its handles.
    public var priority: ImageRequest.Priority {
        get { state.withLock { $0.priority } }
        set {
            let changed = state.withLock { state in
                defer { state.priority = newValue }
                return state.result == nil && state.priority != newValue
            }
            if changed { pipeline.setPriority(newValue, of: id) }
        }
    }

    /// The bytes received so far.
    public var progress: Progress { state.withLock { $0.progress } }

    /// Whether the handle has completed (success, failure or cancellation).
    public var isFinished: Bool { state.withLock { $0.result != nil } }

    /// Cancels this handle: it completes now with a `cancelled` error. Other handles sharing its
    /// transfer are not affected; the transfer stops if no handle wants it any more.
    public func cancel() {
        guard !isFinished else { return }
        pipeline.cancelHandle(id) { self.complete(with: .failure(ImagoError(.cancelled, url: request.url))) }
    }

    /// Waits for the result. Cancelling the waiting Swift task cancels this handle.
    public var response: Response {
        get async throws(ImagoError) {
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Result<Response, ImagoError>, Never>) in
                    let result = state.withLock { state in
                        if state.result == nil { state.waiters.append(continuation) }
                        return state.result
                    }
                    if let result { continuation.resume(returning: result) }
                }
            } onCancel: {
                self.cancel()
            }
            return try result.get()
        }
    }

    func reportProgress(received: Int64, expected: Int64?, url: URL) {
        let progress = Progress(receivedBytes: received, expectedBytes: expected)
        let delivery = self.delivery
        let taken = state.withLock { state -> (ProgressHandler?, [AsyncStream<Event>.Continuation])? in
            guard state.result == nil else { return nil }
            state.progress = progress
            // Queued under the lock, so the order of the calls is the order of the events.
            if delivery.isQueued, let handler = state.onProgress { delivery.enqueue { handler(received, expected, url) } }
            return (delivery.isQueued ? nil : state.onProgress, state.streams)
        }
        guard let (handler, streams) = taken else { return }
        for stream in streams { stream.yield(.progress(progress)) }
        handler?(received, expected, url)
    }

    func reportPreview(_ preview: ImageResponse) {
        let delivery = self.delivery
        let taken = state.withLock { state -> (PreviewHandler?, [AsyncStream<Event>.Continuation])? in
            guard state.result == nil else { return nil }
            if delivery.isQueued, let handler = state.onPreview { delivery.enqueue { handler(preview) } }
            return (delivery.isQueued ? nil : state.onPreview, state.streams)
        }
        guard let (handler, streams) = taken else { return }
        for stream in streams { stream.yield(.preview(preview)) }
        handler?(preview)
    }

    /// Completes the handle; only the first call has an effect. Returns whether it was the first.
    @discardableResult
    func complete(with result: Result<Response, ImagoError>) -> Bool {
        let delivery = self.delivery
        let taken = state.withLock {
            state -> (Completion?, [CheckedContinuation<Result<Response, ImagoError>, Never>], [AsyncStream<Event>.Continuation])? in
            guard state.result == nil else { return nil }
            state.result = result
            if delivery.isQueued, let completion = state.onCompletion {
                delivery.enqueue { completion(result) }
                state.onCompletion = nil
            }
            defer {
                state.onProgress = nil
                state.onPreview = nil
                state.onCompletion = nil
                state.waiters = []
                state.streams = []
            }
            return (state.onCompletion, state.waiters, state.streams)
        }
        guard let (completion, waiters, streams) = taken else { return false }
        completion?(result)
        for waiter in waiters { waiter.resume(returning: result) }
        for stream in streams {
            stream.yield(.finished(result))
            stream.finish()
        }
        return true
    }

    /// Handles are equal when they are the same handle.
    public static func == (lhs: PipelineTask, rhs: PipelineTask) -> Bool { lhs === rhs }
    /// Hashes the handle's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
