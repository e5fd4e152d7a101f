import Imago

/// What the service keeps in memory between requests, read at each `/metrics` scrape: bytes by part,
/// and entries by kind for the structures whose bytes are not counted one by one. Each has a bound:
/// the byte parts are within `--memory-bytes` (thumbor's overlays within 16 MB of their own, the
/// disk cache's queued writes within 64 MB); the entries are bounded by count.
public struct MemoryReport: Sendable {
    /// Bytes by part: `variants`, `paths`, `resumable` (within ``ServerConfiguration/memoryBytes``),
    /// `overlays` (thumbor's watermark and frame images), `disk_pending` (payloads queued for the
    /// disk cache's writer).
    public var bytes: [(part: String, bytes: Int)]
    /// Entries by kind: kept `variants` and `paths`; `disk_rows` (the disk cache's remembered index
    /// rows, at most 16,384 of about 200 bytes); `connections` (idle keep-alive and HTTP/2
    /// connections to sources, at most 32 idle per origin, closed after a minute idle);
    /// `color_transforms` and `color_profiles` (the process's colour caches, at most 64 each).
    public var entries: [(kind: String, count: Int)]

    /// The bytes of `part`, or nil when the report has no such part.
    public func bytes(of part: String) -> Int? {
        bytes.first { $0.part == part }?.bytes
    }

    /// The entries of `kind`, or nil when the report has no such kind.
    public func entries(of kind: String) -> Int? {
        entries.first { $0.kind == kind }?.count
    }
}
