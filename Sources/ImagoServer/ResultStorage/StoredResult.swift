import Crypto
import Foundation

/// One variant as the shared result store holds it: a short text head (whose key it is, when it
/// was stored, its type, ETag and the source's `Last-Modified`, its length and SHA-256), a blank
/// line, then the bytes. What a store gives back is read only when it is whole, its checksum
/// matches and it is the key asked for: a store may be shared, stale, truncated or hostile.
struct StoredResult: Equatable {
    /// The SHA-256 (hex) of the variant's key: an object renamed or copied is not another's.
    var keyDigest: String
    /// When it was stored, in whole seconds since 1970: its age for the store's expiry.
    var storedAt: Int64
    var contentType: String
    var etag: String
    var lastModified: String?
    var body: Data

    private static let magic = "imago-result 1"
    /// The head is never longer: a store's bytes are not searched further for its end.
    static let maxHeadBytes = 2_048

    /// The object's bytes.
    func encoded() -> Data {
        var head = Self.magic + "\nkey " + keyDigest + "\nstored " + String(storedAt) + "\ntype " + contentType + "\netag " + etag
        if let lastModified { head += "\nlast-modified " + lastModified }
        head += "\nlength " + String(body.count) + "\nsha256 " + Self.hex(SHA256.hash(data: body)) + "\n\n"
        var data = Data(head.utf8)
        data.append(body)
        return data
    }

    /// The result held in `data` when it is whole, for `keyDigest`, and its checksum matches; nil
    /// for anything else.
    init?(decoding data: Data, keyDigest expected: String) {
        let separator = Data("\n\n".utf8)
        guard let end = data.prefix(Self.maxHeadBytes).range(of: separator) else { return nil }
        let head = data[data.startIndex..<end.lowerBound]
        // Printable ASCII lines only: nothing in a header a client sees can break its line.
        guard head.allSatisfy({ $0 == 0x0A || (0x20...0x7E).contains($0) }) else { return nil }
        var lines = String(decoding: head, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(Self.magic) else { return nil }
        lines.removeFirst()
        var fields: [String: String] = [:]
        for line in lines {
            guard let space = line.firstIndex(of: " ") else { return nil }
            let name = String(line[..<space])
            guard fields[name] == nil else { return nil }
            fields[name] = String(line[line.index(after: space)...])
        }
        let body = data[end.upperBound...]
        guard fields["key"] == expected, let stored = fields["stored"].flatMap({ Int64($0) }), stored >= 0,
            let type = fields["type"], Self.isMediaType(type), let etag = fields["etag"], Self.isStrongETag(etag),
            let length = fields["length"].flatMap({ Int($0) }), length == body.count,
            fields["sha256"] == Self.hex(SHA256.hash(data: body))
        else { return nil }
        let lastModified = fields["last-modified"]
        if let lastModified, lastModified.isEmpty || lastModified.count > 64 { return nil }
        self.init(keyDigest: expected, storedAt: stored, contentType: type, etag: etag, lastModified: lastModified, body: Data(body))
    }

    init(keyDigest: String, storedAt: Int64, contentType: String, etag: String, lastModified: String?, body: Data) {
        (self.keyDigest, self.storedAt, self.contentType, self.etag, self.lastModified, self.body) =
            (keyDigest, storedAt, contentType, etag, lastModified, body)
    }

    /// `type/subtype` of letters, digits and `+-.`: what the server's own answers carry.
    static func isMediaType(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return text.count <= 64 && parts.count == 2
            && parts.allSatisfy { part in !part.isEmpty && part.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E } }
    }

    /// A quoted ETag of letters and digits, as the server makes them.
    static func isStrongETag(_ text: String) -> Bool {
        text.count >= 3 && text.count <= 80 && text.hasPrefix("\"") && text.hasSuffix("\"")
            && text.utf8.dropFirst().dropLast().allSatisfy(\.isASCIIAlphanumeric)
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool { (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
}
