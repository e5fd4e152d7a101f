import Foundation

/// What the pipeline needs of a cache of original bytes: ``DiskCache`` is Imago's, on local disk;
/// implement this to plug in another tier (a cache shared by several hosts, say). The pipeline
/// applies HTTP caching over it (``ImagePipeline/Configuration/diskCache``): it decides freshness
/// from the metadata, and writes only bytes that decoded.
///
/// Every byte an implementation returns is treated as untrusted, as the network's are.
public protocol DiskCaching: Sendable {
    /// The entry stored under `key`, or nil. Called on the pipeline's cache stage, never on Swift's
    /// cooperative pool, so it may block on I/O.
    func entry(for key: String) -> DiskCache.Entry?
    /// Stores `data` under `key`, replacing what was there.
    func store(_ data: Data, for key: String, metadata: DiskCache.Metadata)
    /// Replaces the metadata of the entry under `key`, keeping its bytes (after a `304`).
    func refresh(_ metadata: DiskCache.Metadata, for key: String)
    /// Removes the entry under `key`.
    func remove(_ key: String)
    /// Returns once every change made so far is stored.
    func flush()
}

extension DiskCache: DiskCaching {}
