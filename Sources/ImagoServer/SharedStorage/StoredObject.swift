import Crypto
import Foundation

/// One object as a shared store holds it: a made variant (``Kind/result``) or an original fetched
/// from its origin (``Kind/source``). A short text head (what it is, whose key, when it was stored,
/// its type and validators, a source's freshness, its length and SHA-256), a blank line, then the
/// bytes. What a store gives back is read only when it is whole, of the kind and key asked for, and
/// its checksum matches: a store may be shared, stale, truncated or hostile.
struct StoredObject: Equatable {
    /// What an object holds; each has its own first line, so one is never read as the other.
    enum Kind: String, Sendable {
        /// A variant the server made (`--result-storage`).
        case result
        /// An original as its origin sent it (`--source-storage`).
        case source
    }

    var kind: Kind
    /// The SHA-256 (hex) of the object's key: an object renamed or copied is not another's.
    var keyDigest: String
    /// When it was stored (a source: received), in whole seconds since 1970: its age for expiry
    /// and a source's freshness.
    var storedAt: Int64
    var contentType: String
    /// A variant's ETag (the server's own, strong); a source's as its origin sent it, if any.
    var etag: String?
    var lastModified: String?
    /// A source's freshness as its origin gave it, rewritten (`max-age=N`, `immutable`,
    /// `must-revalidate`); nil for a variant.
    var cacheControl: String?
    /// A source's age when it was received, in seconds.
    var age: Int64?
    var body: Data

    /// The head is never longer: a store's bytes are not searched further for its end.
    static let maxHeadBytes = 2_048

    init(
        kind: Kind, keyDigest: String = "", storedAt: Int64, contentType: String, etag: String?, lastModified: String?,
        cacheControl: String? = nil, age: Int64? = nil, body: Data
    ) {
        (self.kind, self.keyDigest, self.storedAt, self.contentType, self.etag, self.lastModified) =
            (kind, keyDigest, storedAt, contentType, etag, lastModified)
        (self.cacheControl, self.age, self.body) = (cacheControl, age, body)
    }

    /// A made variant as the result store keeps it, stored now.
    init(_ variant: EncodedVariant) {
        self.init(
            kind: .result, storedAt: Int64(Date().timeIntervalSince1970), contentType: variant.mimeType, etag: variant.etag,
            lastModified: variant.sourceCaching.lastModified, body: variant.data)
    }

    private static func magic(_ kind: Kind) -> String { "imago-\(kind.rawValue) 1" }

    /// The object's bytes.
    func encoded() -> Data {
        var head = Self.magic(kind) + "\nkey " + keyDigest + "\nstored " + String(storedAt) + "\ntype " + contentType
        if let etag { head += "\netag " + etag }
        if let lastModified { head += "\nlast-modified " + lastModified }
        if let cacheControl { head += "\ncache-control " + cacheControl }
        if let age { head += "\nage " + String(age) }
        head += "\nlength " + String(body.count) + "\nsha256 " + Self.hex(SHA256.hash(data: body)) + "\n\n"
        var data = Data(head.utf8)
        data.append(body)
        return data
    }

    /// The object held in `data` when it is whole, a `kind` for `keyDigest`, and its checksum
    /// matches; nil for anything else.
    init?(decoding data: Data, kind: Kind, keyDigest expected: String) {
        let separator = Data("\n\n".utf8)
        guard let end = data.prefix(Self.maxHeadBytes).range(of: separator) else { return nil }
        let head = data[data.startIndex..<end.lowerBound]
        // Printable ASCII lines only: nothing in a header a client or an origin sees can break its line.
        guard head.allSatisfy({ $0 == 0x0A || (0x20...0x7E).contains($0) }) else { return nil }
        var lines = String(decoding: head, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(Self.magic(kind)) else { return nil }
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
            let type = fields["type"], Self.isMediaType(type),
            let length = fields["length"].flatMap({ Int($0) }), length == body.count,
            fields["sha256"] == Self.hex(SHA256.hash(data: body))
        else { return nil }
        let (etag, lastModified, cacheControl) = (fields["etag"], fields["last-modified"], fields["cache-control"])
        let age = fields["age"].map { Int64($0) ?? -1 }
        switch kind {
        case .result:
            // The server's own answers: a strong ETag always, no freshness of a source's.
            guard let etag, Self.isStrongETag(etag), cacheControl == nil, age == nil else { return nil }
        case .source:
            guard etag.map({ !$0.isEmpty && $0.count <= 128 }) ?? true, cacheControl.map({ !$0.isEmpty && $0.count <= 128 }) ?? true,
                age.map({ $0 >= 0 }) ?? true
            else { return nil }
        }
        if let lastModified, lastModified.isEmpty || lastModified.count > 64 { return nil }
        self.init(
            kind: kind, keyDigest: expected, storedAt: stored, contentType: type, etag: etag, lastModified: lastModified, cacheControl: cacheControl,
            age: age, body: Data(body))
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
