import Foundation

/// The one error type Imago throws: what went wrong (`code`), at which stage, for which URL, and why.
///
/// Its `description` reads as a sentence a user can act on, for example
/// `loading http://127.0.0.1:8080/a.jpg failed: HTTP status 404`.
public struct ImagoError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable {
        /// The caller cancelled the request.
        case cancelled
        /// No byte arrived within the configured time, or the total deadline passed.
        case timedOut
        /// The body arrived slower, on average, than the configured minimum rate.
        case tooSlow(minimumBytesPerSecond: Int)
        /// A redirect pointed at a URL whose scheme is not http or https.
        case redirectToUnsupportedScheme(String)
        /// The address a host name resolved to (or an address in the URL) is refused by the
        /// configuration's ``AddressPolicy``.
        case addressRefused(host: String, address: String)
        /// The server answered with a status that is not a success (>= 400, or an unexpected 1xx/3xx).
        case httpStatus(Int)
        /// The server answered `304 Not Modified` and there is no cached copy to serve.
        case notModified
        /// The response is larger than the configured maximum (from Content-Length or counted bytes).
        case tooLarge(limit: Int64)
        /// The response had no body.
        case emptyResponse
        /// The connection closed before the whole body arrived.
        case truncated(received: Int64, expected: Int64?)
        /// The peer reset the connection.
        case connectionReset
        /// The connection could not be made (refused, unreachable, DNS).
        case connectionFailed
        /// The TLS handshake failed, for example an untrusted certificate.
        case tlsFailure
        /// More redirects than allowed.
        case tooManyRedirects(Int)
        /// A redirect led back to a URL already visited.
        case redirectLoop
        /// A redirect from https to http, which Imago never follows.
        case insecureRedirect
        /// The response could not be parsed as HTTP.
        case invalidResponse
        /// No registered loader can load this URL (unknown scheme).
        case noLoader
        /// The URL cannot be loaded as written (for example a malformed `data:` URI).
        case invalidURL
        /// A `file://` URL names a file that does not exist or cannot be read.
        case fileNotFound
        /// A loader failed for a reason none of the other codes name; see `underlying`.
        case loaderFailed
        /// No decoder recognises the bytes; carries the first bytes seen, in hex.
        case unsupportedFormat(firstBytes: String)
        /// The bytes claim a format but are corrupt or truncated; carries the codec's message.
        case invalidImage(String)
        /// The image (of the size it declares) goes over a decoding limit, which `limit` names.
        case imageTooLarge(width: Int, height: Int, limit: DecodingLimit)
        /// The image declares zero pixels (a side of 0).
        case emptyImage(width: Int, height: Int)
        /// `returnCacheDataDontLoad` and neither cache holds the image.
        case notCached
        /// A processor could not make its image; carries why.
        case processingFailed(String)
    }

    /// The part of the pipeline where the error happened.
    public enum Stage: String, Sendable, Hashable {
        case loading
        case decoding
        case caching
        case processing
    }

    /// What went wrong.
    public var code: Code
    /// The URL being loaded.
    public var url: URL?
    /// Where in the pipeline it went wrong.
    public var stage: Stage
    /// The lower-level error, when there is one (an AsyncHTTPClient or NIO error, say).
    public var underlying: (any Error & Sendable)?

    /// Makes an error.
    public init(_ code: Code, url: URL?, stage: Stage = .loading, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.url = url
        self.stage = stage
        self.underlying = underlying
    }

    /// A short, stable name for the code, used in logs, metrics dimensions and JSON output.
    public var kind: String {
        switch code {
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .tooSlow: "tooSlow"
        case .redirectToUnsupportedScheme: "redirectToUnsupportedScheme"
        case .addressRefused: "addressRefused"
        case .httpStatus: "httpStatus"
        case .notModified: "notModified"
        case .tooLarge: "tooLarge"
        case .emptyResponse: "emptyResponse"
        case .truncated: "truncated"
        case .connectionReset: "connectionReset"
        case .connectionFailed: "connectionFailed"
        case .tlsFailure: "tlsFailure"
        case .tooManyRedirects: "tooManyRedirects"
        case .redirectLoop: "redirectLoop"
        case .insecureRedirect: "insecureRedirect"
        case .invalidResponse: "invalidResponse"
        case .noLoader: "noLoader"
        case .invalidURL: "invalidURL"
        case .fileNotFound: "fileNotFound"
        case .loaderFailed: "loaderFailed"
        case .unsupportedFormat: "unsupportedFormat"
        case .invalidImage: "invalidImage"
        case .imageTooLarge: "imageTooLarge"
        case .emptyImage: "emptyImage"
        case .notCached: "notCached"
        case .processingFailed: "processingFailed"
        }
    }

    /// True when the request was cancelled by its caller.
    public var isCancelled: Bool { code == .cancelled }

    public var description: String {
        let target = url?.redactedString ?? "(no URL)"
        var text = "\(stage.rawValue) \(target) failed: \(cause)"
        if let underlying { text += " (\(underlying))" }
        return text
    }

    private var cause: String {
        switch code {
        case .cancelled: "cancelled"
        case .timedOut: "timed out"
        case .tooSlow(let rate): "the body arrived slower than the minimum of \(rate) bytes/s"
        case .redirectToUnsupportedScheme(let scheme): "refused a redirect to a '\(scheme)' URL (only http and https are followed)"
        case .addressRefused(let host, let address): "the address policy refuses \(address)" + (host == address ? "" : " (the address of \(host))")
        case .httpStatus(let status): "HTTP status \(status)"
        case .notModified: "HTTP 304 Not Modified with no cached copy to serve"
        case .tooLarge(let limit): "response larger than the limit of \(limit) bytes"
        case .emptyResponse: "empty response body"
        case .truncated(let received, let expected):
            "connection closed after \(received) of \(expected.map(String.init) ?? "an unknown number of") bytes"
        case .connectionReset: "connection reset by peer"
        case .connectionFailed: "could not connect"
        case .tlsFailure: "TLS handshake failed"
        case .tooManyRedirects(let max): "more than \(max) redirects"
        case .redirectLoop: "redirect loop"
        case .insecureRedirect: "refused a redirect from https to http"
        case .invalidResponse: "invalid HTTP response"
        case .noLoader: "no loader for scheme '\(url?.scheme ?? "")'"
        case .invalidURL: "invalid URL"
        case .fileNotFound: "no readable file"
        case .loaderFailed: "loader error"
        case .unsupportedFormat(let bytes): "unsupported image format (first bytes: \(bytes))"
        case .invalidImage(let message): "invalid image data: \(message)"
        case .imageTooLarge(let width, let height, let limit): "image of \(width)×\(height) goes over \(limit)"
        case .emptyImage(let width, let height): "image of \(width)×\(height) has no pixels"
        case .notCached: "not in the cache, and the request forbids loading"
        case .processingFailed(let reason): reason
        }
    }
}
