import Foundation

/// The one place where what the transfer state machine decided is carried out. A change runs
/// under the pipeline's lock and returns actions; ``transition(_:)`` performs them after the lock,
/// then resumes `waitUntilIdle` callers, as AsyncHTTPClient runs its state machines' actions. No
/// loader, callback or cancellation handler ever runs under the lock.
extension ImagePipeline {
    /// What the pipeline does after a change of its transfers.
    enum TransferAction {
        /// Start these downloads, each a task holding a slot.
        case startDownloads([Transfers.Start])
        /// Look for a new transfer's original on disk, on the cache stage.
        case lookUpOriginal(transferID: UInt64, request: ImageRequest)
        /// A handle joined a transfer under way: tell the observers.
        case reportCoalesced(URL)
        /// Stop a download whose handles all left before its task was recorded.
        case cancelJob(RunningDownload)
        /// A handle left its transfer: stop the download when it was the last handle, complete
        /// the handle with `cancelled`, and report the stop.
        case cancelled(Transfers.Cancellation)
    }

    /// Changes the state under the lock, then carries out the actions the change returned.
    func transition(_ change: (inout State) -> [TransferAction]) {
        updateState(change, afterwards: perform)
    }

    /// ``transition(_:)`` for a change that also answers a value.
    func transition<Value>(_ change: (inout State) -> (Value, [TransferAction])) -> Value {
        updateState(change) { perform($0.1) }.0
    }

    private func perform(_ actions: [TransferAction]) {
        for action in actions {
            switch action {
            case .startDownloads(let starts): startDownloads(starts)
            case .lookUpOriginal(let transferID, let request): lookUpOriginal(transferID, request: request)
            case .reportCoalesced(let url): observers.coalesced(url)
            case .cancelJob(let job): job.cancel()
            case .cancelled(let cancellation):
                cancellation.job?.cancel()
                cancellation.handle.fail(ImagoError(.cancelled, url: cancellation.handle.request.url))
                if let stopped = cancellation.stoppedRequest { observers.stopped(stopped.url) }
            }
        }
    }
}
