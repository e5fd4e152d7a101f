import HTTPTypes
import NIOCore

/// A kept variant's answer to a path, its header fields made once when the path is first
/// answered: a repeat only chooses 200, 304 or a `HEAD`'s empty body, and adds `Date`, `Server`
/// and `X-Request-Id`. Made for one variant's bytes (``etag`` and ``length``); a variant made again
/// with other bytes gets a new one.
struct PreparedAnswer: Sendable {
    let etag: String
    let length: Int
    /// The fields of a 200.
    let fields: HTTPFields
    /// The fields of a 304: the validator and caching fields only.
    let notModifiedFields: HTTPFields

    init(_ variant: EncodedVariant, cacheControl: String, varies: Bool, delivery: DeliveryHeaders) {
        etag = variant.etag
        length = variant.body.readableBytes
        var fields = HTTPFields()
        fields[.eTag] = variant.etag
        let cacheControl = delivery.cacheControl ?? cacheControl
        if !cacheControl.isEmpty { fields[.cacheControl] = cacheControl }
        if varies { fields[.vary] = "Accept" }
        notModifiedFields = fields
        fields[.contentType] = variant.format.mimeType
        fields[.contentLength] = String(length)
        if let disposition = delivery.contentDisposition(defaultExtension: variant.format.fileExtension),
            let name = HTTPField.Name("Content-Disposition")
        {
            fields[name] = disposition
        }
        self.fields = fields
    }

    /// Whether this was made for `variant`'s bytes.
    func fits(_ variant: EncodedVariant) -> Bool { etag == variant.etag && length == variant.body.readableBytes }

    /// The answer to `request`: 304 when its `If-None-Match` names the ETag, else the variant
    /// (without its body for `HEAD`).
    func response(_ variant: EncodedVariant, to request: ServiceRequest) -> ServiceResponse {
        if let ifNoneMatch = request.ifNoneMatch, ServiceResponse.matches(ifNoneMatch, etag) {
            return ServiceResponse(status: 304, prepared: notModifiedFields, body: ByteBuffer())
        }
        return ServiceResponse(status: 200, prepared: fields, body: request.isHead ? ByteBuffer() : variant.body)
    }
}
