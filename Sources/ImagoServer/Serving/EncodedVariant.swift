import Foundation

/// A processed, encoded image ready to send, and its strong validator.
public struct EncodedVariant: Sendable {
    /// The encoded bytes.
    public var data: Data
    /// The format they are in.
    public var format: OutputFormat
    /// A strong ETag (quoted): a digest of the source's validators (or bytes), the options and
    /// the format.
    public var etag: String
}
