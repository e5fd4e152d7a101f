import Foundation

@testable import ImagoServer

/// Hostile bytes as a shared result store gives them back (``StoredResult``): read only when
/// whole, for the key asked for, with a matching checksum. The expected key is the input's own
/// `key` line, so the fuzzer reaches past it; what reads back must encode and read back the same.
enum ResultStoreFeed {
    static func run(_ data: Data) {
        let head = String(decoding: data.prefix(StoredResult.maxHeadBytes), as: UTF8.self)
        let key = head.split(separator: "\n").first { $0.hasPrefix("key ") }.map { String($0.dropFirst(4)) } ?? ""
        guard let result = StoredResult(decoding: data, keyDigest: key) else { return }
        guard StoredResult(decoding: result.encoded(), keyDigest: key) == result else { fatalError("a stored result did not read back") }
        // What a client would see: header values of printable characters only.
        precondition(!(result.contentType + result.etag + (result.lastModified ?? "")).contains { $0 == "\r" || $0 == "\n" })
    }
}
