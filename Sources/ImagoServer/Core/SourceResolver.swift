import Foundation

/// Turns a path's source into the URL the pipeline loads: http(s) from allowed hosts, or
/// `local:///name` as a file under the local root and never outside it (``LocalRoot``); only
/// sources that match one of imgproxy's `ALLOWED_SOURCES` prefixes when it has them. imgproxy's
/// own sources are first rewritten by its `URL_REPLACEMENTS` and `BASE_URL`.
struct SourceResolver: Sendable {
    let allowedHosts: [String]?
    let localRoot: LocalRoot?
    let allowedSources: [SourcePattern]?
    let baseURL: String?
    let replacements: [(pattern: SourcePattern, replacement: String)]
    /// thumbor's `ALLOWED_SOURCES` for its URLs' http images; nil allows any host.
    let thumborHosts: [ThumborHostPattern]?
    /// Whether `s3://` sources are read (their buckets are the S3 loader's to check).
    let s3: Bool
    /// Whether `gs://` sources are read.
    let gcs: Bool
    /// Whether `swift://` sources are read.
    let swift: Bool

    init(_ configuration: ServerConfiguration) {
        allowedHosts = configuration.allowedHosts
        localRoot = configuration.localRoot.map(LocalRoot.init)
        allowedSources = configuration.allowedSources?.map(SourcePattern.init)
        baseURL = configuration.sourceBaseURL.flatMap { $0.isEmpty ? nil : $0 }
        replacements = configuration.sourceURLReplacements.map { (SourcePattern($0.pattern), Self.template($0.replacement)) }
        s3 = configuration.readsS3
        gcs = configuration.readsGCS
        swift = configuration.readsSwift
        thumborHosts = configuration.thumborAllowedSources.flatMap { $0.isEmpty ? nil : $0.map(ThumborHostPattern.init) }
    }

    /// An imgproxy URL's source as imgproxy's parser preprocesses it: each replacement applied,
    /// then the base URL put before it unless it starts with it already.
    func imgproxySource(_ source: String) throws(ServerError) -> URL {
        var text = source
        for (pattern, replacement) in replacements { text = pattern.replacing(in: text, with: replacement) }
        if let baseURL, !text.hasPrefix(baseURL) { text = baseURL + text }
        return try url(for: text)
    }

    func url(for source: String) throws(ServerError) -> URL {
        // imgproxy answers a source outside its allowed prefixes with 404, "Invalid source URL".
        if let allowedSources, !allowedSources.contains(where: { $0.matches(source) }) { throw ServerError(status: 404, "Invalid source URL") }
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased() else { throw .badRequest("source is not a URL") }
        switch scheme {
        case "http", "https":
            guard let host = url.host?.lowercased(), !host.isEmpty else { throw .badRequest("source has no host") }
            if let allowedHosts, !allowedHosts.contains(where: { Self.matches(host, $0.lowercased()) }) { throw .forbidden("source not allowed") }
            return url
        case "s3", "gs", "swift":
            let reads =
                switch scheme {
                case "s3": s3
                case "gs": gcs
                default: swift
                }
            guard reads else { throw .forbidden("source not allowed") }
            return url
        case "local":
            guard let localRoot else { throw .forbidden("source not allowed") }
            return try localRoot.file(encodedPath: url.path(percentEncoded: true))
        default:
            throw .forbidden("source not allowed")
        }
    }

    /// `entry` is a host, or `.example.com` for it and its subdomains.
    private static func matches(_ host: String, _ entry: String) -> Bool {
        entry.hasPrefix(".") ? host == entry.dropFirst() || host.hasSuffix(entry) : host == entry
    }

    /// Go's replacement template (`$1`, `${1}`) as NSRegularExpression's (`$1`), other `\` and
    /// `$` taken literally.
    private static func template(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let first = rest.first {
            rest = rest.dropFirst()
            if first == "\\" {
                out += "\\\\"
            } else if first == "$" {
                if rest.first == "{", let close = rest.firstIndex(of: "}"), let number = Int(rest[rest.index(after: rest.startIndex)..<close]) {
                    out += "$\(number)"
                    rest = rest[rest.index(after: close)...]
                } else if let digit = rest.first, digit.isASCII, digit.isNumber {
                    out += "$"
                } else {
                    out += "\\$"
                }
            } else {
                out.append(first)
            }
        }
        return out
    }
}

/// imgproxy's source pattern (`RegexpFromPattern`): a prefix of the URL, each `*` matching any
/// run of characters but `/`.
struct SourcePattern: Sendable {
    let pattern: String
    private let expression: NSRegularExpression

    init(_ pattern: String) {
        self.pattern = pattern
        let parts = pattern.components(separatedBy: "*").map(NSRegularExpression.escapedPattern(for:))
        // Escaped text and a fixed group: always a valid expression.
        expression = try! NSRegularExpression(pattern: "^" + parts.joined(separator: "([^/]*)"))
    }

    func matches(_ text: String) -> Bool {
        expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    /// `text` with the matched prefix replaced by `template`.
    func replacing(in text: String, with template: String) -> String {
        expression.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
    }
}

/// An entry of thumbor's `ALLOWED_SOURCES`: a plain entry is the host itself; one with a regular
/// expression's characters (thumbor's legacy form) is matched as thumbor matches it, `^entry$`
/// (compiled once; an expression that does not compile matches nothing).
struct ThumborHostPattern: Sendable {
    private let host: String?
    private let expression: NSRegularExpression?

    init(_ entry: String) {
        let isExpression = entry.contains { "\\^$*+?{}[]()|".contains($0) }
        host = isExpression ? nil : entry
        expression = isExpression ? try? NSRegularExpression(pattern: "^" + entry + "$") : nil
    }

    func matches(_ candidate: String) -> Bool {
        if let host { return candidate == host }
        return expression?.firstMatch(in: candidate, range: NSRange(candidate.startIndex..., in: candidate)) != nil
    }
}
