import Foundation

/// thumbor's settings file (`thumbor.conf`): Python assignments of literals, read without running
/// anything. `NAME = value` per statement, where a value is a literal — a string (quoted either
/// way, triple-quoted, `r`/`u` prefixed, adjacent ones joined), a number, `True`, `False`, `None`,
/// or a list, tuple or dict of literals, over as many lines as its brackets span — or a name
/// assigned before, or values joined with `+` (lists to a list, strings to a string); `#`
/// comments. The one import read is thumbor's own `from thumbor.filters import BUILTIN_FILTERS`
/// (its list of filter modules, as thumbor 7.8 has it), which thumbor's documentation suggests for
/// adding a filter. Anything else (another import, a call, another operator) is refused with its
/// line number: the file is data, never evaluated.
public struct ThumborConfigFile: Sendable, Equatable {
    /// A literal's value.
    public indirect enum Value: Sendable, Equatable {
        /// A string.
        case string(String)
        /// An integer.
        case integer(Int)
        /// A floating-point number.
        case number(Double)
        /// `True` or `False`.
        case boolean(Bool)
        /// `None`.
        case none
        /// A list or tuple.
        case list([Value])
        /// A dict, its entries in the file's order.
        case dictionary([Entry])

        /// One entry of a dict.
        public struct Entry: Sendable, Equatable {
            /// The key.
            public let key: Value
            /// The value.
            public let value: Value
        }

        /// One per item at every level, plus a string's bytes: the work of copying it.
        var size: Int {
            switch self {
            case .list(let items): items.reduce(1) { $0 + $1.size }
            case .dictionary(let entries): entries.reduce(1) { $0 + $1.key.size + $1.value.size }
            case .string(let text): 1 + text.utf8.count
            default: 1
            }
        }

        /// The value as a setting's text: a string as it is, a boolean `true`/`false`, a number as
        /// written by Swift, a list's items joined by commas; nil for `None` and dicts.
        public var settingText: String? {
            switch self {
            case .string(let text): text
            case .integer(let value): String(value)
            case .number(let value): String(value)
            case .boolean(let value): String(value)
            case .none, .dictionary: nil
            case .list(let items): items.compactMap(\.settingText).joined(separator: ",")
            }
        }
    }

    /// The settings, by name, in the file's order (a name assigned twice keeps its last value).
    public private(set) var settings: [(name: String, value: Value)] = []

    /// The largest file read: thumbor.conf files are a few kilobytes.
    public static let maxBytes = 1 << 20
    /// The deepest nesting of brackets read.
    public static let maxDepth = 32
    /// The most work reading a file may take, in items made and bytes copied (a literal's
    /// items, a name's value each time it is used, both sides of each `+`): `A = A + A` repeated
    /// would double a list per line.
    public static let maxWork = 4_000_000

    /// The names a `from MODULE import NAME` may bring in, by module: thumbor's own.
    /// (Lists of strings, made into values when imported: a global holding an indirect enum's
    /// boxes is a leak to LeakSanitizer, which cannot follow Swift's tagged pointers.)
    static let imports: [String: [String: [String]]] = [
        "thumbor.filters": ["BUILTIN_FILTERS": ThumborFilter.builtinModules]
    ]

    /// The value of `name`, if the file sets it.
    public subscript(name: String) -> Value? { settings.last { $0.name == name }?.value }

