import Foundation

/// Receives one transfer's response and body from a loader, and enforces what every transfer must
/// respect whichever loader makes it: success status, the maximum size (announced or counted), the
/// minimum average rate, and cancellation. Each `receive` throws an ``ImagoError`` when the transfer
/// must stop.
public final class DataSink: Sendable {
    private struct State {
        var response: ResponseHead?
        var data = Data()
        var isCancelled = false
        /// Cancelled because the transfer's deadline passed: later receives say `timedOut`.
        var isExpired = false
        /// When the response head arrived: the body's rate is measured from then.
        var bodyStart: ContinuousClock.Instant?
        /// The kept bytes this transfer continues: `data` starts with them until a response
        /// other than their continuation drops them.
        var resuming: ResumableData?
        /// Bytes of `data` that came before this response (a resumed body's prefix): not counted
        /// in its rate.
        var bytesBeforeResponse = 0
        /// Kept bytes a `206` continued, for statistics.
        var joinedBytes = 0
        /// The response may be read by ranges: its first bytes decide (``RangeReadRule``).
        var mayReadRanges = false
        /// The transfer stopped after the first bytes of a body that is read by ranges.
        var endedAtRangePrefix = false
    }

    /// When a transfer stops after its first bytes, to be read by range requests
    /// (``RangedSource``): a body of at least `minimumLength` that can be read by ranges, whose
    /// first `prefixLength` bytes `readsRanges` accepts.
    struct RangeReadRule: Sendable {
        var minimumLength: Int64
        var prefixLength: Int
        var readsRanges: @Sendable (Data) -> Bool
    }

    private let url: URL
    /// The most bytes the transfer may receive.
    let maxSize: Int64
    private let minimumRate: TransferRate?
    private let onResponse: @Sendable (ResponseHead) -> Void
    private let onProgress: @Sendable (_ received: Int64, _ expected: Int64?) -> Void
    private let rangeReadRule: RangeReadRule?
    private let state = Locked(State())

    /// Makes a sink for a transfer of `url` that accepts at most `maxSize` bytes, and stops a body
    /// whose average rate falls under `minimumRate` once its grace period has passed.
    public convenience init(
        url: URL,
        maxSize: Int64,
        minimumRate: TransferRate? = nil,
        onResponse: @escaping @Sendable (ResponseHead) -> Void = { _ in },
        onProgress: @escaping @Sendable (_ received: Int64, _ expected: Int64?) -> Void = { _, _ in }
    ) {
        self.init(url: url, maxSize: maxSize, minimumRate: minimumRate, rangeReadRule: nil, onResponse: onResponse, onProgress: onProgress)
    }

    /// A sink that, past `rangeReadRule`'s length, stops a body its first bytes say is read by ranges.
    init(
        url: URL, maxSize: Int64, minimumRate: TransferRate?, rangeReadRule: RangeReadRule?,
        onResponse: @escaping @Sendable (ResponseHead) -> Void, onProgress: @escaping @Sendable (_ received: Int64, _ expected: Int64?) -> Void
    ) {
        self.url = url
        self.maxSize = maxSize
        self.minimumRate = minimumRate
        self.rangeReadRule = rangeReadRule
        self.onResponse = onResponse
        self.onProgress = onProgress
    }

