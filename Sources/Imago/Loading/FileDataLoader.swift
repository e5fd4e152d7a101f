import Foundation

/// Loads `file://` URLs, streaming the file in chunks so progress and the size limit work as for
/// the network, and a cancelled load stops between chunks.
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
        try sink.receive(ResponseHead(url: url, expectedContentLength: size))
        while true {
            try Task.checkCancellation()
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: chunkSize)
            } catch {
                throw ImagoError(.fileNotFound, url: url, underlying: error)
            }
            guard let chunk, !chunk.isEmpty else { return }
            try sink.receive(chunk)
        }
    }
}
