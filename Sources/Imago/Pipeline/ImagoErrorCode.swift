import Foundation

extension ImagoError {
    /// What went wrong: compare with the static members (`error.code == .timedOut`,
    /// `error.code == .httpStatus(404)`), read details through the properties (``httpStatus``,
    /// ``message``, ``imageSize``, ``limit``), or use ``name`` as a stable string. A struct, not an
    /// enum, so that new codes do not break a caller's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The codes and their details; a `switch` over this stays inside Imago.
        enum Value: Sendable, Hashable {
            case cancelled
            case timedOut
            case tooSlow(minimumBytesPerSecond: Int)
            case redirectToUnsupportedScheme(String)
            case addressRefused(host: String, address: String)
            case httpStatus(Int)
            case notModified
            case tooLarge(limit: Int64)
            case emptyResponse
            case truncated(received: Int64, expected: Int64?)
            case connectionReset
            case connectionFailed
            case tlsFailure
            case tooManyRedirects(Int)
            case redirectLoop
            case insecureRedirect
            case invalidResponse
            case noLoader
            case invalidURL
            case fileNotFound
            case loaderFailed
            case unsupportedFormat(firstBytes: String)
            case invalidImage(String)
            case imageTooLarge(width: Int, height: Int, limit: DecodingLimit)
            case emptyImage(width: Int, height: Int)
            case notCached
            case processingFailed(String)
            case codecUnavailable(String)
            case sourceRefused(String)
        }

        let value: Value

        init(_ value: Value) {
            self.value = value
        }

        /// The caller cancelled the request.
        public static let cancelled = Code(.cancelled)

        /// No byte arrived within the configured time, or the total deadline passed.
        public static let timedOut = Code(.timedOut)

        /// The body arrived slower, on average, than the configured minimum rate.
        public static func tooSlow(minimumBytesPerSecond: Int) -> Code { Code(.tooSlow(minimumBytesPerSecond: minimumBytesPerSecond)) }

        /// A redirect pointed at a URL whose scheme is not http or https.
        public static func redirectToUnsupportedScheme(_ scheme: String) -> Code { Code(.redirectToUnsupportedScheme(scheme)) }

        /// The address a host name resolved to (or an address in the URL) is refused by the
        /// configuration's ``AddressPolicy``.
        public static func addressRefused(host: String, address: String) -> Code { Code(.addressRefused(host: host, address: address)) }

        /// The server answered with a status that is not a success (>= 400, or an unexpected 1xx/3xx).
        public static func httpStatus(_ status: Int) -> Code { Code(.httpStatus(status)) }

        /// The server answered `304 Not Modified` and there is no cached copy to serve.
        public static let notModified = Code(.notModified)

        /// The response is larger than the configured maximum (from Content-Length or counted bytes).
        public static func tooLarge(limit: Int64) -> Code { Code(.tooLarge(limit: limit)) }

        /// The response had no body.
        public static let emptyResponse = Code(.emptyResponse)

        /// The connection closed before the whole body arrived.
        public static func truncated(received: Int64, expected: Int64?) -> Code { Code(.truncated(received: received, expected: expected)) }

        /// The peer reset the connection.
        public static let connectionReset = Code(.connectionReset)

        /// The connection could not be made (refused, unreachable, DNS).
        public static let connectionFailed = Code(.connectionFailed)

        /// The TLS handshake failed, for example an untrusted certificate.
        public static let tlsFailure = Code(.tlsFailure)

        /// More redirects than allowed.
        public static func tooManyRedirects(_ maximum: Int) -> Code { Code(.tooManyRedirects(maximum)) }

        /// A redirect led back to a URL already visited.
        public static let redirectLoop = Code(.redirectLoop)

        /// A redirect from https to http, which Imago never follows.
        public static let insecureRedirect = Code(.insecureRedirect)

        /// The response could not be parsed as HTTP.
        public static let invalidResponse = Code(.invalidResponse)

        /// No registered loader can load this URL (unknown scheme).
        public static let noLoader = Code(.noLoader)

        /// The URL cannot be loaded as written (for example a malformed `data:` URI).
        public static let invalidURL = Code(.invalidURL)

        /// A `file://` URL names a file that does not exist or cannot be read.
        public static let fileNotFound = Code(.fileNotFound)

        /// A loader failed for a reason none of the other codes name; see `underlying`.
        public static let loaderFailed = Code(.loaderFailed)

        /// No decoder recognises the bytes; carries the first bytes seen, in hex.
        public static func unsupportedFormat(firstBytes: String) -> Code { Code(.unsupportedFormat(firstBytes: firstBytes)) }

        /// The bytes claim a format but are corrupt or truncated; carries the codec's message.
        public static func invalidImage(_ message: String) -> Code { Code(.invalidImage(message)) }

