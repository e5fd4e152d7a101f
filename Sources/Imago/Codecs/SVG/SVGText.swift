import Foundation

/// An SVG document made safe to hand to a renderer: no document type (so no entity can be
/// declared, expanded a billion times or fetched from outside), no reference to anything outside
/// the document (`href`s, CSS `url()`s and `@import`s that do not name a fragment `#…` are
/// emptied, `data:` URLs included, since their images would decode outside Imago's limits), and
/// at most ``maxElements`` elements.
struct SVGText {
    /// The document, as UTF-8.
    let data: Data

    /// The most elements a document may have: each costs the renderer memory and time.
    static let maxElements = 20_000

    /// Whether `data` starts as an SVG document: markup whose first 4 KB open an `<svg` element.
    static func looksLikeSVG(_ data: Data) -> Bool {
        let head = data.prefix(4096)
        guard let first = head.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }), first == UInt8(ascii: "<") else { return false }
        return String(decoding: head, as: UTF8.self).contains("<svg")
    }

    /// `keepsImageData`: `href`s to `data:` URLs stay (the sanitiser decides which; a renderer
    /// must not get them).
    init(_ source: Data, keepsImageData: Bool = false) throws(ImagoError) {
        var text = String(decoding: source, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        text = Self.removingDocumentType(text)
        text = Self.replacing(#"<\?(?!xml\s)[^>]*\?>"#, in: text) { _ in "" }
        text = Self.replacing(#"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)[^;\s<>&]*;"#, in: text) { _ in "" }
        text = Self.replacing(#"((?:xlink:)?href\s*=\s*)("[^"]*"|'[^']*')"#, in: text) { groups in
            let value = groups[2].dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
            let kept = value.hasPrefix("#") || (keepsImageData && value.lowercased().hasPrefix("data:"))
            return kept ? groups[0] : groups[1] + "\"\""
        }
        text = Self.neutralisingURLs(text)
        let elements = text.utf8.indices.lazy.filter { index in
            text.utf8[index] == UInt8(ascii: "<") && text.utf8.index(after: index) < text.utf8.endIndex
                && Self.isNameStart(text.utf8[text.utf8.index(after: index)])
        }.count
        guard elements <= Self.maxElements else { throw ImagoError.invalid(.svg, "more than \(Self.maxElements) elements") }
        data = Data(text.utf8)
    }

    /// `text` with every CSS `url()` that does not name a fragment replaced by `none`, and
    /// `@import`s removed.
    static func neutralisingURLs(_ text: String) -> String {
        guard text.range(of: "url(", options: .caseInsensitive) != nil || text.range(of: "@import", options: .caseInsensitive) != nil else { return text }
        let urls = replacing(#"url\(\s*(['"]?)([^)'"]*)\1\s*\)"#, in: text) { groups in
            groups[2].trimmingCharacters(in: .whitespaces).hasPrefix("#") ? groups[0] : "none"
        }
        return replacing(#"@import[^;]*;?"#, in: urls) { _ in "" }
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    /// `text` without its `<!DOCTYPE …>`, internal subset and all.
    static func removingDocumentType(_ text: String) -> String {
        guard let start = text.range(of: "<!DOCTYPE", options: .caseInsensitive) else { return text }
        var depth = 0
        var quote: Character?
        var index = start.upperBound
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "[" {
                depth += 1
            } else if character == "]" {
                depth -= 1
            } else if character == ">", depth <= 0 {
                return String(text[..<start.lowerBound]) + removingDocumentType(String(text[text.index(after: index)...]))
            }
            index = text.index(after: index)
        }
        return String(text[..<start.lowerBound])
    }

    /// `text` with every match of `pattern` replaced by `replacement(groups)` (group 0 the match).
    static func replacing(_ pattern: String, in text: String, _ replacement: ([String]) -> String) -> String {
        guard let expression = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive, .dotMatchesLineSeparators]) else { return text }
        let source = text as NSString
        var result = ""
        var last = 0
        for match in expression.matches(in: text, range: NSRange(location: 0, length: source.length)) {
            result += source.substring(with: NSRange(location: last, length: match.range.location - last))
            let groups = (0..<match.numberOfRanges).map { match.range(at: $0).location == NSNotFound ? "" : source.substring(with: match.range(at: $0)) }
            result += replacement(groups)
            last = match.range.location + match.range.length
        }
        return result + source.substring(from: last)
    }
}
