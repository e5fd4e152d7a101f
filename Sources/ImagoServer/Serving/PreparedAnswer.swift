import Foundation
import HTTPTypes
import Imago
import NIOCore

/// An image answer's header fields, made once: for a kept variant when its path is first
/// answered (a repeat only chooses 200, 304 or a `HEAD`'s empty body, and adds `Date`, `Server`
/// and `X-Request-Id`), and for a source's bytes sent as they came. Made for one body's bytes
/// (``etag`` and ``length``); a variant made again with other bytes gets a new one.
struct PreparedAnswer: Sendable {
    let etag: String
    let length: Int
    /// Whether the ETag is sent and `If-None-Match` answered.
    let sendsETag: Bool
    /// The `Last-Modified` sent, which `If-Modified-Since` is answered by; nil when none is.
    let lastModified: Date?
    /// The fields of a 200.
    let fields: HTTPFields
    /// The fields of a 304: the validator and caching fields only.
    let notModifiedFields: HTTPFields
    /// ``fields`` and ``notModifiedFields`` as HTTP/1.1 header lines, which the kept answers'
    /// path writes to the socket as they are (``KeptVariantHandler``).
    let lines: ByteBuffer
    let notModifiedLines: ByteBuffer

    /// The answer of a kept variant: its format's type and extension, `delivery`'s
    /// `Cache-Control` (else the source's when it is passed through, else `cacheControl`),
    /// `Content-Disposition`, and the source's `Last-Modified` when it is sent.
    init(_ variant: EncodedVariant, cacheControl: String, varies: Bool, delivery: DeliveryHeaders) {
        var cacheControl = delivery.cacheControl ?? cacheControl
        var extra = delivery.sendsDebugHeaders ? variant.made?.fields ?? [] : []
        let source = variant.sourceCaching
        if delivery.cacheControl == nil, delivery.passesSourceCacheControl {
            if let passed = source.cacheControl {
                cacheControl = passed
            } else if let expires = source.expires {
                // The source's own expiry in place of the server's lifetime.
                cacheControl = ""
                extra.append(("Expires", expires))
            }
        }
        var lastModified: Date?
        if delivery.sendsLastModified, let date = source.lastModified.flatMap({ HTTPDate.parse($0) }) {
            lastModified = max(date, delivery.lastModifiedBuster ?? date)
        }
        self.init(
            length: variant.body.readableBytes, mimeType: variant.mimeType, etag: variant.etag, cacheControl: cacheControl,
            vary: [varies ? "Accept" : nil, delivery.variesWithClientHints ? "Sec-CH-DPR, DPR, Sec-CH-Width, Width" : nil].compactMap { $0 }
                .joined(separator: ", "), disposition: delivery.contentDisposition(defaultExtension: variant.fileExtension), link: delivery.canonicalLink,
            sendsETag: delivery.sendsETag, lastModified: lastModified, extra: extra)
    }

    /// The answer of `length` bytes of `mimeType`.
    init(
        length: Int, mimeType: String, etag: String, cacheControl: String, vary: String, disposition: String?, link: String? = nil, sendsETag: Bool = true,
        lastModified: Date? = nil, extra: [(String, String)] = []
    ) {
        self.etag = etag
        self.length = length
        self.sendsETag = sendsETag
        self.lastModified = lastModified
        var fields = HTTPFields()
        if sendsETag { fields[.eTag] = etag }
        if let lastModified { fields[.lastModified] = HTTPDate.format(lastModified) }
        if !cacheControl.isEmpty { fields[.cacheControl] = cacheControl }
        if !vary.isEmpty { fields[.vary] = vary }
        notModifiedFields = fields
        fields[.contentType] = mimeType
        fields[.contentLength] = String(length)
        if let disposition, let name = HTTPField.Name("Content-Disposition") { fields[name] = disposition }
        if let link, let name = HTTPField.Name("Link") { fields[name] = link }
        for (name, value) in extra { if let name = HTTPField.Name(name) { fields[name] = value } }
        self.fields = fields
        lines = Self.lines(fields)
        notModifiedLines = Self.lines(notModifiedFields)
    }

    /// `fields` as HTTP/1.1 header lines, each `Name: value` and CRLF, names as they were given
    /// (as NIO's encoder writes them).
    static func lines(_ fields: HTTPFields) -> ByteBuffer {
        var buffer = ByteBuffer()
        for field in fields {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        return buffer
    }

    /// Whether this was made for `variant`'s bytes.
    func fits(_ variant: EncodedVariant) -> Bool { etag == variant.etag && length == variant.body.readableBytes }

    /// The answer to `request`: 304 when its `If-None-Match` names the ETag, or, without one,
    /// when its `If-Modified-Since` is no earlier than `Last-Modified` (RFC 9110 §13.2.2); else
    /// `body` (none for `HEAD`).
    func response(_ body: ByteBuffer, to request: ServiceRequest) -> ServiceResponse {
        if sendsETag, let ifNoneMatch = request.ifNoneMatch {
            if ServiceResponse.matches(ifNoneMatch, etag) {
                return ServiceResponse(status: 304, prepared: notModifiedFields, lines: notModifiedLines, body: ByteBuffer())
            }
        } else if let lastModified, let since = request.ifModifiedSince.flatMap({ HTTPDate.parse($0) }), lastModified <= since {
            return ServiceResponse(status: 304, prepared: notModifiedFields, lines: notModifiedLines, body: ByteBuffer())
        }
        return ServiceResponse(status: 200, prepared: fields, lines: lines, body: request.isHead ? ByteBuffer() : body)
    }
}