        /// The image (of the size it declares) goes over a decoding limit, which `limit` names.
        public static func imageTooLarge(width: Int, height: Int, limit: DecodingLimit) -> Code {
            Code(.imageTooLarge(width: width, height: height, limit: limit))
        }

        /// The image declares zero pixels (a side of 0).
        public static func emptyImage(width: Int, height: Int) -> Code { Code(.emptyImage(width: width, height: height)) }

        /// `returnCacheDataDontLoad` and neither cache holds the image.
        public static let notCached = Code(.notCached)

        /// A processor could not make its image; carries why.
        public static func processingFailed(_ reason: String) -> Code { Code(.processingFailed(reason)) }

        /// The format's codec library could not be loaded on this machine (loaded on first use: a
        /// missing libjxl makes JPEG XL unavailable, nothing else); carries which and why.
        public static func codecUnavailable(_ reason: String) -> Code { Code(.codecUnavailable(reason)) }

        /// The loader's own configuration refuses this source before any request (an object
        /// store's bucket outside its allowed list, say); carries why.
        public static func sourceRefused(_ reason: String) -> Code { Code(.sourceRefused(reason)) }

        /// What kind of code this is, without its details: something to `switch` over. A `switch`
        /// needs a `default`, so codes added later never break it:
        ///
        /// ```swift
        /// switch error.code.kind {
        /// case .timedOut, .tooSlow: retryLater()
        /// case .httpStatus where error.code.httpStatus == 404: showMissing()
        /// default: showFailure(error)
        /// }
        /// ```
        public struct Kind: Sendable, Hashable, CustomStringConvertible {
            /// The kind's stable name, as ``ImagoError/Code/name`` gives it.
            public let name: String

            private init(_ name: String) {
                self.name = name
            }

            public var description: String { name }

            /// Codes made by ``ImagoError/Code/cancelled``.
            public static let cancelled = Kind("cancelled")
            /// Codes made by ``ImagoError/Code/timedOut``.
            public static let timedOut = Kind("timedOut")
            /// Codes made by ``ImagoError/Code/tooSlow(minimumBytesPerSecond:)``.
            public static let tooSlow = Kind("tooSlow")
            /// Codes made by ``ImagoError/Code/redirectToUnsupportedScheme(_:)``.
            public static let redirectToUnsupportedScheme = Kind("redirectToUnsupportedScheme")
            /// Codes made by ``ImagoError/Code/addressRefused(host:address:)``.
            public static let addressRefused = Kind("addressRefused")
            /// Codes made by ``ImagoError/Code/httpStatus(_:)``.
            public static let httpStatus = Kind("httpStatus")
            /// Codes made by ``ImagoError/Code/notModified``.
            public static let notModified = Kind("notModified")
            /// Codes made by ``ImagoError/Code/tooLarge(limit:)``.
            public static let tooLarge = Kind("tooLarge")
            /// Codes made by ``ImagoError/Code/emptyResponse``.
            public static let emptyResponse = Kind("emptyResponse")
            /// Codes made by ``ImagoError/Code/truncated(received:expected:)``.
            public static let truncated = Kind("truncated")
            /// Codes made by ``ImagoError/Code/connectionReset``.
            public static let connectionReset = Kind("connectionReset")
            /// Codes made by ``ImagoError/Code/connectionFailed``.
            public static let connectionFailed = Kind("connectionFailed")
            /// Codes made by ``ImagoError/Code/tlsFailure``.
            public static let tlsFailure = Kind("tlsFailure")
            /// Codes made by ``ImagoError/Code/tooManyRedirects(_:)``.
            public static let tooManyRedirects = Kind("tooManyRedirects")
            /// Codes made by ``ImagoError/Code/redirectLoop``.
            public static let redirectLoop = Kind("redirectLoop")
            /// Codes made by ``ImagoError/Code/insecureRedirect``.
            public static let insecureRedirect = Kind("insecureRedirect")
            /// Codes made by ``ImagoError/Code/invalidResponse``.
            public static let invalidResponse = Kind("invalidResponse")
            /// Codes made by ``ImagoError/Code/noLoader``.
            public static let noLoader = Kind("noLoader")
            /// Codes made by ``ImagoError/Code/invalidURL``.
            public static let invalidURL = Kind("invalidURL")
            /// Codes made by ``ImagoError/Code/fileNotFound``.
            public static let fileNotFound = Kind("fileNotFound")
            /// Codes made by ``ImagoError/Code/loaderFailed``.
            public static let loaderFailed = Kind("loaderFailed")
            /// Codes made by ``ImagoError/Code/unsupportedFormat(firstBytes:)``.
            public static let unsupportedFormat = Kind("unsupportedFormat")
            /// Codes made by ``ImagoError/Code/invalidImage(_:)``.
            public static let invalidImage = Kind("invalidImage")
            /// Codes made by ``ImagoError/Code/imageTooLarge(width:height:limit:)``.
            public static let imageTooLarge = Kind("imageTooLarge")
            /// Codes made by ``ImagoError/Code/emptyImage(width:height:)``.
            public static let emptyImage = Kind("emptyImage")
            /// Codes made by ``ImagoError/Code/notCached``.
            public static let notCached = Kind("notCached")
            /// Codes made by ``ImagoError/Code/processingFailed(_:)``.
            public static let processingFailed = Kind("processingFailed")
            /// Codes made by ``ImagoError/Code/codecUnavailable(_:)``.
            public static let codecUnavailable = Kind("codecUnavailable")
            /// Codes made by ``ImagoError/Code/sourceRefused(_:)``.
            public static let sourceRefused = Kind("sourceRefused")
        }

