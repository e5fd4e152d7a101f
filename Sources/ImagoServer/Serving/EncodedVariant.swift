import Foundation
import Imago
import NIOCore

/// An answer's bytes ready to send, and its strong validator: an encoded image, JSON facts, or a
/// source's own bytes passed through (`raw`, `skip_processing`, a sanitised SVG).
public struct EncodedVariant: Sendable {
    /// The bytes, as every answer sends them: a `ByteBuffer` is shared, not copied, by each
    /// response that writes it.
    public var body: ByteBuffer
    /// Their media type, for `Content-Type`.
    public var mimeType: String
    /// The file name extension `Content-Disposition` gives them.
    public var fileExtension: String
    /// A strong ETag (quoted): a digest of the source's validators (or bytes), the options and
    /// the format.
    public var etag: String
    /// The source's bytes and size and the result's size, when this process made the image:
    /// imgproxy's debug headers (``ServerConfiguration/sendsDebugHeaders``).
    var made: MadeFacts?
    /// The source's own caching fields, which imgproxy's answers may carry
    /// (``ServerConfiguration/sendsLastModified``, ``ServerConfiguration/passesSourceCacheControl``).
    var sourceCaching = SourceCaching()

    /// A source's `Last-Modified`, `Cache-Control` and `Expires`, as it sent them.
    struct SourceCaching: Sendable, Equatable {
        var lastModified: String?
        var cacheControl: String?
        var expires: String?

        init(lastModified: String? = nil, cacheControl: String? = nil, expires: String? = nil) {
            (self.lastModified, self.cacheControl, self.expires) = (lastModified, cacheControl, expires)
        }

        /// Those of `headers`; a value that could break a header line is left out.
        init(_ headers: HeaderFields) {
            func plain(_ name: String) -> String? {
                headers[name].flatMap { value in value.utf8.count <= 1_024 && !value.contains(where: { $0 == "\r" || $0 == "\n" }) ? value : nil }
            }
            self.init(lastModified: plain("Last-Modified"), cacheControl: plain("Cache-Control"), expires: plain("Expires"))
        }
    }

    /// What making an image saw: imgproxy's `X-Origin-*` and `X-Result-*` debug headers.
    struct MadeFacts: Sendable {
        var sourceBytes: Int
        var sourceWidth: Int
        var sourceHeight: Int
        var width: Int
        var height: Int

        /// The debug header fields.
        var fields: [(String, String)] {
            [
                ("X-Origin-Content-Length", "\(sourceBytes)"), ("X-Origin-Width", "\(sourceWidth)"), ("X-Origin-Height", "\(sourceHeight)"),
                ("X-Result-Width", "\(width)"), ("X-Result-Height", "\(height)"),
            ]
        }
    }

    /// A variant of these bytes in `format`.
    public init(data: Data, format: OutputFormat, etag: String) {
        self.init(data: data, mimeType: format.mimeType, fileExtension: format.fileExtension, etag: etag)
    }

    /// A variant of these bytes of `mimeType`, named with `fileExtension`.
    public init(data: Data, mimeType: String, fileExtension: String, etag: String) {
        self.body = ByteBuffer(bytes: data)
        self.mimeType = mimeType
        self.fileExtension = fileExtension
        self.etag = etag
    }

    /// A source's own bytes, answered as they came: the type and extension of the format the
    /// bytes are (`sniffed`), else what the source said, else `application/octet-stream` and `bin`.
    static func passedThrough(_ data: Data, sniffed: ImageFormat?, headers: HeaderFields) -> EncodedVariant {
        var variant = EncodedVariant(
            data: data, mimeType: sniffed?.info?.mimeType ?? headers["Content-Type"] ?? "application/octet-stream",
            fileExtension: sniffed?.info?.extensions.first ?? "bin", etag: ImageService.etag(sourceBytes: data, format: ""))
        variant.sourceCaching = SourceCaching(headers)
        return variant
    }

    /// A variant kept on a disk or in a store: its bytes, type, ETag and the source's `Last-Modified`.
    static func stored(_ data: Data, mimeType: String, etag: String, lastModified: String?) -> EncodedVariant {
        let fileExtension = OutputFormat(mimeType: mimeType)?.fileExtension ?? ImageFormat.table.first { $0.mimeType == mimeType }?.extensions.first ?? "bin"
        var variant = EncodedVariant(data: data, mimeType: mimeType, fileExtension: fileExtension, etag: etag)
        variant.sourceCaching.lastModified = lastModified
        return variant
    }

    /// The encoded bytes as `Data` (a copy).
    public var data: Data { Data(body.readableBytesView) }
}
