import Foundation

/// Loads `file://` URLs, streaming the file in chunks so progress and the size limit work as for
/// the network, and a cancelled load stops between chunks.
///
/// A regular file answers as a server that reads ranges: `Accept-Ranges: bytes` and its
/// modification date as `Last-Modified`, and a request with `Range: bytes=first-last` (and an
/// `If-Range` naming that date, if any) gets status `206` with just those bytes. So a large local
/// video is read by ranges as a remote one is (``ImagePipeline/Configuration/rangeReadMinimumSize``),
/// not whole.
public struct FileDataLoader: DataLoading {
    public let loaderPriority: Int
    /// Bytes read per chunk.
    public let chunkSize: Int

    /// Makes a file loader.
    public init(loaderPriority: Int = 0, chunkSize: Int = 256 * 1024) {
        self.loaderPriority = loaderPriority
        self.chunkSize = chunkSize
    }

    public func canLoad(_ url: URL) -> Bool { url.isFileURL }

    public func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
        let url = request.url
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw ImagoError(.fileNotFound, url: url, underlying: error)
        }
        defer { try? handle.close() }
        // Not seekable (a pipe, a device): stream it with an unknown length.
        let size = try? Int64(handle.seekToEnd())
        if size != nil { try? handle.seek(toOffset: 0) }
        var remaining = Int64.max
        var head = ResponseHead(url: url, expectedContentLength: size)
        if let size, let modified = Self.modificationDate(url) {
            let date = HTTPDate.format(modified)
            head.headers = ["Accept-Ranges": "bytes", "Last-Modified": date, "Content-Length": String(size)]
            if let range = request.headers["Range"].flatMap({ Self.byteRange($0, size: size) }),
                request.headers["If-Range"].map({ $0 == date }) ?? true
            {
                head.statusCode = 206
                head.headers["Content-Length"] = String(range.count)
                head.headers.append(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)")
                head.expectedContentLength = Int64(range.count)
                do {
                    try handle.seek(toOffset: UInt64(range.lowerBound))
                } catch {
                    throw ImagoError(.fileNotFound, url: url, underlying: error)
                }
                remaining = Int64(range.count)
            }
        }
        try sink.receive(head)
        while remaining > 0 {
            try Task.checkCancellation()
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: Int(min(Int64(chunkSize), remaining)))
            } catch {
                throw ImagoError(.fileNotFound, url: url, underlying: error)
            }
            guard let chunk, !chunk.isEmpty else { return }
            remaining -= Int64(chunk.count)
            try sink.receive(chunk)
        }
    }

    /// A regular file's modification date; nil for anything else.
    private static func modificationDate(_ url: URL) -> Date? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { return nil }
        return attributes[.modificationDate] as? Date
    }

    /// `bytes=first-last` (one range, both ends given, within the file); nil for anything else,
    /// which is answered whole.
    static func byteRange(_ header: String, size: Int64) -> Range<Int64>? {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes=") else { return nil }
        let bounds = text.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, bounds.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 18 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
            let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last, last < size
        else { return nil }
        return first..<(last + 1)
    }
}