    /// Reads `text`; throws ``ThumborConfigFile/Failure`` naming the line of the first thing that is
    /// not a literal assignment.
    public init(parsing text: String) throws(Failure) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maxBytes else { throw Failure(line: 1, "the file is larger than \(Self.maxBytes) bytes") }
        var reader = Reader(bytes: bytes)
        while true {
            reader.skipBlankLines()
            guard !reader.atEnd else { break }
            let line = reader.line
            guard let name = reader.name() else { throw Failure(line: line, "expected NAME = value") }
            reader.skipSpaces()
            if name == "from" || name == "import" {
                try reader.importStatement(line: line, startingWith: name)
                continue
            }
            guard reader.take(UInt8(ascii: "=")), reader.peek != UInt8(ascii: "=") else { throw Failure(line: line, "expected '=' after \(name)") }
            let value = try reader.expression(depth: 0)
            reader.skipSpaces()
            guard reader.atLineEnd else { throw Failure(line: reader.line, "unexpected text after the value of \(name)") }
            reader.names[name] = value
            settings.removeAll { $0.name == name }
            settings.append((name, value))
        }
    }

    public static func == (lhs: ThumborConfigFile, rhs: ThumborConfigFile) -> Bool {
        lhs.settings.map(\.name) == rhs.settings.map(\.name) && lhs.settings.map(\.value) == rhs.settings.map(\.value)
    }

    /// Why a file was refused, and where.
    public struct Failure: Error, Sendable, Equatable {
        /// The 1-based line.
        public let line: Int
        /// What was wrong.
        public let reason: String

        init(line: Int, _ reason: String) {
            self.line = line
            self.reason = reason
        }
    }
}

/// A cursor over the file's bytes that knows its line.
private struct Reader {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    /// What each name assigned or imported so far holds.
    var names: [String: ThumborConfigFile.Value] = [:]
    /// Work done so far (``ThumborConfigFile/maxWork``).
    var spent = 0

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// At a newline, a comment, or the end.
    var atLineEnd: Bool { peek == nil || peek == UInt8(ascii: "\n") || peek == UInt8(ascii: "\r") || peek == UInt8(ascii: "#") }

    mutating func advance() {
        if bytes[index] == UInt8(ascii: "\n") { line += 1 }
        index += 1
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        advance()
        return true
    }

