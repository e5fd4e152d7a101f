import Foundation

/// The few parts of XML that OpenCV's cascade files use, read into a tree: elements, their text,
/// comments and the `<?xml ?>` declaration (attributes are skipped; entities, CDATA and DOCTYPE are
/// refused). Bounded before anything grows: the bytes, the depth and the element count.
struct CascadeXML {
    /// An element: its name, its text (the characters directly inside it), its children in order.
    struct Element {
        var name: Substring
        var text: Substring = ""
        var children: [Element] = []

        /// The first child named `name`.
        func child(_ name: String) -> Element? {
            children.first { $0.name == name }
        }
    }

    /// Why a file is not read.
    struct Refusal: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    static let maxDepth = 32
    static let maxElements = 4_000_000

    /// The root element of `text`.
    static func parse(_ text: Substring) throws(Refusal) -> Element {
        var reader = Reader(text: text)
        return try reader.document()
    }

    private struct Reader {
        let text: Substring
        var index: Substring.Index
        var elements = 0

        init(text: Substring) {
            self.text = text
            index = text.startIndex
        }

        mutating func document() throws(Refusal) -> Element {
            try skipMisc()
            guard index < text.endIndex, text[index] == "<" else { throw Refusal(description: "no root element") }
            let root = try element(depth: 0)
            try skipMisc()
            guard index == text.endIndex else { throw Refusal(description: "content after the root element") }
            return root
        }

        /// Skips whitespace, comments and processing instructions between elements.
        mutating func skipMisc() throws(Refusal) {
            while true {
                skipWhitespace()
                if text[index...].hasPrefix("<?") {
                    try skip(past: "?>")
                } else if text[index...].hasPrefix("<!--") {
                    try skip(past: "-->")
                } else {
                    return
                }
            }
        }

        mutating func skipWhitespace() {
            while index < text.endIndex, text[index].isWhitespace { index = text.index(after: index) }
        }

        mutating func skip(past end: String) throws(Refusal) {
            guard let range = text[index...].range(of: end) else { throw Refusal(description: "unterminated \(end)") }
            index = range.upperBound
        }

        /// The element starting at `<`, its children read to any depth up to ``maxDepth``.
        mutating func element(depth: Int) throws(Refusal) -> Element {
            guard depth < CascadeXML.maxDepth else { throw Refusal(description: "elements nested deeper than \(CascadeXML.maxDepth)") }
            elements += 1
            guard elements <= CascadeXML.maxElements else { throw Refusal(description: "more than \(CascadeXML.maxElements) elements") }
            index = text.index(after: index)  // "<"
            let nameStart = index
            while index < text.endIndex, !text[index].isWhitespace, text[index] != ">", text[index] != "/" {
                index = text.index(after: index)
            }
            let name = text[nameStart..<index]
            guard !name.isEmpty, !name.contains("!"), !name.contains("?") else { throw Refusal(description: "a malformed tag") }
            // Attributes (OpenCV writes type_id) are not needed: skipped to the tag's end.
            guard let close = text[index...].firstIndex(of: ">") else { throw Refusal(description: "an unterminated tag") }
            let selfClosing = close > index && text[text.index(before: close)] == "/"
            index = text.index(after: close)
            var element = Element(name: name)
            if selfClosing { return element }
            var textStart = index
            var pieces: [Substring] = []
            while true {
                guard let open = text[index...].firstIndex(of: "<") else { throw Refusal(description: "<\(name)> is not closed") }
                if open > textStart { pieces.append(text[textStart..<open]) }
                index = open
                let rest = text[index...]
                if rest.hasPrefix("</") {
                    let nameEnd = text.index(index, offsetBy: 2)
                    guard text[nameEnd...].hasPrefix(name), let end = text[nameEnd...].firstIndex(of: ">"),
                        text[text.index(nameEnd, offsetBy: name.count)..<end].allSatisfy(\.isWhitespace)
                    else { throw Refusal(description: "<\(name)> is closed by another tag") }
                    index = text.index(after: end)
                    break
                } else if rest.hasPrefix("<!--") {
                    try skip(past: "-->")
                } else if rest.hasPrefix("<![CDATA[") || rest.hasPrefix("<!") || rest.hasPrefix("<?") {
                    throw Refusal(description: "CDATA, DOCTYPE and instructions inside elements are not read")
                } else {
                    element.children.append(try self.element(depth: depth + 1))
                }
                textStart = index
            }
            // Numbers split by a comment or a child are joined by a space; one piece is kept as is.
            element.text = pieces.count == 1 ? pieces[0] : Substring(pieces.joined(separator: " "))
            return element
        }
    }
}
