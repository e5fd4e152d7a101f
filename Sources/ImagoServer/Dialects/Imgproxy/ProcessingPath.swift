import Foundation

/// A request path in imgproxy's format, split into its parts:
/// `/{signature}/{options}/plain/{percent-encoded source}[@{extension}]` or
/// `/{signature}/{options}/{base64url source, may be split by /}[.{extension}]`.
/// An option is a segment with a colon (`rs:fill:300:200`); the source starts at `plain` or at
/// the first segment without one, as in imgproxy.
public struct ProcessingPath: Sendable, Equatable {
    /// The first segment: a signature, or anything (`insecure`, `_`) when signing is off.
    public var signature: String
    /// What the signature covers: the path after it, its leading `/` included.
    public var signedPart: String
    /// The option segments, in order, unparsed.
    public var options: [String]
    /// The source URL, decoded.
    public var source: String
    /// The extension asking for an output format, if any.
    public var outputExtension: String?
    /// What divides an option's name and arguments (imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`).
    public var argumentsSeparator = ":"

    /// The longest path taken: a signed URL of a few options and a long source fits easily.
    public static let maxLength = 8192

    /// Splits `path` (without the query). Throws a 400 naming what is wrong. With `presetsOnly`
    /// (imgproxy's `IMGPROXY_ONLY_PRESETS`) the first segment after the signature is preset
    /// names divided by `:`, read as one `preset` option, and the source follows it. With
    /// `base64IncludesFilename` (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`) the last segment of a
    /// base64 source split by `/` is a file name for the client, not part of the source. An
    /// option is a segment with `argumentsSeparator` in it (imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`).
    public init(parsing path: String, presetsOnly: Bool = false, base64IncludesFilename: Bool = false, argumentsSeparator: String = ":") throws(ServerError) {
        self.argumentsSeparator = argumentsSeparator
        guard path.utf8.count <= Self.maxLength else { throw .badRequest("path too long") }
        guard path.hasPrefix("/") else { throw .badRequest("path must start with /") }
        let afterSlash = path.dropFirst()
        guard let end = afterSlash.firstIndex(of: "/") else { throw .badRequest("no source URL") }
        signature = String(afterSlash[..<end])
        signedPart = String(afterSlash[end...])
        var segments = signedPart.dropFirst().split(separator: "/", omittingEmptySubsequences: false)[...]
        options = []
        if presetsOnly {
            guard let names = segments.first, segments.count > 1 else { throw .badRequest("no source URL") }
            guard !names.isEmpty else { throw .badRequest("no preset named") }
            options = ["preset" + argumentsSeparator + names]
            segments = segments.dropFirst()
        }
        while !presetsOnly, let segment = segments.first, segment != "plain", segment.contains(argumentsSeparator) {
            options.append(String(segment))
            segments = segments.dropFirst()
        }
        if segments.first == "plain" {
            var plain = segments.dropFirst().joined(separator: "/")
            outputExtension = nil
            if let at = plain.lastIndex(of: "@") {
                outputExtension = String(plain[plain.index(after: at)...])
                plain = String(plain[..<at])
            }
            guard let decoded = plain.removingPercentEncoding, !decoded.isEmpty else { throw .badRequest("source URL is not percent-encoded text") }
            source = decoded
        } else {
            if base64IncludesFilename, segments.count > 1 { segments = segments.dropLast() }
            var encoded = segments.joined()
            outputExtension = nil
            if let dot = encoded.lastIndex(of: ".") {
                outputExtension = String(encoded[encoded.index(after: dot)...])
                encoded = String(encoded[..<dot])
            }
            guard !encoded.isEmpty else { throw .badRequest("no source URL") }
            guard let decoded = Self.base64URLDecoded(encoded) else { throw .badRequest("source URL is not URL-safe base64 of UTF-8 text") }
            source = decoded
        }
        if outputExtension?.isEmpty == true { outputExtension = nil }
    }

    /// Throws imgproxy's answer to an option `allowed` does not name (404, `Forbidden
    /// processing option`); `kind` is `processing` or `info`. nil allows every option.
    func checkOptions(allowed: Set<String>?, kind: String) throws(ServerError) {
        guard let allowed else { return }
        for segment in options {
            let name = segment.components(separatedBy: argumentsSeparator)[0]
            guard allowed.contains(name) else { throw ServerError(status: 404, "Forbidden \(kind) option \(name)") }
        }
    }

    /// URL-safe base64, padding optional, to UTF-8 text.
    static func base64URLDecoded(_ text: String) -> String? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
