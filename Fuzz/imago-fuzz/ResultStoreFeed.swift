import Foundation
import Imago

@testable import ImagoServer

/// Hostile bytes as a shared store gives them back (``StoredObject``), read as a variant and as
/// an original: read only when whole, of the kind and key asked for, with a matching checksum. The
/// expected key is the input's own `key` line, so the fuzzer reaches past it; what reads back must
/// encode and read back the same, and an original's freshness must read through HTTP's rules.
enum ResultStoreFeed {
    static func run(_ data: Data) {
        let head = String(decoding: data.prefix(StoredObject.maxHeadBytes), as: UTF8.self)
        let key = head.split(separator: "\n").first { $0.hasPrefix("key ") }.map { String($0.dropFirst(4)) } ?? ""
        for kind in [StoredObject.Kind.result, .source] {
            guard let object = StoredObject(decoding: data, kind: kind, keyDigest: key) else { continue }
            guard StoredObject(decoding: object.encoded(), kind: kind, keyDigest: key) == object else { fatalError("a stored object did not read back") }
            // What a client or an origin would see: header values of printable characters only.
            let said = object.contentType + (object.etag ?? "") + (object.lastModified ?? "") + (object.cacheControl ?? "")
            precondition(!said.contains { $0 == "\r" || $0 == "\n" })
            if kind == .source { _ = SourceStorage.entry(object, key: key).metadata.isFresh(at: Date()) }
        }
    }
}