        /// The code's kind, to `switch` over.
        public var kind: Kind {
            switch value {
            case .cancelled: .cancelled
            case .timedOut: .timedOut
            case .tooSlow: .tooSlow
            case .redirectToUnsupportedScheme: .redirectToUnsupportedScheme
            case .addressRefused: .addressRefused
            case .httpStatus: .httpStatus
            case .notModified: .notModified
            case .tooLarge: .tooLarge
            case .emptyResponse: .emptyResponse
            case .truncated: .truncated
            case .connectionReset: .connectionReset
            case .connectionFailed: .connectionFailed
            case .tlsFailure: .tlsFailure
            case .tooManyRedirects: .tooManyRedirects
            case .redirectLoop: .redirectLoop
            case .insecureRedirect: .insecureRedirect
            case .invalidResponse: .invalidResponse
            case .noLoader: .noLoader
            case .invalidURL: .invalidURL
            case .fileNotFound: .fileNotFound
            case .loaderFailed: .loaderFailed
            case .unsupportedFormat: .unsupportedFormat
            case .invalidImage: .invalidImage
            case .imageTooLarge: .imageTooLarge
            case .emptyImage: .emptyImage
            case .notCached: .notCached
            case .processingFailed: .processingFailed
            case .codecUnavailable: .codecUnavailable
            case .sourceRefused: .sourceRefused
            }
        }

        /// A short, stable name for the code, used in logs, metrics dimensions and JSON output.
        public var name: String { kind.name }

        /// The status of an `httpStatus` code.
        public var httpStatus: Int? {
            if case .httpStatus(let status) = value { return status }
            return nil
        }

        /// The text a code carries: a codec's message (`invalidImage`), a processor's reason
        /// (`processingFailed`), the first bytes in hex (`unsupportedFormat`), the refused scheme
        /// (`redirectToUnsupportedScheme`) or address (`addressRefused`).
        public var message: String? {
            switch value {
            case .invalidImage(let text), .processingFailed(let text), .unsupportedFormat(let text), .redirectToUnsupportedScheme(let text),
                .codecUnavailable(let text), .sourceRefused(let text):
                text
            case .addressRefused(_, let address): address
            default: nil
            }
        }

        /// The size an image declares, for `imageTooLarge` and `emptyImage`.
        public var imageSize: PixelSize? {
            switch value {
            case .imageTooLarge(let width, let height, _), .emptyImage(let width, let height): PixelSize(width: width, height: height)
            default: nil
            }
        }

        /// The decoding limit an `imageTooLarge` image goes over.
        public var limit: DecodingLimit? {
            if case .imageTooLarge(_, _, let limit) = value { return limit }
            return nil
        }

        /// The byte limit a `tooLarge` response passed.
        public var sizeLimit: Int64? {
            if case .tooLarge(let limit) = value { return limit }
            return nil
        }

        /// Bytes received and expected, for `truncated`.
        public var receivedBytes: (received: Int64, expected: Int64?)? {
            if case .truncated(let received, let expected) = value { return (received, expected) }
            return nil
        }

        /// What happened, in words.
        public var description: String {
            switch value {
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
            case .noLoader: "no loader for this URL's scheme"
            case .invalidURL: "invalid URL"
            case .fileNotFound: "no readable file"
            case .loaderFailed: "loader error"
            case .unsupportedFormat(let bytes): "unsupported image format (first bytes: \(bytes))"
            case .invalidImage(let message): "invalid image data: \(message)"
            case .imageTooLarge(let width, let height, let limit): "image of \(width)×\(height) goes over \(limit)"
            case .emptyImage(let width, let height): "image of \(width)×\(height) has no pixels"
            case .notCached: "not in the cache, and the request forbids loading"
            case .processingFailed(let reason): reason
            case .codecUnavailable(let reason): reason
            case .sourceRefused(let reason): reason
            }
        }
    }
}