    /// Takes the response head. Throws for a status that is not a success and for an announced
    /// length above the limit, before any body byte is read.
    ///
    /// When the pipeline resumes a transfer from kept bytes, a `206` that continues them is joined
    /// to them and seen as a `200` for the whole body; a `200` or a `416` drops them.
    public func receive(_ response: ResponseHead) throws(ImagoError) {
        var response = response
        if let resuming = state.withLock({ $0.resuming }) {
            if response.statusCode == 206 {
                response = try resuming.joined(with: response)
                state.withLock { $0.joinedBytes = resuming.data.count }
            } else if let status = response.statusCode, (200..<300).contains(status) || status == 416 {
                state.withLock { state in
                    state.resuming = nil
                    state.data = Data()
                }
            }
        }
        if let status = response.statusCode {
            if status == 304 {
                // Kept: its headers refresh the cached entry's freshness.
                state.withLock { $0.response = response }
                throw ImagoError(.notModified, url: response.url)
            }
            guard (200..<300).contains(status) else {
                // Kept: a retry reads its Retry-After.
                state.withLock { $0.response = response }
                throw ImagoError(.httpStatus(status), url: response.url)
            }
        }
        let mayReadRanges =
            if let rangeReadRule, state.withLock({ $0.resuming == nil }), let expected = response.expectedContentLength,
                expected >= rangeReadRule.minimumLength, ResumableData.validator(of: response) != nil
            { true } else { false }
        // A body read by ranges is never received whole: its length is checked if it is not.
        if let expected = response.expectedContentLength, expected > maxSize, !mayReadRanges {
            throw ImagoError(.tooLarge(limit: maxSize), url: response.url)
        }
        let isCancelled = state.withLock { state in
            if !state.isCancelled {
                state.mayReadRanges = mayReadRanges
                state.response = response
                state.bodyStart = .now
                state.bytesBeforeResponse = state.data.count
                if let expected = response.expectedContentLength, expected > 0 {
                    state.data.reserveCapacity(mayReadRanges ? rangeReadRule?.prefixLength ?? 0 : Int(expected))
                }
            }
            return state.isCancelled
        }
        if isCancelled { throw stopError }
        onResponse(response)
    }

