import Foundation

/// Turns a path's source into the URL the pipeline loads: http(s) from allowed hosts, or
/// `local:///name` as a file under the local root and never outside it (``LocalRoot``).
struct SourceResolver: Sendable {
    let allowedHosts: [String]?
    let localRoot: LocalRoot?

    func url(for source: String) throws(ServerError) -> URL {
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased() else { throw .badRequest("source is not a URL") }
        switch scheme {
        case "http", "https":
            guard let host = url.host?.lowercased(), !host.isEmpty else { throw .badRequest("source has no host") }
            if let allowedHosts, !allowedHosts.contains(where: { Self.matches(host, $0.lowercased()) }) { throw .forbidden("source not allowed") }
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
}
