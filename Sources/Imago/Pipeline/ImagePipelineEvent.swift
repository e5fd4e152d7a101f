import Foundation

extension ImagePipeline {
    /// What happens to transfers, for observers (SDWebImage's download start / receive response /
    /// stop / finish notifications).
    public enum Event: Sendable {
        /// A transfer started (left the queue).
        case started(url: URL)
        /// A handle joined a transfer already queued or running.
        case coalesced(url: URL)
        /// The transfer received its response head.
        case receivedResponse(url: URL, statusCode: Int?, expectedBytes: Int64?)
        /// The transfer stopped because every handle was cancelled.
        case stopped(url: URL)
        /// The transfer ended: the byte count, or the error.
        case finished(url: URL, result: Result<Int, ImagoError>)
    }

    /// Counts since the pipeline was made.
    public struct Statistics: Sendable, Hashable {
        /// Requests actually made to loaders (the network, files, `data:`), conditional ones included.
        public var transfers = 0
        /// Handles that joined a transfer already queued or running instead of starting one.
        public var coalesced = 0
        /// Body bytes received by all transfers.
        public var bytes: Int64 = 0
        /// Transfers that failed (not counting those stopped by cancellation).
        public var errors = 0
        /// Transfers stopped because all their handles were cancelled.
        public var stopped = 0
        /// Image requests answered from the memory cache.
        public var memoryHits = 0
        /// Transfers answered from the disk cache without a request.
        public var diskHits = 0
        /// Transfers answered from the disk cache after a `304 Not Modified`.
        public var revalidated = 0
        /// Images decoded (previews not counted): one per transfer, however many variants it serves.
        public var decodes = 0
        /// Variants made by processors, each once per transfer.
        public var processed = 0
        /// Transfers tried again after a transient failure (``RetryPolicy``), one per retry.
        public var retries = 0
        /// Transfers that asked only for the rest of kept bytes and joined it to them (a `206`).
        public var resumed = 0
    }
}
