import Foundation

/// The one answer to "is this a file under the local root", for imgproxy's `local:///` sources,
/// thumbor's file loader and the gallery's listing alike. A path as written in a URL is
/// percent-decoded once, here and nowhere else; it is refused when it has a NUL, a backslash, no
/// segment, a `.` or `..` segment or a hidden one (`.name`), or when, its symbolic links resolved,
/// it is no longer under the root. Every refusal is the same 404 as a missing file, so an answer
/// tells nothing of what lies outside.
struct LocalRoot: Sendable {
    /// The root, its own symbolic links resolved.
    let root: URL

    init(_ root: URL) {
        self.root = root.resolvingSymlinksInPath().standardizedFileURL
    }

    /// What every refusal answers.
    static let refusal = ServerError(status: 404, "source not found")

    /// The file `encodedPath` (percent-encoded, as in a URL; a leading `/` or not) names under the root.
    func file(encodedPath: String) throws(ServerError) -> URL {
        guard let decoded = encodedPath.removingPercentEncoding else { throw Self.refusal }
        return try file(path: decoded)
    }

    /// The file `path` (already decoded) names under the root.
    func file(path: String) throws(ServerError) -> URL {
        guard !path.contains("\0"), !path.contains("\\") else { throw Self.refusal }
        let segments = path.split(separator: "/")
        guard !segments.isEmpty, !segments.contains(where: { $0 == "." || $0 == ".." || $0.hasPrefix(".") }) else { throw Self.refusal }
        let file = segments.reduce(root) { $0.appendingPathComponent(String($1)) }.resolvingSymlinksInPath().standardizedFileURL
        guard file.path.hasPrefix(root.path + "/") else { throw Self.refusal }
        return file
    }

    /// The files under the root whose extension is one of `extensions` and that ``file(path:)``
    /// accepts, as paths relative to the root, sorted, at most `limit`.
    func files(withExtensions extensions: Set<String>, limit: Int) -> [String] {
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var names: [String] = []
        for case let found as URL in walker where extensions.contains(found.pathExtension.lowercased()) {
            let path = found.standardizedFileURL.path
            guard path.hasPrefix(root.path + "/") else { continue }
            let name = String(path.dropFirst(root.path.count + 1))
            guard (try? file(path: name)) != nil else { continue }
            names.append(name)
        }
        return Array(names.sorted().prefix(limit))
    }
}
