/// HTTP header fields, in order: what a request sends, what a loader reports, what a response
/// carries. One shape everywhere, written as a dictionary literal (`["Accept": "image/webp"]`).
///
/// Names compare ignoring ASCII case (RFC 9110 §5.1), byte by byte (Foundation's
/// `caseInsensitiveCompare` goes through CFString and the locale, which showed in the profile of
/// every transfer). A name may appear more than once; the subscript reads the first.
public struct HeaderFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One field: a name and its value.
    public struct Field: Sendable, Hashable {
        /// The name as written.
        public var name: String
        /// The value.
        public var value: String

        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// No fields.
    public init() { fields = [] }

    /// These fields, in this order.
    public init(_ fields: some Sequence<Field>) { self.fields = Array(fields) }

    /// `["Name": "value", …]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The value of the first field named `name`. Setting replaces every field of that name (in the
    /// place of the first); nil removes them.
    public subscript(name: String) -> String? {
        get { fields.first { Self.namesMatch($0.name, name) }?.value }
        set {
            let first = fields.firstIndex { Self.namesMatch($0.name, name) }
            fields.removeAll { Self.namesMatch($0.name, name) }
            guard let newValue else { return }
            fields.insert(Field(name: name, value: newValue), at: first ?? fields.count)
        }
    }

    /// Every value of the fields named `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any of the same name.
    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Appends every field of `other`, keeping those here.
    public mutating func append(contentsOf other: HeaderFields) {
        fields += other.fields
    }

    /// Removes the fields that `shouldRemove` picks.
    public mutating func removeAll(where shouldRemove: (Field) throws -> Bool) rethrows {
        try fields.removeAll(where: shouldRemove)
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// These fields, then `other`'s, each of `other`'s names replacing the same name here.
    public func merging(_ other: HeaderFields) -> HeaderFields {
        var merged = self
        for name in other.names { merged.remove(name) }
        merged.fields += other.fields
        return merged
    }

    /// Whether there is no field.
    public var isEmpty: Bool { fields.isEmpty }

    /// How many fields.
    public var count: Int { fields.count }

    /// The fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// `Name: value` lines.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    /// Equal when the same names (ignoring case) carry the same values in the same order.
    public static func == (left: HeaderFields, right: HeaderFields) -> Bool {
        left.fields.count == right.fields.count
            && zip(left.fields, right.fields).allSatisfy { namesMatch($0.name, $1.name) && $0.value == $1.value }
    }

    /// Hashes names in lower case and values.
    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }

    /// The distinct names, first spelling of each.
    private var names: [String] {
        var seen: [String] = []
        for field in fields where !seen.contains(where: { Self.namesMatch($0, field.name) }) { seen.append(field.name) }
        return seen
    }

    /// Whether two header names are equal ignoring ASCII case.
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        let a = a.utf8, b = b.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z"))
        }
    }
}