    /// Spaces, tabs and backslash line continuations.
    mutating func skipSpaces() {
        while let byte = peek {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == 0x0C {
                advance()
            } else if byte == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") {
                advance()
                advance()
            } else {
                return
            }
        }
    }

    /// Whitespace, newlines and comments (inside brackets, and between statements).
    mutating func skipBlankLines() {
        while let byte = peek {
            if byte == UInt8(ascii: "#") {
                while let byte = peek, byte != UInt8(ascii: "\n") {
                    _ = byte
                    advance()
                }
            } else if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == 0x0C {
                advance()
            } else if byte == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") {
                advance()
                advance()
            } else {
                return
            }
        }
    }

    static func isNameStart(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: "_") }
    static func isNamePart(_ byte: UInt8) -> Bool { isNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) }

    /// An identifier, or nil.
    mutating func name() -> String? {
        guard let first = peek, Self.isNameStart(first) else { return nil }
        let start = index
        while let byte = peek, Self.isNamePart(byte) { advance() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// `from MODULE import NAME[, NAME…]` of a module and names ``ThumborConfigFile/imports`` has;
    /// any other import is refused.
    mutating func importStatement(line: Int, startingWith keyword: String) throws(ThumborConfigFile.Failure) {
        guard keyword == "from" else { throw .init(line: line, "imports are not read (only `from thumbor.filters import BUILTIN_FILTERS`)") }
        var module = ""
        while let byte = peek, Self.isNamePart(byte) || byte == UInt8(ascii: ".") {
            module.append(Character(Unicode.Scalar(byte)))
            advance()
        }
        skipSpaces()
        guard let exports = ThumborConfigFile.imports[module], name() == "import" else {
            throw .init(line: line, "imports are not read (only `from thumbor.filters import BUILTIN_FILTERS`)")
        }
        repeat {
            skipSpaces()
            guard let imported = name(), let value = exports[imported] else { throw .init(line: line, "\(module) has no name Imago reads there") }
            names[imported] = .list(value.map(ThumborConfigFile.Value.string))
            skipSpaces()
        } while take(UInt8(ascii: ","))
        guard atLineEnd else { throw .init(line: self.line, "unexpected text after the import") }
    }

    /// Values joined by `+`: lists into one list, strings into one string.
    mutating func expression(depth: Int) throws(ThumborConfigFile.Failure) -> ThumborConfigFile.Value {
        var result = try value(depth: depth)
        while true {
            if depth == 0 { skipSpaces() } else { skipBlankLines() }
            guard peek == UInt8(ascii: "+") else { return result }
            let line = line
            advance()
            let before = spent
            let next = try value(depth: depth)
            switch (result, next) {
            case (.list(let left), .list(let right)): result = .list(left + right)
            case (.string(let left), .string(let right)): result = .string(left + right)
            default: throw .init(line: line, "'+' joins two lists or two strings")
            }
            // The join copies both sides: charged as the value it makes.
            try spend(spent - before + result.size, line: line)
        }
    }

    /// Counts `units` of work towards ``ThumborConfigFile/maxWork``.
    mutating func spend(_ units: Int, line: Int) throws(ThumborConfigFile.Failure) {
        spent += units
        guard spent <= ThumborConfigFile.maxWork else {
            throw .init(line: line, "the values are larger than Imago reads (\(ThumborConfigFile.maxWork) items and bytes)")
        }
    }

    /// One value: a literal (adjacent strings joined) or a name assigned or imported before,
    /// charged by its size (a list's items charge themselves).
    mutating func value(depth: Int) throws(ThumborConfigFile.Failure) -> ThumborConfigFile.Value {
        let line = line
        let value = try term(depth: depth)
        switch value {
        case .list, .dictionary: try spend(1, line: line)
        default: try spend(value.size, line: line)
        }
        return value
    }

    mutating func term(depth: Int) throws(ThumborConfigFile.Failure) -> ThumborConfigFile.Value {
        guard depth < ThumborConfigFile.maxDepth else { throw .init(line: line, "brackets nested deeper than \(ThumborConfigFile.maxDepth)") }
        if depth == 0 { skipSpaces() } else { skipBlankLines() }
        let line = line
        guard let byte = peek else { throw .init(line: line, "a value is missing") }
        switch byte {
        case UInt8(ascii: "["): return .list(try items(closing: UInt8(ascii: "]"), depth: depth))
        case UInt8(ascii: "("): return .list(try items(closing: UInt8(ascii: ")"), depth: depth))
        case UInt8(ascii: "{"): return try dictionary(depth: depth)
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "'"), UInt8(ascii: "\""): return try strings(depth: depth)
        default:
            let start = index
            guard let word = name() else { throw .init(line: line, "'\(Character(Unicode.Scalar(byte)))' does not start a literal") }
            switch word {
            case "True": return .boolean(true)
            case "False": return .boolean(false)
            case "None": return .none
            default:
                if ["r", "R", "u", "U"].contains(word), peek == UInt8(ascii: "'") || peek == UInt8(ascii: "\"") {
                    index = start
                    return try strings(depth: depth)
                }
                if let named = names[word] {
                    // Its items are charged each time it is used.
                    if case .list = named { try spend(named.size - 1, line: line) } else if case .dictionary = named { try spend(named.size - 1, line: line) }
                    return named
                }
                throw .init(line: line, "'\(word)' is not a literal (the file is read, never run)")
            }
        }
    }

    /// Items up to `closing`, comma-separated, a trailing comma allowed.
    mutating func items(closing: UInt8, depth: Int) throws(ThumborConfigFile.Failure) -> [ThumborConfigFile.Value] {
        advance()
        var items: [ThumborConfigFile.Value] = []
        while true {
            skipBlankLines()
            if take(closing) { return items }
            items.append(try expression(depth: depth + 1))
            skipBlankLines()
            if take(closing) { return items }
            guard take(UInt8(ascii: ",")) else { throw .init(line: line, "expected ',' or '\(Character(Unicode.Scalar(closing)))'") }
        }
    }

    mutating func dictionary(depth: Int) throws(ThumborConfigFile.Failure) -> ThumborConfigFile.Value {
        advance()
        var entries: [ThumborConfigFile.Value.Entry] = []
        while true {
            skipBlankLines()
            if take(UInt8(ascii: "}")) { return .dictionary(entries) }
            let key = try expression(depth: depth + 1)
            skipBlankLines()
            guard take(UInt8(ascii: ":")) else { throw .init(line: line, "expected ':' in a dict") }
            entries.append(.init(key: key, value: try expression(depth: depth + 1)))
            skipBlankLines()
            if take(UInt8(ascii: "}")) { return .dictionary(entries) }
            guard take(UInt8(ascii: ",")) else { throw .init(line: line, "expected ',' or '}'") }
        }
    }

    /// An integer (decimal, 0x, 0o, 0b; underscores allowed) or a float, signed.
    mutating func number() throws(ThumborConfigFile.Failure) -> ThumborConfigFile.Value {
        let line = line
        var negative = false
        while let sign = peek, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            if sign == UInt8(ascii: "-") { negative.toggle() }
            advance()
            skipSpaces()
        }
        let start = index
        while let byte = peek,
            Self.isNamePart(byte) || byte == UInt8(ascii: ".")
                || ((byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")) && index > start && (bytes[index - 1] | 0x20) == UInt8(ascii: "e")
                    && !String(decoding: bytes[start..<index], as: UTF8.self).lowercased().hasPrefix("0x"))
        {
            advance()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self).replacingOccurrences(of: "_", with: "").lowercased()
        let radixes: [(String, Int)] = [("0x", 16), ("0o", 8), ("0b", 2)]
        if let (prefix, radix) = radixes.first(where: { text.hasPrefix($0.0) }), let value = Int(text.dropFirst(prefix.count), radix: radix) {
            return .integer(negative ? -value : value)
        }
        if let value = Int(text) { return .integer(negative ? -value : value) }
        if !text.isEmpty, text.allSatisfy({ "0123456789.e+-".contains($0) }), let value = Double(text), value.isFinite {
            return .number(negative ? -value : value)
        }
        throw .init(line: line, "'\(text)' is not a number")
    }

    /// One string literal or more side by side (Python joins them).
    mutating func strings(depth: Int) throws(ThumborConfigFile.Failure) -> ThumborConfigFile.Value {
        var text = ""
        repeat {
            text += try string()
            if depth == 0 { skipSpaces() } else { skipBlankLines() }
        } while peek == UInt8(ascii: "'") || peek == UInt8(ascii: "\"") || startsPrefixedString
        return .string(text)
    }

    var startsPrefixedString: Bool {
        guard index + 1 < bytes.count else { return false }
        return [UInt8(ascii: "r"), UInt8(ascii: "R"), UInt8(ascii: "u"), UInt8(ascii: "U")].contains(bytes[index])
            && (bytes[index + 1] == UInt8(ascii: "'") || bytes[index + 1] == UInt8(ascii: "\""))
    }

    mutating func string() throws(ThumborConfigFile.Failure) -> String {
        let line = line
        var raw = false
        if let byte = peek, byte | 0x20 == UInt8(ascii: "r") || byte | 0x20 == UInt8(ascii: "u") {
            raw = byte | 0x20 == UInt8(ascii: "r")
            advance()
        }
        guard let quote = peek else { throw .init(line: line, "a string is missing") }
        let triple = index + 2 < bytes.count && bytes[index + 1] == quote && bytes[index + 2] == quote
        for _ in 0..<(triple ? 3 : 1) { advance() }
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw .init(line: line, "a string is not closed") }
            if byte == quote, !triple || (index + 2 < bytes.count && bytes[index + 1] == quote && bytes[index + 2] == quote) {
                for _ in 0..<(triple ? 3 : 1) { advance() }
                return String(decoding: out, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n"), !triple { throw .init(line: line, "a string is not closed on its line") }
            advance()
            guard byte == UInt8(ascii: "\\"), let escaped = peek else {
                out.append(byte)
                continue
            }
            advance()
            if raw {
                out += [byte, escaped]
                continue
            }
            switch escaped {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "0"): out.append(0)
            case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""): out.append(escaped)
            case UInt8(ascii: "\n"): break
            case UInt8(ascii: "x"), UInt8(ascii: "u"):
                let digits = escaped == UInt8(ascii: "x") ? 2 : 4
                guard index + digits <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + digits], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(code)
                else { throw .init(line: line, "a \\\(Character(Unicode.Scalar(escaped))) escape is malformed") }
                for _ in 0..<digits { advance() }
                out += Array(String(Character(scalar)).utf8)
            default: out += [byte, escaped]
            }
        }
    }
}
