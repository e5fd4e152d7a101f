import Foundation

/// Makes an SVG document safe to send to a browser as it is, as imgproxy sanitises the SVGs it
/// passes through: no `script`, `iframe`, `form`, `foreignObject`, `handler` or `listener` element,
/// no event handler (`on…` attribute), no processing instruction, comment or document type, and no
/// reference outside the document (a `href` keeps only `#fragments`, and for `image` also `data:`
/// PNG, JPEG, GIF and WebP; CSS `url()`s keep only fragments). Entities are never expanded.
///
/// The document is read by a tokenizer of its own (start and end tags, attributes, text, CDATA),
/// which requires every element to be closed in order and the root to be `svg`.
public enum SVGSanitizer {
    /// The sanitised document, as UTF-8. Throws when it is not well-formed, has more elements than
    /// the decoder allows, or its root is not `svg`.
    public static func sanitize(_ data: Data) throws(ImagoError) -> Data {
        let prepared = try SVGText(data, keepsImageData: true)
        var tokenizer = Tokenizer(Array(prepared.data))
        guard let output = tokenizer.run() else { throw ImagoError.invalid(.svg, "not well-formed SVG") }
        return Data(output.utf8)
    }

    static let droppedElements: Set<String> = ["script", "iframe", "form", "foreignobject", "handler", "listener"]

    /// The attribute's value when it may stay (entities in it decoded), else nil.
    static func kept(attribute name: String, value raw: String, element: String) -> String? {
        let local = (name.split(separator: ":").last.map(String.init) ?? name).lowercased()
        if local.hasPrefix("on") { return nil }
        let value = decodingReferences(raw)
        if local == "href" || local == "src" {
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.hasPrefix("#") { return trimmed }
            let lower = trimmed.lowercased()
            let safeImage = ["data:image/png;", "data:image/jpeg;", "data:image/gif;", "data:image/webp;"].contains { lower.hasPrefix($0) }
            return element == "image" && safeImage ? trimmed : nil
        }
        if local == "style" { return SVGText.neutralisingURLs(value) }
        return value
    }

    /// `text` with the predefined and numeric character references replaced by their characters
    /// (others, which `SVGText` already removed, kept as written).
    static func decodingReferences(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return SVGText.replacing(#"&(amp|lt|gt|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});"#, in: text) { groups in
            switch groups[1] {
            case "amp": return "&"
            case "lt": return "<"
            case "gt": return ">"
            case "quot": return "\""
            case "apos": return "'"
            default:
                let digits = groups[1].dropFirst()
                let value = digits.first == "x" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
                return value.flatMap(Unicode.Scalar.init).map { String(Character($0)) } ?? ""
            }
        }
    }

    static func escaped(_ text: String, quotes: Bool) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where quotes: result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }

    /// One pass over the bytes: what survives, written as it is read.
    private struct Tokenizer {
        let bytes: [UInt8]
        var index = 0
        var output = ""
        var open: [String] = []
        var dropping = 0
        var sawRoot = false

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func run() -> String? {
            while index < bytes.count {
                if bytes[index] != UInt8(ascii: "<") {
                    let start = index
                    while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
                    let text = String(decoding: bytes[start..<index], as: UTF8.self)
                    if open.isEmpty {
                        guard text.allSatisfy(\.isWhitespace) else { return nil }
                    } else if dropping == 0 {
                        output += Self.reescaped(SVGText.neutralisingURLs(text))
                    }
                    continue
                }
                if starts("<!--") {
                    guard let end = find("-->", from: index + 4) else { return nil }
                    index = end + 3
                } else if starts("<![CDATA[") {
                    guard let end = find("]]>", from: index + 9) else { return nil }
                    if dropping == 0, !open.isEmpty {
                        output += escaped(SVGText.neutralisingURLs(String(decoding: bytes[(index + 9)..<end], as: UTF8.self)), quotes: false)
                    }
                    index = end + 3
                } else if starts("<?") || starts("<!") {
                    guard let end = find(">", from: index + 2) else { return nil }
                    index = end + 1
                } else if starts("</") {
                    index += 2
                    let name = readName()
                    skipSpace()
                    guard !name.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: ">"), open.last == name else { return nil }
                    index += 1
                    open.removeLast()
                    if dropping > 0 {
                        dropping -= 1
                    } else {
                        output += "</" + name + ">"
                    }
                    if open.isEmpty { return trailingIsBlank() ? output : nil }
                } else {
                    guard startElement() else { return nil }
                    if open.isEmpty { return trailingIsBlank() ? output : nil }
                }
            }
            return nil
        }

        /// A start tag and its attributes; an empty element (`/>`) is closed at once.
        mutating func startElement() -> Bool {
            index += 1
            let name = readName()
            guard !name.isEmpty else { return false }
            let local = (name.split(separator: ":").last.map(String.init) ?? name).lowercased()
            if open.isEmpty {
                guard local == "svg", !sawRoot else { return false }
                sawRoot = true
            }
            var attributes: [(String, String)] = []
            while true {
                skipSpace()
                guard index < bytes.count else { return false }
                if bytes[index] == UInt8(ascii: ">") || starts("/>") { break }
                let attribute = readName()
                skipSpace()
                guard !attribute.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return false }
                index += 1
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return false }
                let quote = bytes[index]
                index += 1
                let start = index
                while index < bytes.count, bytes[index] != quote {
                    guard bytes[index] != UInt8(ascii: "<") else { return false }
                    index += 1
                }
                guard index < bytes.count else { return false }
                attributes.append((attribute, String(decoding: bytes[start..<index], as: UTF8.self)))
                index += 1
            }
            let empty = starts("/>")
            index += empty ? 2 : 1
            let drops = dropping > 0 || droppedElements.contains(local)
            if !drops {
                output += "<" + name
                for (attribute, value) in attributes {
                    guard let kept = kept(attribute: attribute, value: value, element: local) else { continue }
                    output += " " + attribute + "=\"" + escaped(kept, quotes: true) + "\""
                }
                output += empty ? "/>" : ">"
            }
            if !empty {
                open.append(name)
                if drops { dropping += 1 }
            }
            return true
        }

        mutating func readName() -> String {
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                let isName =
                    (byte >= 0x30 && byte <= 0x3A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E
                    || byte == 0x5F || byte >= 0x80
                guard isName else { break }
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        func starts(_ text: String) -> Bool {
            let prefix = Array(text.utf8)
            return bytes.count - index >= prefix.count && Array(bytes[index..<index + prefix.count]) == prefix
        }

        func find(_ text: String, from start: Int) -> Int? {
            let needle = Array(text.utf8)
            guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
            for position in start...(bytes.count - needle.count) where bytes[position] == needle[0] {
                if Array(bytes[position..<position + needle.count]) == needle { return position }
            }
            return nil
        }

        /// After the root element closes, only comments, processing instructions and blanks.
        mutating func trailingIsBlank() -> Bool {
            while index < bytes.count {
                if starts("<!--") {
                    guard let end = find("-->", from: index + 4) else { return false }
                    index = end + 3
                } else if starts("<?") {
                    guard let end = find(">", from: index + 2) else { return false }
                    index = end + 1
                } else if [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                    index += 1
                } else {
                    return false
                }
            }
            return true
        }

        /// Text as written, its references decoded and escaped again, so nothing but text comes out.
        static func reescaped(_ text: String) -> String { escaped(decodingReferences(text), quotes: false) }
    }
}
