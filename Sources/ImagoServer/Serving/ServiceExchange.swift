import Foundation
import HTTPTypes
import Imago
import NIOCore

/// What the service needs of an HTTP request.
public struct ServiceRequest: Sendable {
    /// `GET` or `HEAD`.
    public var method: String
    /// The path, percent-encoding kept, without the query.
    public var path: String
    /// The `Accept` header, which picks the format when the URL names none.
    public var accept: String?
    /// The `If-None-Match` header, answered with `304` when it names the variant's ETag.
    public var ifNoneMatch: String?
    /// The client's `X-Request-Id`, kept when it is short and plain; otherwise one is made.
    public var requestID: String?
    /// The `Authorization` header, checked against the server's secret when it has one.
    public var authorization: String?
    /// The request's header fields, for those read only when a setting needs them (kept, not
    /// searched: a kept answer reads none of them).
    var fields = HTTPFields()
    /// The authority the request named (its `Host`).
    var authority: String?

    /// The client hint `Sec-CH-DPR`, else `DPR` (imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`).
    public var dprHint: String? { fields[Self.secCHDPR] ?? fields[Self.dpr] }
    /// The client hint `Sec-CH-Width`, else `Width`.
    public var widthHint: String? { fields[Self.secCHWidth] ?? fields[Self.width] }
    /// The `If-Modified-Since` header, answered when the answer carries `Last-Modified`.
    public var ifModifiedSince: String? { fields[.ifModifiedSince] }
    /// The `Cookie` header, passed on to sources with imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH`.
    public var cookie: String? { fields[.cookie] }
    /// The host the client asked (`X-Forwarded-Host`, else `Host`): whose cookies the request
    /// carries.
    public var host: String? { fields[Self.forwardedHost] ?? authority }

    static let secCHDPR = HTTPField.Name("Sec-CH-DPR")!
    static let dpr = HTTPField.Name("DPR")!
    static let secCHWidth = HTTPField.Name("Sec-CH-Width")!
    static let width = HTTPField.Name("Width")!
    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!

    /// Makes a request.
    public init(
        method: String = "GET", path: String, accept: String? = nil, ifNoneMatch: String? = nil, requestID: String? = nil, authorization: String? = nil
    ) {
        self.method = method
        self.path = path
        self.accept = accept
        self.ifNoneMatch = ifNoneMatch
        self.requestID = requestID
        self.authorization = authorization
    }

    var isHead: Bool { method.uppercased() == "HEAD" }
}

/// The service's answer: status, headers and body (empty for `HEAD` and `304`, whose
/// `Content-Length` still names the image's).
public struct ServiceResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The headers, in order.
    public var headers: HeaderFields
    /// The body: a kept variant's bytes are shared, not copied, by every answer that sends them.
    public var body: ByteBuffer
    /// Header fields made once for a kept variant (``PreparedAnswer``), sent before ``headers``.
    var prepared: HTTPFields?
    /// ``prepared`` as HTTP/1.1 header lines, made with it (``PreparedAnswer/lines``).
    var preparedLines: ByteBuffer?

    init(status: Int, headers: HeaderFields = [:], body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    init(status: Int, prepared: HTTPFields, lines: ByteBuffer? = nil, body: ByteBuffer) {
        self.status = status
        self.headers = [:]
        self.prepared = prepared
        self.preparedLines = lines
        self.body = body
    }

    static func error(_ error: ServerError, head: Bool) -> ServiceResponse {
        let text = Data((error.message + "\n").utf8)
        var headers: HeaderFields = ["Content-Type": "text/plain; charset=utf-8", "Content-Length": String(text.count), "Cache-Control": "no-store"]
        if let retryAfter = error.retryAfter { headers.append(name: "Retry-After", value: String(retryAfter)) }
        return ServiceResponse(status: error.status, headers: headers, body: head ? ByteBuffer() : ByteBuffer(bytes: text))
    }

    /// `If-None-Match`: `*`, or any listed tag equal to ours (weak comparison, as RFC 9110 asks).
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }
}
