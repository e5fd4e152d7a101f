import Foundation

@testable import Imago

/// A hostile origin behind a source read by ranges: each range request is answered as the
/// fuzzer's bytes say (a status, a `Content-Range` that is right, shifted, of another length or
/// made of the fuzzer's text, a body of the right length or not), and reads at the offsets the
/// bytes choose must copy exactly the body's bytes or fail, never trap, never pass the fetch
/// budget.
enum RangedSourceFeed {
    /// The true body's byte at `offset`: a pattern in which any wrong copy shows.
    @Sendable static func byte(at offset: Int64) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 7 &+ offset >> 8) }

    static func run(_ data: Data) {
        var stream = ByteStream(data)
        let length = Int64(300_000 + stream.uint24() % 3_000_000)
        let url = URL(string: "http://origin.test/video.mp4")!
        let head = ResponseHead(
            url: url, statusCode: 200, headers: ["Accept-Ranges": "bytes", "ETag": "\"v\"", "Content-Length": String(length)],
            expectedContentLength: length)
        let prefix = Data((0..<Int64(256 << 10)).map(Self.byte(at:)))
        let answers = Locked(Array(stream.bytes(512)))
        let budget = Int64(1 << 20) + Int64(stream.uint16()) * 64
        guard
            let source = RangedSource(
                response: head, prefix: prefix, request: DataLoadRequest(url: url), maxFetchedBytes: budget, deadline: .now + .seconds(20),
                fetch: { request, sink in
                    guard let asked = request.headers["Range"], asked.hasPrefix("bytes="),
                        case let bounds = asked.dropFirst(6).split(separator: "-"), bounds.count == 2,
                        let first = Int64(bounds[0]), let last = Int64(bounds[1])
                    else { throw ImagoError(.invalidResponse, url: url) }
                    let choice = answers.withLock { list -> [UInt8] in
                        let taken = Array(list.prefix(3))
                        list.removeFirst(min(3, list.count))
                        return taken + [UInt8](repeating: 0, count: 3 - taken.count)
                    }
                    let status = [206, 206, 206, 200, 404, 206, 416, 206][Int(choice[0] % 8)]
                    let shift = Int64(choice[1] % 4 == 0 ? Int(choice[1] >> 2) - 32 : 0)
                    let range: String
                    switch choice[2] % 5 {
                    case 0: range = "bytes \(first + shift)-\(last + shift)/\(length + (choice[1] % 3 == 0 ? 1 : 0))"
                    case 1: range = "bytes \(first)-\(last)/*"
                    case 2: range = String(decoding: choice, as: UTF8.self)
                    default: range = "bytes \(first)-\(last)/\(length)"
                    }
                    let count = max(0, last - first + 1 + (choice[2] % 7 == 0 ? shift : 0))
                    try sink.receive(
                        ResponseHead(
                            url: url, statusCode: status, headers: ["Content-Range": range, "ETag": "\"v\""], expectedContentLength: count))
                    let body = Data((first..<(first + min(count, 4 << 20))).map(Self.byte(at:)))
                    try sink.receive(body)
                })
        else { fatalError("a response that can be read by ranges was refused") }
        var buffer = [UInt8](repeating: 0, count: 96 << 10)
        for _ in 0..<6 {
            let offset = Int64(stream.uint24()) * 4 % (length + 1000)
            let size = 1 + Int(stream.uint16()) % buffer.count
            let copied = buffer.withUnsafeMutableBytes { bytes in
                source.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<size]), at: offset, until: .now + .seconds(20))
            }
            guard let copied else { break }
            guard copied <= size, offset + Int64(copied) <= length else { fatalError("read past what was asked or the body") }
            for index in 0..<copied where buffer[index] != Self.byte(at: offset + Int64(index)) {
                fatalError("a byte read back is not the body's at \(offset + Int64(index))")
            }
        }
        guard source.fetchedBytes <= budget else { fatalError("fetched \(source.fetchedBytes) past the budget \(budget)") }
    }
}
