import Foundation

/// The one error type Imago throws: what went wrong (`code`), at which stage, for which URL, and why.
///
/// Its `description` reads as a sentence a user can act on, for example
/// `loading http://127.0.0.1:8080/a.jpg failed: HTTP status 404`.
public struct ImagoError: Error, Sendable, CustomStringConvertible {

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
    public var kind: String { code.name }

    /// True when the request was cancelled by its caller.
    public var isCancelled: Bool { code == .cancelled }

    public var description: String {
        let target = url?.redactedString ?? "(no URL)"
        var text = "\(stage.rawValue) \(target) failed: \(cause)"
        if let underlying { text += " (\(underlying))" }
        return text
    }

    private var cause: String {
        if code == .noLoader { return "no loader for scheme '\(url?.scheme ?? "")'" }
        return code.description
    }
}

extension ImagoError: LocalizedError {
    /// The same sentence as ``description``, so `localizedDescription` names what happened.
    public var errorDescription: String? { description }
}
