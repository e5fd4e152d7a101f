import Dispatch
import Foundation

/// A large source read by range requests as its decoder asks for bytes, instead of downloaded
/// whole: a video whose frame at one second needs its index (often at the end) and one group of
/// pictures, a small fraction of the file.
///
/// The pipeline makes one when a transfer's response is large, says `Accept-Ranges: bytes` with a
/// validator (``ResumableData/validator(of:)``), and its first bytes are a format whose decoder
/// reads ranges (``DecoderRegistry/readsRanges(_:)``): the transfer stops after those first bytes
/// (``prefix``). Every later range names the validator in `If-Range` and must come back as that
/// version's `206` for exactly the bytes asked; anything else stops the decode. What it keeps is
/// bounded (``maxKeptBytes``), what it fetches is bounded by the transfer's size limit, and every
/// wait by the transfer's deadline and the decode's.
final class RangedSource: Sendable, Hashable {
    /// Fetches one range: the pipeline's loader, behind its request modifier and rate limiter.
    typealias Fetch = @Sendable (DataLoadRequest, DataSink) async throws -> Void

    private struct State {
        /// Ranges fetched, oldest first.
        var segments: [(start: Int64, data: Data)] = []
        var keptBytes = 0
        /// Where the last fetch ended: a read there continues a sequential run, read ahead further.
        var lastEnd: Int64 = -1
        var readAhead = RangedSource.firstRead
        var fetchedBytes: Int64 = 0
        var failure: ImagoError?
    }

    /// Where the body came from (after the first transfer's redirects), for errors.
    let url: URL
    /// The whole body's length, as the first response announced it.
    let length: Int64
    /// The first response's strong `ETag` or `Last-Modified`, sent as `If-Range`.
    let validator: String
    /// The body's first bytes, from the first transfer.
    let prefix: Data
    private let request: DataLoadRequest
    private let fetch: Fetch
    private let maxFetchedBytes: Int64
    private let deadline: ContinuousClock.Instant?
    private let state = Locked(State())

    /// Bytes of fetched ranges kept at most (besides ``prefix``): what a decode over it holds.
    static let maxKeptBytes = 8 << 20
    /// The first range read at a new place; a read that continues the last doubles it, up to ``maxRead``.
    static let firstRead = 256 << 10
    static let maxRead = 2 << 20

    /// A source of `response`'s body read by ranges, its first bytes `prefix`. `request` is the
    /// first transfer's (its URL and headers go with every range); at most `maxFetchedBytes` are fetched in all; no wait passes `deadline`.
    init?(
        response: ResponseHead, prefix: Data, request: DataLoadRequest, maxFetchedBytes: Int64, deadline: ContinuousClock.Instant?,
        fetch: @escaping Fetch
    ) {
        guard let length = response.expectedContentLength, Int64(prefix.count) < length, let validator = ResumableData.validator(of: response)
        else { return nil }
        self.url = response.url
        self.length = length
        self.validator = validator
        self.prefix = prefix
        // Every range asks the first request's URL again (an object store's URL is not the http
        // one it answered from; a redirect is followed, and checked, again each time).
        var request = request
        for name in ["Range", "If-Range", "If-None-Match", "If-Modified-Since"] { request.headers.remove(name) }
        self.request = request
        self.fetch = fetch
        self.maxFetchedBytes = maxFetchedBytes
        self.deadline = deadline
    }

    /// Bytes fetched by ranges so far.
    var fetchedBytes: Int64 { state.withLock { $0.fetchedBytes } }

    /// Why a read failed, once one has.
    var failure: ImagoError? { state.withLock { $0.failure } }