    /// Appends a chunk of the body.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(ImagoError) {
        let outcome = state.withLock { state -> Result<(Int64, Int64?, decides: Bool), ImagoError> in
            if state.isCancelled { return .failure(ImagoError(state.isExpired ? .timedOut : .cancelled, url: url)) }
            guard Int64(state.data.count) + Int64(bytes.count) <= maxSize else {
                return .failure(ImagoError(.tooLarge(limit: maxSize), url: state.response?.url ?? url))
            }
            // A joined 206 is framed by its own length, which need not be its Content-Range's:
            // no byte past the whole body the range named.
            if state.joinedBytes > 0, let total = state.response?.expectedContentLength, Int64(state.data.count) + Int64(bytes.count) > total {
                return .failure(ImagoError(.invalidResponse, url: state.response?.url ?? url))
            }
            state.data.append(contentsOf: bytes)
            if let minimumRate, let start = state.bodyStart, !minimumRate.isMet(by: Int64(state.data.count - state.bytesBeforeResponse), in: .now - start) {
                return .failure(ImagoError(.tooSlow(minimumBytesPerSecond: minimumRate.bytesPerSecond), url: state.response?.url ?? url))
            }
            let decides = state.mayReadRanges && state.data.count >= rangeReadRule?.prefixLength ?? .max
            return .success((Int64(state.data.count), state.response?.expectedContentLength, decides))
        }
        let (received, expected, decides) = try outcome.get()
        if decides { try decideRangeReads() }
        onProgress(received, expected)
    }

    /// Once the first bytes of a body that may be read by ranges are in, stops the transfer when
    /// the rule accepts them, else goes on receiving it whole (if its length is within the limit).
    private func decideRangeReads() throws(ImagoError) {
        guard let rangeReadRule else { return }
        let prefix = state.withLock { state -> Data? in
            guard state.mayReadRanges, state.data.count >= rangeReadRule.prefixLength else { return nil }
            state.mayReadRanges = false
            return state.data
        }
        guard let prefix, let response else { return }
        if rangeReadRule.readsRanges(prefix) {
            state.withLock { $0.endedAtRangePrefix = true }
            throw ImagoError(.cancelled, url: response.url)
        }
        if let expected = response.expectedContentLength, expected > maxSize {
            throw ImagoError(.tooLarge(limit: maxSize), url: response.url)
        }
    }

    /// Whether the transfer stopped after the first bytes of a body read by ranges: ``finish()``
    /// gives those bytes.
    var endedAtRangePrefix: Bool {
        state.withLock { $0.endedAtRangePrefix }
    }

    /// Appends a chunk of the body.
    public func receive(_ data: Data) throws(ImagoError) {
        let outcome = data.withUnsafeBytes { bytes in Result { () throws(ImagoError) in try receive(bytes) } }
        try outcome.get()
    }

    /// Makes every later `receive` throw `cancelled`, for loaders that deliver from other threads.
    func cancel() {
        state.withLock { $0.isCancelled = true }
    }

    /// Makes every later `receive` throw `timedOut`: the transfer's deadline passed.
    func expire() {
        state.withLock { state in
            state.isCancelled = true
            state.isExpired = true
        }
    }

    /// Whether ``expire()`` was called.
    var hasExpired: Bool {
        state.withLock { $0.isExpired }
    }

    private var stopError: ImagoError {
        ImagoError(hasExpired ? .timedOut : .cancelled, url: url)
    }

    /// Forgets a failed attempt's response and bytes, so the transfer can be tried again; bytes
    /// it resumes stay, as its request still asks for the rest of them.
    func reset() {
        state.withLock { state in
            state.response = nil
            state.mayReadRanges = false
            state.endedAtRangePrefix = false
            state.data = state.resuming?.data ?? Data()
            state.bodyStart = nil
            state.bytesBeforeResponse = 0
            state.joinedBytes = 0
        }
    }

    /// Starts the transfer again from kept bytes: its request must ask for the rest of them
    /// (``ResumableData/requestHeaders(_:)``).
    func resume(from kept: ResumableData) {
        state.withLock { state in
            state.response = nil
            state.resuming = kept
            state.data = kept.data
            state.bodyStart = nil
            state.bytesBeforeResponse = 0
            state.joinedBytes = 0
        }
    }

    /// Drops the kept bytes it resumes and whatever came after them.
    func abandonResumption() {
        state.withLock { state in
            state.resuming = nil
        }
        reset()
    }

    /// The bytes so far as a later request could resume them: those of a response that can be
    /// resumed, else (no response, or an error status) the kept bytes this transfer was resuming.
    var resumable: ResumableData? {
        state.withLock { state in
            if let response = state.response, let status = response.statusCode, (200..<300).contains(status) {
                return ResumableData(response: response, data: state.data)
            }
            return state.resuming
        }
    }

    /// The kept bytes the transfer resumes, if any.
    var resuming: ResumableData? {
        state.withLock { $0.resuming }
    }

    /// How many kept bytes the response continued (a `206` joined to them); 0 when none.
    var joinedBytes: Int {
        state.withLock { $0.response == nil ? 0 : $0.joinedBytes }
    }

    /// The response head, once received.
    var response: ResponseHead? {
        state.withLock { $0.response }
    }

    /// The bytes received so far, for previews.
    var snapshot: Data {
        state.withLock { $0.data }
    }

    /// The bytes received so far and the length the response announced.
    public var progress: (received: Int64, expected: Int64?) {
        state.withLock { (Int64($0.data.count), $0.response?.expectedContentLength) }
    }

    /// Ends the transfer: the response and the whole body, or an error when the body is empty or
    /// shorter than announced.
    func finish() throws(ImagoError) -> (ResponseHead, Data) {
        let (response, data) = state.withLock { state in
            (state.response ?? ResponseHead(url: url), state.data)
        }
        if let expected = response.expectedContentLength, Int64(data.count) < expected, !endedAtRangePrefix {
            throw ImagoError(.truncated(received: Int64(data.count), expected: expected), url: response.url)
        }
        if data.isEmpty { throw ImagoError(.emptyResponse, url: response.url) }
        return (response, data)
    }
}
