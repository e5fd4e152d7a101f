import Foundation

/// What a finished data-only request (``ImagePipeline/data(for:)``, ``ImagePipeline/dataTask(with:completion:progress:)``)
/// delivers: the bytes, not decoded, where they finally came from, and how.
public struct DataResponse: Sendable {
    /// The request as the caller made it.
    public var request: ImageRequest
    /// The bytes, as the loader or the disk cache gave them.
    public var data: Data
    /// The URL the bytes came from, after redirects.
    public var url: URL
    /// The HTTP status, or nil for loaders without one: 200 for a disk hit, 304 when revalidated.
    public var statusCode: Int?
    /// The response headers.
    public var headers: HeaderFields
    /// Where the response was served from (never the memory cache, which holds images).
    public var source: ImageResponse.Source
    /// True when this request joined a transfer another request had started (coalescing).
    public var joinedTransfer = false
    /// When the transfer or the disk-cache read ran, on the continuous clock.
    public var loadTime: Range<ContinuousClock.Instant>?
}
