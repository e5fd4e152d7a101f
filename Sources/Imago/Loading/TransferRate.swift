/// A minimum average rate for a response body: after `gracePeriod`, a body that has averaged
/// fewer than `bytesPerSecond` since its head arrived is stopped. With the time-without-bytes
/// timeout (which a drip of one byte a second never trips) and the total deadline, it bounds how
/// long a slow or hostile origin can hold a transfer.
public struct TransferRate: Sendable, Hashable {
    /// Least average bytes per second.
    public var bytesPerSecond: Int
    /// How long a body may run before its rate is judged.
    public var gracePeriod: Duration

    /// Makes a minimum rate.
    public init(bytesPerSecond: Int, gracePeriod: Duration) {
        self.bytesPerSecond = bytesPerSecond
        self.gracePeriod = gracePeriod
    }

    /// Whether `bytes` received in `elapsed` meet the rate (always, within the grace period).
    func isMet(by bytes: Int64, in elapsed: Duration) -> Bool {
        guard elapsed > gracePeriod else { return true }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(bytes) >= Double(bytesPerSecond) * seconds
    }
}
