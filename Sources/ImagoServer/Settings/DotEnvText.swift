import Foundation

/// Variables written as a `.env` file, read as imgproxy reads its `IMGPROXY_ENV_LOCAL_FILE_PATH`
/// file and a secret's text (godotenv's rules): `NAME=value` or `NAME: value` a line, `export `
/// before a name allowed, `#` lines and ` #` tails are comments, `'…'` is literal, `"…"` takes
/// `\n`, `\r`, `\t`, `\"`, `\\` and may span lines, and `$NAME`/`${NAME}` in unquoted and
/// double-quoted values is the file's earlier value, else `environment`'s.
public struct DotEnvText: Sendable {
    /// The variables, in the file's order (a name given twice: the last wins).
    public private(set) var variables: [(name: String, value: String)] = []

    /// A line the rules cannot read, numbered from 1.
    public struct BadLine: Error {
        /// The line's number, from 1.
        public let line: Int
        /// What is wrong with it.
        public let reason: String
    }

    /// Reads `text`; throws the first line the rules cannot read.
    public init(_ text: String, environment: [String: String]) throws(BadLine) {
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var known: [String: String] = [:]
        var index = 0
        while index < lines.count {
            let number = index + 1
            var line = lines[index].trimmingCharacters(in: .whitespaces)
            index += 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard let separator = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw BadLine(line: number, reason: "no '=' after the name")
            }
            let name = line[..<separator].trimmingCharacters(in: .whitespaces)
            guard Self.isName(name) else { throw BadLine(line: number, reason: "'\(name.prefix(64))' is not a variable's name") }
            var rest = line[line.index(after: separator)...].drop { $0 == " " || $0 == "\t" }
            let value: String
            if let quote = rest.first, quote == "'" || quote == "\"" {
                // A quoted value runs to its closing quote, on this line or a later one.
                rest = rest.dropFirst()
                var body = ""
                var closed = false
                var escaped = false
                while !closed {
                    var tail = ""
                    for character in rest {
                        if closed {
                            tail.append(character)
                        } else if escaped {
                            body.append(quote == "\"" ? Self.unescaped(character) : "\\\(character)")
                            escaped = false
                        } else if character == "\\" && quote == "\"" {
                            escaped = true
                        } else if character == quote {
                            closed = true
                        } else {
                            body.append(character)
                        }
                    }
                    if closed {
                        // After the closing quote: blanks, then at most a comment.
                        let trimmed = tail.trimmingCharacters(in: .whitespaces)
                        guard trimmed.isEmpty || trimmed.hasPrefix("#") else { throw BadLine(line: number, reason: "text after the closing quote") }
                        break
                    }
                    guard index < lines.count else { throw BadLine(line: number, reason: "the quoted value is not closed") }
                    body.append("\n")
                    rest = lines[index][...]
                    index += 1
                }
                value = quote == "\"" ? Self.expanded(body, known: known, environment: environment) : body
            } else {
                var text = String(rest)
                if let comment = text.range(of: " #") { text = String(text[..<comment.lowerBound]) }
                value = Self.expanded(text.trimmingCharacters(in: .whitespaces), known: known, environment: environment)
            }
            known[name] = value
            variables.append((name, value))
        }
    }

    /// Letters, digits, `_`, `.` and `-`, not starting with a digit.
    private static func isName(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return text.utf8.allSatisfy { byte in
            byte == 0x5F || byte == 0x2E || byte == 0x2D || (0x30...0x39).contains(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
        }
    }

    private static func unescaped(_ character: Character) -> String {
        switch character {
        case "n": "\n"
        case "r": "\r"
        case "t": "\t"
        case "$": "\\$"  // kept escaped until the expansion, which leaves it a plain `$`
        default: String(character)
        }
    }

    /// `$NAME` and `${NAME}` replaced by the file's earlier value, else the environment's, else
    /// nothing; `\$` is a plain `$`.
    private static func expanded(_ text: String, known: [String: String], environment: [String: String]) -> String {
        guard text.contains("$") else { return text }
        var out = ""
        var characters = text[...]
        while let character = characters.popFirst() {
            if character == "\\", characters.first == "$" {
                out.append(characters.removeFirst())
                continue
            }
            guard character == "$" else {
                out.append(character)
                continue
            }
            let name: Substring
            if characters.first == "{", let close = characters.firstIndex(of: "}") {
                name = characters[characters.index(after: characters.startIndex)..<close]
                characters = characters[characters.index(after: close)...]
            } else {
                let end = characters.firstIndex { !($0.isLetter || $0.isNumber || $0 == "_") } ?? characters.endIndex
                name = characters[..<end]
                characters = characters[end...]
            }
            guard !name.isEmpty else {
                out.append("$")
                continue
            }
            out += known[String(name)] ?? environment[String(name)] ?? ""
        }
        return out
    }
}
