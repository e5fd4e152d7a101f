import Foundation

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
