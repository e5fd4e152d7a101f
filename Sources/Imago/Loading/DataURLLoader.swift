import Foundation

/// Loads `data:` URIs (RFC 2397), base64 or percent-encoded.
public struct DataURLLoader: DataLoading {
    public let loaderPriority: Int

    /// Makes a `data:` loader.
    public init(loaderPriority: Int = 0) {
        self.loaderPriority = loaderPriority
    }

    public func canLoad(_ url: URL) -> Bool { url.scheme?.lowercased() == "data" }

    public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
        let (mediaType, data) = try Self.decode(request.url)
        try sink.receive(
            ResponseHead(
                url: request.url,
                headers: ["Content-Type": mediaType],
                expectedContentLength: Int64(data.count)
            ))
        try sink.receive(data)
    }

    /// The media type and the bytes of a `data:` URI (RFC 2397, base64 or percent-encoded);
    /// `invalidURL` when it is malformed.
    public static func decode(_ url: URL) throws(ImagoError) -> (mediaType: String, data: Data) {
        let text = url.absoluteString
        guard let colon = text.firstIndex(of: ":"), let comma = text.firstIndex(of: ","), colon < comma else {
            throw ImagoError(.invalidURL, url: url)
        }
        let header = text[text.index(after: colon)..<comma]
        let payload = String(text[text.index(after: comma)...])
        var parameters = header.split(separator: ";").map(String.init)
        let isBase64 = parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let mediaType = parameters.first.flatMap { $0.isEmpty ? nil : $0 } ?? "text/plain"
        if isBase64 {
            let cleaned = (payload.removingPercentEncoding ?? payload).filter { !$0.isWhitespace }
            let padded = cleaned + String(repeating: "=", count: (4 - cleaned.count % 4) % 4)
            guard let data = Data(base64Encoded: padded) else { throw ImagoError(.invalidURL, url: url) }
            return (mediaType, data)
        }
        guard let bytes = Self.percentDecoded(payload) else { throw ImagoError(.invalidURL, url: url) }
        return (mediaType, bytes)
    }

    /// Percent-decodes to raw bytes (not to a string: the payload may be binary).
    private static func percentDecoded(_ text: String) -> Data? {
        var out = Data()
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
