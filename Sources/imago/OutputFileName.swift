import Foundation

/// A file name for a loaded URL that stays inside the output directory whatever the URL holds:
/// its last path component (which URL decodes, so `..%2F..%2Fx` would name `../../x`) with path
/// separators, control characters and leading dots replaced, never empty, `.` or `..`.
enum OutputFileName {
    /// The longest name made, in UTF-8 bytes (file systems allow 255).
    static let maxBytes = 200

    static func make(for url: URL, index: Int) -> String {
        let component = url.scheme == "data" ? "" : url.lastPathComponent
        var name = String(
            String.UnicodeScalarView(
                component.unicodeScalars.map { scalar in
                    scalar == "/" || scalar == "\\" || scalar.properties.generalCategory == .control ? "_" : scalar
                }))
        name = String(name.drop { $0 == "." })
        // Keep the end (the extension), at most maxBytes of it, cut between characters.
        var kept = 0
        let tail = name.reversed().prefix { character in
            kept += character.utf8.count
            return kept <= maxBytes
        }
        name = String(tail.reversed())
        return name.isEmpty || name == "_" ? "image-\(index)" : name
    }

    /// `name`, or `2-name`, `3-name` … when `used` already holds it; the result is added to `used`.
    static func unique(_ name: String, in used: inout Set<String>) -> String {
        var candidate = name
        var counter = 1
        while used.contains(candidate) {
            counter += 1
            candidate = "\(counter)-\(name)"
        }
        used.insert(candidate)
        return candidate
    }
}
