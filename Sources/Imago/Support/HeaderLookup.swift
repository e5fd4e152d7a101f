/// The value of the first header named `name` among `headers`. Names compare ignoring ASCII case
/// (RFC 9110 §5.1), byte by byte: Foundation's `caseInsensitiveCompare` goes through CFString and
/// the locale, which showed in the profile of every transfer.
func headerValue(_ name: String, in headers: [(name: String, value: String)]) -> String? {
    headers.first { headerNamesMatch($0.name, name) }?.value
}

/// Whether two header names are equal ignoring ASCII case.
func headerNamesMatch(_ a: String, _ b: String) -> Bool {
    let a = a.utf8, b = b.utf8
    guard a.count == b.count else { return false }
    return zip(a, b).allSatisfy { x, y in
        x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z"))
    }
}
