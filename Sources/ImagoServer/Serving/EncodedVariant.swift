import Foundation
import NIOCore

/// A processed, encoded image ready to send, and its strong validator.
public struct EncodedVariant: Sendable {
    /// The encoded bytes, as every answer sends them: a `ByteBuffer` is shared, not copied, by each
    /// response that writes it.
    public var body: ByteBuffer
    /// The format they are in.
    public var format: OutputFormat
    /// A strong ETag (quoted): a digest of the source's validators (or bytes), the options and
    /// the format.
    public var etag: String

    /// A variant of these bytes.
    public init(data: Data, format: OutputFormat, etag: String) {
        self.body = ByteBuffer(bytes: data)
        self.format = format
        self.etag = etag
    }

    /// The encoded bytes as `Data` (a copy).
    public var data: Data { Data(body.readableBytesView) }
}
