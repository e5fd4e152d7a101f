import Foundation

/// What a finished image request delivers: the decoded image, the bytes it was decoded from,
/// where they finally came from, and how. A data-only request gets a ``DataResponse``.
public struct ImageResponse: Sendable {
    /// Where the response was served from.
    public enum Source: String, Sendable, Hashable {
        /// A transfer made for this request (or shared with it).
        case network
        /// The memory cache, answered synchronously without a transfer or a decode.
        case memory
        /// The disk cache, fresh (or allowed stale by `returnCacheDataDontLoad`), with no request made.
        case disk
        /// The disk cache, after the origin answered a conditional request with `304 Not Modified`.
        case revalidated
    }

    /// The request as the caller made it.
    public var request: ImageRequest
    /// The decoded image, processed as the request asked.
    public var image: Image
    /// The encoded bytes the image was decoded from; for a source read by ranges
    /// (``rangeReadBytes``), only its first bytes.
    public var data: Data
    /// Bytes read by range requests, when the source was not downloaded whole (a large video,
    /// ``ImagePipeline/Configuration/rangeReadMinimumSize``): ``data`` is then only its first
    /// bytes, and `Content-Length` in ``headers`` the whole source's. Nil: ``data`` is all of it.
    public var rangeReadBytes: Int64?
    /// The URL the bytes came from, after redirects.
    public var url: URL
    /// The HTTP status, or nil for loaders without one: 200 for a disk hit, 304 when revalidated.
    public var statusCode: Int?
    /// The response headers.
    public var headers: HeaderFields
    /// Where the response was served from.
    public var source: Source
    /// True for a preview made from the bytes received so far, given to a request with `.previews`
    /// before its final image.
    public var isPreview = false
    /// True when this request joined a transfer another request had started (coalescing): it
    /// shared that transfer's bytes and decode. Counted in ``ImagePipeline/Statistics/coalesced``.
    public var joinedTransfer = false
    /// When the stages that made this response ran, on the continuous clock.
    public var timings = Timings()
    /// The decode memory this response's image still holds, for a request with
    /// ``ImageRequest/Options/holdsMemory`` that decoded it; nil otherwise.
    public var memoryHold: MemoryHold?

    /// When each stage ran for a response: nil for a stage that did not run for it. A memory-cache
    /// hit ran none; a data-only request is not decoded; a request without processors is not
    /// processed. Handles that shared a transfer, a decode or a variant report the shared one.
    public struct Timings: Sendable, Equatable {
        /// The transfer (from its start to its last byte, retries and revalidation included) or
        /// the disk-cache read.
        public var load: Range<ContinuousClock.Instant>?
        /// The decode, a thumbnail's or a folded resize's resampling included.
        public var decode: Range<ContinuousClock.Instant>?
        /// The processors.
        public var process: Range<ContinuousClock.Instant>?

        /// Timings of the stages given.
        public init(
            load: Range<ContinuousClock.Instant>? = nil, decode: Range<ContinuousClock.Instant>? = nil,
            process: Range<ContinuousClock.Instant>? = nil
        ) {
            self.load = load
            self.decode = decode
            self.process = process
        }
    }
}
