import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Makes an SVG document safe to send to a browser as it is, as imgproxy sanitises the SVGs it
/// passes through: no `script`, `iframe`, `form` or `foreignObject` element, no event handler
/// (`on…` attribute), no processing instruction, comment or document type, and no reference
/// outside the document (a `href` keeps only `#fragments`, and for `image` also `data:` PNG, JPEG,
/// GIF and WebP; CSS `url()`s keep only fragments). Entities are never expanded from outside.
public enum SVGSanitizer {
    /// The sanitised document, re-serialised as UTF-8. Throws when it is not well-formed XML, has
    /// more elements than the decoder allows, or its root is not `svg`.
    public static func sanitize(_ data: Data) throws(ImagoError) -> Data {
        let prepared = try SVGText(data, keepsImageData: true)
        let parser = XMLParser(data: prepared.data)
        let writer = Writer()
        parser.delegate = writer
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        guard parser.parse(), parser.parserError == nil, writer.sawRoot, writer.isComplete else { throw ImagoError.invalid(.svg, "not well-formed SVG") }
        return Data(writer.output.utf8)
    }

    /// Re-serialises what survives, element by element.
    private final class Writer: NSObject, XMLParserDelegate {
        var output = ""
        var sawRoot = false
        /// Depth inside a dropped element: everything in it is dropped too.
        private var dropping = 0
        private var openElements: [String] = []
        /// Whether every element opened was closed.
        var isComplete: Bool { openElements.isEmpty && dropping == 0 }

        static let droppedElements: Set<String> = ["script", "iframe", "form", "foreignobject", "handler", "listener"]

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
            let local = String(name.split(separator: ":").last ?? Substring(name)).lowercased()
            if dropping > 0 || Self.droppedElements.contains(local) {
                dropping += 1
                return
            }
            if openElements.isEmpty {
                guard local == "svg" else {
                    parser.abortParsing()
                    return
                }
                sawRoot = true
            }
            openElements.append(name)
            output += "<" + name
            for key in attributes.keys.sorted() {
                guard let value = Self.kept(attribute: key, value: attributes[key] ?? "", element: local) else { continue }
                output += " " + key + "=\"" + Self.escaped(value, quotes: true) + "\""
            }
            output += ">"
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if dropping > 0 {
                dropping -= 1
                return
            }
            openElements.removeLast()
            output += "</" + name + ">"
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard dropping == 0, !openElements.isEmpty else { return }
            output += Self.escaped(SVGText.neutralisingURLs(string), quotes: false)
        }

        func parser(_ parser: XMLParser, foundCDATA data: Data) {
            guard dropping == 0, !openElements.isEmpty else { return }
            output += Self.escaped(SVGText.neutralisingURLs(String(decoding: data, as: UTF8.self)), quotes: false)
        }

        /// The attribute's value when it may stay, else nil.
        static func kept(attribute name: String, value: String, element: String) -> String? {
            let local = (name.split(separator: ":").last.map(String.init) ?? name).lowercased()
            if local.hasPrefix("on") { return nil }
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
    }
}
