import Foundation

/// Turns a path's source into the URL the pipeline loads: http(s) from allowed hosts, or
/// `local:///name` as a file under the local root and never outside it (``LocalRoot``); only
/// sources that match one of the allowed source prefixes when there are any. (A dialect may
/// rewrite its sources first.)
struct SourceResolver: Sendable {
    let allowedHosts: [String]?
    let localRoot: LocalRoot?
    let allowedSources: [SourcePattern]?
    /// Whether `s3://` sources are read (their buckets are the S3 loader's to check).
    let s3: Bool
    /// Whether `gs://` sources are read.
    let gcs: Bool
    /// Whether `swift://` sources are read.
    let swift: Bool
    /// What parts a store's or the local root's source into its object and its query (a version,
    /// a generation): imgproxy's `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`; empty, the whole is the object.
    let querySeparator: String

    init(_ configuration: ServerConfiguration) {
        allowedHosts = configuration.allowedHosts
        localRoot = configuration.localRoot.map(LocalRoot.init)
        allowedSources = configuration.allowedSources?.map(SourcePattern.init)
        s3 = configuration.readsS3
        gcs = configuration.readsGCS
        swift = configuration.readsSwift
        querySeparator = configuration.sourceQuerySeparator
    }

    /// `source` as the URL the pipeline loads, under the server's rules.
    func url(for source: String) throws(ServerError) -> URL {
        // A source outside the allowed prefixes is a 404, "Invalid source URL" (as imgproxy answers).
        if let allowedSources, !allowedSources.contains(where: { $0.matches(source) }) { throw ServerError(status: 404, "Invalid source URL") }
        guard let url = URL(string: Self.separatingQuery(source, by: querySeparator)), let scheme = url.scheme?.lowercased() else {
            throw .badRequest("source is not a URL")
        }
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

    /// A non-http(s) `source` with its query after the first `separator` in its path (as imgproxy
    /// cuts its stores' keys): every `?` and `#` before it is part of the object's name, escaped.
    /// With `?` (the default) the source is left as URLs read it; http(s) sources always are.
    static func separatingQuery(_ source: String, by separator: String) -> String {
        guard separator != "?", let schemeEnd = source.range(of: "://") else { return source }
        let scheme = source[..<schemeEnd.lowerBound].lowercased()
        guard scheme != "http", scheme != "https" else { return source }
        let afterScheme = source[schemeEnd.upperBound...]
        let pathStart = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        var path = String(afterScheme[pathStart...])
        var query: String?
        if !separator.isEmpty, let cut = path.range(of: separator) {
            query = String(path[cut.upperBound...])
            path = String(path[..<cut.lowerBound])
        }
        path = path.replacingOccurrences(of: "?", with: "%3F").replacingOccurrences(of: "#", with: "%23")
        return source[..<pathStart] + path + (query.map { "?" + $0 } ?? "")
    }

    /// `entry` is a host, or `.example.com` for it and its subdomains.
    private static func matches(_ host: String, _ entry: String) -> Bool {
        entry.hasPrefix(".") ? host == entry.dropFirst() || host.hasSuffix(entry) : host == entry
    }
}

/// A source pattern (as imgproxy's `RegexpFromPattern`): a prefix of the URL, each `*` matching
/// any run of characters but `/`.
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
