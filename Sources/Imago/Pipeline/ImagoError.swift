import Foundation

/// The one error type Imago throws: what went wrong (`code`), at which stage, for which URL, and why.
///
/// Its `description` reads as a sentence a user can act on, for example
/// `loading http://127.0.0.1:8080/a.jpg failed: HTTP status 404`.
public struct ImagoError: Error, Sendable, CustomStringConvertible {

    /// The part of the pipeline where the error happened.
    public enum Stage: String, Sendable, Hashable {
        /// Getting the bytes: a loader, the network, a response's status or size.
        case loading
        /// Turning bytes into pixels.
        case decoding
        /// Reading or writing a cache.
        case caching
        /// Running a processor on a decoded image.
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
    /// What went wrong in a few words where the code alone does not say, such as
    /// "connection refused" for a `connectionFailed`; part of ``description``.
    public var reason: String?

    /// Makes an error.
    public init(_ code: Code, url: URL?, stage: Stage = .loading, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.url = url
        self.stage = stage
        self.underlying = underlying
    }

    /// The code's kind, to `switch` over (``Code/Kind``); its `name` is what logs, metrics
    /// dimensions and JSON output carry.
    public var kind: Code.Kind { code.kind }

    /// True when the request was cancelled by its caller.
    public var isCancelled: Bool { code == .cancelled }

    /// A sentence in the user's words: the stage, the URL (password hidden) and what happened, such
    /// as `loading http://127.0.0.1:1/a.jpg failed: could not connect to 127.0.0.1:1: connection
    /// refused`. The underlying error is kept in ``underlying``; it is quoted only when the code
    /// cannot say more (`loaderFailed`).
    public var description: String {
        let target = url?.redactedString ?? "(no URL)"
        var text = "\(stage.rawValue) \(target) failed: \(cause)"
        if let reason { text += ": \(reason)" }
        if code == .loaderFailed, let underlying { text += " (\(underlying))" }
        return text
    }

    private var cause: String {
        if code == .noLoader {
            guard let scheme = url?.scheme, !scheme.isEmpty else { return "not an absolute URL: it has no scheme such as https:" }
            return "no loader for the scheme '\(scheme)'"
        }
        if code == .connectionFailed, let host = url?.host {
            let port = url?.port ?? (url?.scheme?.lowercased() == "https" ? 443 : 80)
            return "could not connect to \(host):\(port)"
        }
        return code.description
    }
}

extension ImagoError: LocalizedError {
    /// The same sentence as ``description``, so `localizedDescription` names what happened.
    public var errorDescription: String? { description }
}
