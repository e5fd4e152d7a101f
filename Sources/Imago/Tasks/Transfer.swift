import Foundation

/// One transfer shared by every handle whose request has its key (coalescing).
/// Lives in the pipeline's locked state; the pipeline is its only writer.
struct Transfer {
    enum Phase {
        /// Waiting in the download queue; `token` tells its current queue entry from stale ones.
        case queued(token: UInt64)
        /// Loading; cancelling both stops the loader wherever it is waiting.
        case running(task: Task<Void, Never>, sink: DataSink)
        /// Downloaded, its slot given back, decoding once for every handle that wants an image;
        /// still joinable, so a late request shares the decode.
        case decoding
    }

    let id: UInt64
    let key: ImageRequest.TransferKey
    /// The request of the handle that created the transfer; it decides how the bytes are fetched.
    let request: ImageRequest
    var handles: [UInt64: (task: ImageTask, priority: ImageRequest.Priority)] = [:]
    var priority: ImageRequest.Priority
    var phase: Phase
    /// Previews: the decoder's memory of what it showed, whether one is being made, and when the
    /// last was delivered.
    var previewDecoder: PreviewDecoder
    var isMakingPreview = false
    var lastPreview: ContinuousClock.Instant?

    /// Whether any handle wants previews.
    var wantsPreviews: Bool {
        handles.values.contains { $0.task.decodes && $0.task.request.options.contains(.previews) }
    }

    /// The highest priority among the handles, which the transfer runs at.
    var handlesPriority: ImageRequest.Priority {
        handles.values.map(\.priority).max() ?? priority
    }

    var isQueued: Bool {
        if case .queued = phase { return true }
        return false
    }
}