    /// Copies up to `count` bytes at `offset` into `buffer`, fetching a range when they are not
    /// kept, waiting at most until `deadline` (and the transfer's). Returns the count copied, 0 at
    /// the end, nil when the bytes cannot be had (``failure`` says why). Blocks its thread: call it
    /// from a decoder's thread, never from Swift's cooperative pool.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, until deadline: ContinuousClock.Instant?) -> Int? {
        guard offset >= 0, failure == nil else { return nil }
        guard offset < length, buffer.count > 0 else { return 0 }
        if offset < Int64(prefix.count) { return Self.copy(prefix, from: 0, at: offset, into: buffer) }
        if let copied = kept(at: offset, into: buffer) { return copied }
        let wanted = state.withLock { state -> Range<Int64> in
            state.readAhead = offset == state.lastEnd ? min(state.readAhead * 2, Self.maxRead) : Self.firstRead
            let size = max(Int64(state.readAhead), Int64(buffer.count))
            return offset..<min(length, offset + size)
        }
        switch fetchBlocking(wanted, until: [deadline, self.deadline].compactMap { $0 }.min()) {
        case .failure(let error):
            state.withLock { state in
                if state.failure == nil { state.failure = error }
            }
            return nil
        case .success(let data):
            state.withLock { state in
                state.segments.append((wanted.lowerBound, data))
                state.keptBytes += data.count
                state.lastEnd = wanted.upperBound
                while state.keptBytes > Self.maxKeptBytes, state.segments.count > 1 {
                    state.keptBytes -= state.segments.removeFirst().data.count
                }
            }
            return Self.copy(data, from: wanted.lowerBound, at: offset, into: buffer)
        }
    }

    private func kept(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        state.withLock { state in
            // Newest first: a sequential read finds its range at once.
            for segment in state.segments.reversed() where offset >= segment.start && offset < segment.start + Int64(segment.data.count) {
                return Self.copy(segment.data, from: segment.start, at: offset, into: buffer)
            }
            return nil
        }
    }

    private static func copy(_ data: Data, from start: Int64, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let first = data.startIndex + Int(offset - start)
        let count = min(buffer.count, data.endIndex - first)
        data.copyBytes(to: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), from: first..<(first + count))
        return count
    }

    /// Fetches `range` on Swift's pool and waits for it on this thread.
    private func fetchBlocking(_ range: Range<Int64>, until deadline: ContinuousClock.Instant?) -> Result<Data, ImagoError> {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<Data, ImagoError>?>(nil)
        let task = Task {
            let result = await self.fetchRange(range)
            outcome.withLock { $0 = result }
            done.signal()
        }
        if let deadline {
            let remaining: Duration = max(.zero, deadline - ContinuousClock.now)
            let (seconds, attoseconds) = remaining.components
            let nanoseconds = Int(min(seconds, 1_000_000)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            if done.wait(timeout: DispatchTime.now() + .nanoseconds(nanoseconds)) == .timedOut {
                task.cancel()
                return .failure(ImagoError(.timedOut, url: url))
            }
        } else {
            done.wait()
        }
        return outcome.withLock { $0 } ?? .failure(ImagoError(.cancelled, url: url))
    }

    /// One range request: `206` for exactly `range` of the same version, within the fetch budget.
    private func fetchRange(_ range: Range<Int64>) async -> Result<Data, ImagoError> {
        let count = range.upperBound - range.lowerBound
        let over = state.withLock { state -> Bool in
            guard state.fetchedBytes + count <= maxFetchedBytes else { return true }
            state.fetchedBytes += count
            return false
        }
        if over { return .failure(ImagoError(.tooLarge(limit: maxFetchedBytes), url: url)) }
        var ranged = request
        ranged.headers.append(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        ranged.headers.append(name: "If-Range", value: validator)
        let sink = DataSink(url: url, maxSize: count)
        do {
            try await fetch(ranged, sink)
            let (head, data) = try sink.finish()
            guard head.statusCode == 206, let answered = head.headers["Content-Range"].flatMap(ContentRange.init),
                answered.first == range.lowerBound, answered.last == range.upperBound - 1, answered.total == length, data.count == Int(count)
            else {
                // Another version (a 200), or not the bytes asked: nothing of two versions is mixed.
                return .failure(ImagoError(.invalidResponse, url: url))
            }
            return .success(data)
        } catch let error as ImagoError {
            // A 200 for the whole of a changed body is larger than the range: the source changed.
            if error.code.kind == .tooLarge { return .failure(ImagoError(.invalidResponse, url: url)) }
            return .failure(error)
        } catch is CancellationError {
            return .failure(ImagoError(.cancelled, url: url))
        } catch {
            return .failure(ImagoError(.loaderFailed, url: url, underlying: error))
        }
    }

    static func == (lhs: RangedSource, rhs: RangedSource) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
