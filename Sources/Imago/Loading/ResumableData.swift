import Foundation

/// The first bytes of a body whose transfer broke off, with the validator of the response they
/// came from, so that a later request for the same URL asks only for the rest: `Range: bytes=N-`
/// with `If-Range: <validator>` (RFC 9110 §14.2, §13.1.5). The server answers `206` with the rest
/// of the same version, or `200` with a whole new body; bytes of two versions are never joined.
///
/// Kept only for a response that can be resumed: a `200` saying `Accept-Ranges: bytes`, with no
/// content coding (ranges count coded bytes), not `no-store`, with a strong `ETag` or a
/// `Last-Modified` date, and fewer bytes than it announced.
struct ResumableData: Sendable, Equatable {
    /// The body's first bytes.
    var data: Data
    /// The `ETag` (strong) or `Last-Modified` of the response they came from.
    var validator: String

    /// A validator longer than this is not kept: it would go into a request header.
    static let maxValidatorLength = 512

    init?(data: Data, validator: String) {
        guard !data.isEmpty, Self.isValidValidator(validator) else { return nil }
        self.data = data
        self.validator = validator
    }

    /// What can be resumed of `data`, the bytes received of `response`; nil when nothing can.
    init?(response: ResponseHead, data: Data) {
        guard !data.isEmpty else { return nil }
        if let expected = response.expectedContentLength, Int64(data.count) >= expected { return nil }
        guard let validator = Self.validator(of: response) else { return nil }
        self.init(data: data, validator: validator)
    }

    /// The validator a later range request of `response`'s body names in `If-Range`, when the body
    /// can be read by ranges: a `200` (or a local file's) saying `Accept-Ranges: bytes`, not `no-store`, with no
    /// content coding, with a strong `ETag` or a `Last-Modified` date; else nil.
    static func validator(of response: ResponseHead) -> String? {
        // A local file's answer has no status; ``FileDataLoader`` reads ranges as a server does.
        guard response.statusCode == 200 || (response.statusCode == nil && response.url.isFileURL) else { return nil }
        let headers = response.headers
        guard let ranges = headers["Accept-Ranges"],
            ranges.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes" })
        else { return nil }
        // `no-store`: no cache may keep any of it.
        if let control = headers["Cache-Control"], HTTPFreshness.directives(control).keys.contains("no-store") { return nil }
        if let coding = headers["Content-Encoding"], coding.trimmingCharacters(in: .whitespaces).lowercased() != "identity" { return nil }
        // A weak ETag may not go in If-Range; a date may (the server compares it exactly).
        let etag = headers["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        guard let validator = etag ?? headers["Last-Modified"], isValidValidator(validator) else { return nil }
        return validator
    }

    /// Whether `validator` may go into an `If-Range` header: visible ASCII and spaces, bounded.
    /// Checked for bytes read back from a cache too, which may be hostile.
    static func isValidValidator(_ validator: String) -> Bool {
        !validator.isEmpty && validator.utf8.count <= maxValidatorLength && validator.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// Whether the validator is an entity tag (else a date).
    var isEntityTag: Bool { validator.hasPrefix("\"") }

    /// The headers that ask for the rest of the body, replacing any range the request had.
    func requestHeaders(_ headers: HeaderFields) -> HeaderFields {
        var headers = headers
        headers.remove("Range")
        headers.remove("If-Range")
        headers.append(name: "Range", value: "bytes=\(data.count)-")
        headers.append(name: "If-Range", value: validator)
        return headers
    }

    /// The response the joined body answers: `partial`, a `206` carrying the rest of the body,
    /// made a `200` for the whole of it. Throws `invalidResponse` when the `206` is not exactly the
    /// rest of this version (another start, a part short of the end, an unknown total, another
    /// validator): nothing of it is joined.
    func joined(with partial: ResponseHead) throws(ImagoError) -> ResponseHead {
        let refused = ImagoError(.invalidResponse, url: partial.url)
        guard let range = partial.headers["Content-Range"].flatMap(ContentRange.init), range.first == Int64(data.count), let total = range.total,
            range.last == total - 1
        else { throw refused }
        if let length = partial.expectedContentLength, length != total - range.first { throw refused }
        let headers = partial.headers
        if isEntityTag, let etag = headers["ETag"], etag != validator { throw refused }
        if !isEntityTag, let lastModified = headers["Last-Modified"], lastModified != validator { throw refused }
        var joined = headers
        joined.remove("Content-Range")
        joined.remove("Content-Length")
        joined.append(name: "Content-Length", value: String(total))
        // The server has just served a range: a later break can resume too.
        if joined["Accept-Ranges"] == nil { joined.append(name: "Accept-Ranges", value: "bytes") }
        if joined["ETag"] == nil, isEntityTag { joined.append(name: "ETag", value: validator) }
        if joined["Last-Modified"] == nil, !isEntityTag { joined.append(name: "Last-Modified", value: validator) }
        return ResponseHead(url: partial.url, statusCode: 200, headers: joined, expectedContentLength: total)
    }
}

/// `Content-Range: bytes first-last/total` (total `*` when unknown), RFC 9110 §14.4.
struct ContentRange: Equatable {
    var first: Int64
    var last: Int64
    var total: Int64?

    init?(_ header: String) {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        let bounds = spec[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last else { return nil }
        let total: Int64?
        if spec[1] == "*" {
            total = nil
        } else {
            guard let value = Self.number(spec[1]), last < value else { return nil }
            total = value
        }
        self.first = first
        self.last = last
        self.total = total
    }

    /// Decimal digits only (no sign, no spaces), as the grammar says.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }
}
