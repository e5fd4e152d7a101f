import Foundation

/// Turns a path's source into the URL the pipeline loads: http(s) from allowed hosts, or
/// `local:///name` as a file under the local root and never outside it.
struct SourceResolver: Sendable {
    let allowedHosts: [String]?
    let localRoot: URL?

    func url(for source: String) throws(ServerError) -> URL {
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased() else { throw .badRequest("source is not a URL") }
        switch scheme {
        case "http", "https":
            guard let host = url.host?.lowercased(), !host.isEmpty else { throw .badRequest("source has no host") }
            if let allowedHosts, !allowedHosts.contains(where: { Self.matches(host, $0.lowercased()) }) { throw .forbidden("source not allowed") }
            return url
        case "local":
            return try localFile(url.path)
        default:
            throw .forbidden("source not allowed")
        }
    }

    /// `entry` is a host, or `.example.com` for it and its subdomains.
    private static func matches(_ host: String, _ entry: String) -> Bool {
        entry.hasPrefix(".") ? host == entry.dropFirst() || host.hasSuffix(entry) : host == entry
    }

    /// A path under the root: no `..`, no hidden segment, and still under the root once symbolic
    /// links are resolved.
    private func localFile(_ path: String) throws(ServerError) -> URL {
        guard let localRoot else { throw .forbidden("source not allowed") }
        let segments = path.split(separator: "/")
        guard !segments.isEmpty, !segments.contains(where: { $0 == ".." || $0 == "." || $0.hasPrefix(".") }) else { throw .forbidden("source not allowed") }
        let root = localRoot.resolvingSymlinksInPath().standardizedFileURL
        let file = segments.reduce(root) { $0.appendingPathComponent(String($1)) }.resolvingSymlinksInPath().standardizedFileURL
        guard file.path.hasPrefix(root.path + "/") else { throw .forbidden("source not allowed") }
        return file
    }
}
