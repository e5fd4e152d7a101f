import Foundation

/// Where made variants are kept for every node of a fleet (``SharedStorage``): a folder or an
/// object store, named by object names the storage makes (`prefix/ab/abcdef…`). A store only moves
/// bytes; what they must be to be read is ``StoredObject``'s rule.
protocol SharedStore: Sendable {
    /// The object's bytes, nil when there is none. More than `maxBytes` is an error, as is any
    /// failure of the store.
    func read(_ name: String, maxBytes: Int) async throws -> Data?
    /// Writes `data` as `name`, whole or not at all, replacing what was there.
    func write(_ name: String, _ data: Data) async throws
    /// Writes `data` as `name` only when no object has that name (a lease): false when one has,
    /// and nothing is written. Two nodes creating the same name at once: one gets true.
    func create(_ name: String, _ data: Data) async throws -> Bool
    /// Whether ``create(_:_:)`` lets exactly one of two concurrent creates through (S3's
    /// conditional `PUT`, `O_EXCL`). Swift checks `If-None-Match: *` when a `PUT` begins, so two
    /// that overlap both succeed and the later one's bytes stay: a lease there is read back.
    var createIsExclusive: Bool { get }
    /// Removes `name` (an expired or unreadable object); none there is no error.
    func remove(_ name: String) async throws
    /// The store as logs name it (`s3://bucket/prefix`), without any credential.
    var description: String { get }
}
