import Foundation

/// When a failed transfer is tried again, and after how long: transient failures only (a reset or
/// refused connection, a body cut short, `408`, `429`, `500`, `502`, `503`, `504`), with
/// exponential backoff, and a `Retry-After` header honoured up to ``maxDelay``. Errors that another
/// attempt would only repeat (other statuses, limits, refusals, TLS, decoding) are never retried,
/// nor is a cancelled transfer; every attempt counts against the request's deadline.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts after the first, at most. Default 2.
    public var maxRetries: Int
    /// The wait before the first retry; each later one waits `multiplier` times longer. Default 0.25 s.
    public var initialDelay: Duration
    /// Default 2.
    public var multiplier: Double
    /// The longest wait, `Retry-After` included: a server asking for longer fails the transfer
    /// with its status instead. Default 10 s.
    public var maxDelay: Duration
    /// The HTTP statuses retried. Default 408, 429, 500, 502, 503, 504.
    public var statuses: Set<Int>

    /// A policy; the defaults suit images from a CDN.
    public init(
        maxRetries: Int = 2, initialDelay: Duration = .milliseconds(250), multiplier: Double = 2, maxDelay: Duration = .seconds(10),
        statuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    ) {
        self.maxRetries = max(0, maxRetries)
        self.initialDelay = max(.zero, initialDelay)
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maxDelay = max(.zero, maxDelay)
        self.statuses = statuses
    }

    /// How long to wait before retry number `retry` (1 for the first) after `error`, whose response
    /// said `retryAfter`; nil when the error is not retried.
    func delay(beforeRetry retry: Int, after error: ImagoError, retryAfter: String?, now: Date = Date()) -> Duration? {
        guard retry <= maxRetries, isTransient(error) else { return nil }
        if let retryAfter, let asked = Self.parseRetryAfter(retryAfter, now: now) {
            return asked <= maxDelay ? asked : nil
        }
        let factor = pow(multiplier, Double(retry - 1))
        let seconds = min(Double(initialDelay.components.seconds) + Double(initialDelay.components.attoseconds) / 1e18, 1e6) * min(factor, 1e6)
        return min(.seconds(seconds), maxDelay)
    }

    private func isTransient(_ error: ImagoError) -> Bool {
        if let status = error.code.httpStatus { return statuses.contains(status) }
        return error.code == .connectionReset || error.code == .connectionFailed || error.code.receivedBytes != nil
    }

    /// `Retry-After` as a delay: seconds (`120`) or an HTTP date; nil when it is neither.
    static func parseRetryAfter(_ text: String, now: Date) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }
}
