import Foundation

/// A thread-safe LRU cache by cost, answered synchronously: a lookup is one lock, one hash lookup
/// and a few index updates, with no allocation. Entries are evicted, least recently used first,
/// past the cost limit or the count limit; an entry costing more than the per-entry cap is not
/// stored; with a time to live, an entry older than it is not returned. A hit only stamps its
/// entry (nothing when the entry is already among the newest quarter, so hot entries are read
/// without a write); eviction, walking from the oldest, moves a stamped entry to the newest end
/// instead of evicting it, so the recency list is put right lazily, as CLOCK does, and a hit
/// touches no other entry.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The limits of a cache.
    public struct Limits: Sendable, Hashable {
        /// Total cost kept at most. Default: 15% of physical memory, at most 512 MB.
        public var cost: Int
        /// Entries kept at most. Default: unlimited.
        public var count: Int
        /// Largest cost of one entry. Default: 10% of `cost`.
        public var entryCost: Int
        /// How long an entry may be returned after it was stored; nil for ever.
        public var timeToLive: Duration?

        /// Makes limits; the per-entry cap defaults to a tenth of the cost limit.
        public init(cost: Int = Limits.defaultCost, count: Int = .max, entryCost: Int? = nil, timeToLive: Duration? = nil) {
            self.cost = cost
            self.count = count
            self.entryCost = entryCost ?? cost / 10
            self.timeToLive = timeToLive
        }

        /// min(15% of physical memory, 512 MB).
        public static var defaultCost: Int {
            min(Int(clamping: ProcessInfo.processInfo.physicalMemory) / 100 * 15, 512 << 20)
        }
    }

    /// The limits in force.
    public let limits: Limits
    @usableFromInline let storage = Locked(Storage())
    @usableFromInline let now: @Sendable () -> ContinuousClock.Instant
    /// Entries are aged in nanoseconds since the cache was made, so that a hit compares two
    /// integers under the lock rather than the standard library's resilient `Instant`s.
    @usableFromInline let epoch: ContinuousClock.Instant
    /// `limits.timeToLive` in nanoseconds; nil without one.
    @usableFromInline let timeToLive: Int64?

    /// Makes a cache. `now` is the clock that ages entries (tests pass their own).
    public init(limits: Limits = Limits(), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.limits = limits
        self.now = now
        epoch = now()
        timeToLive = limits.timeToLive.map(Self.nanoseconds)
    }

    /// The value for `key`, which becomes the most recently used (unless it is among the newest
    /// quarter already); nil when absent or expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let hash = key.hashValue
        guard let timeToLive else { return storage.withLock { $0.hit(key, hash: hash, expiry: nil) } }
        // Stored at or before this instant means older than the time to live.
        let (expiry, overflow) = age(now()).subtractingReportingOverflow(timeToLive)
        return storage.withLock { $0.hit(key, hash: hash, expiry: overflow ? .min : expiry) }
    }

    /// Stores `value` for `key` at `cost`, evicting the least recently used entries past the limits.
    /// A value costing more than the per-entry cap is not stored (and replaces nothing).
    public func setValue(_ value: Value, forKey key: Key, cost: Int) {
        let time = age(now())
        let hash = key.hashValue
        storage.withLock { storage in
            storage.remove(key, hash: hash)
            guard cost <= limits.entryCost else { return }
            storage.insert(key: key, hash: hash, value: value, cost: cost, time: time)
            storage.trim(toCost: limits.cost, count: limits.count)
        }
    }

    /// Removes the value for `key`.
    public func removeValue(forKey key: Key) {
        let hash = key.hashValue
        storage.withLock { $0.remove(key, hash: hash) }
    }

    /// Nanoseconds from the cache's epoch to `instant`, saturated at the ends of `Int64`.
    @usableFromInline
    func age(_ instant: ContinuousClock.Instant) -> Int64 {
        Self.nanoseconds(epoch.duration(to: instant))
    }

    /// `duration` in nanoseconds, saturated at the ends of `Int64` (a test clock may be anywhere).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, carried) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if carried { return seconds < 0 ? .min : .max }
        return sum
    }

    /// Removes everything.
    public func removeAll() {
        storage.withLock { $0 = Storage() }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        storage.withLock { $0.trim(toCost: cost, count: .max) }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        storage.withLock { $0.trim(toCost: .max, count: count) }
    }

    /// The host says memory is short: keep at most a quarter of the cost limit, most recent first.
    public func handleMemoryPressure() {
        trim(toCost: limits.cost / 4)
    }

    /// The sum of the costs of the entries held.
    public var totalCost: Int { storage.withLock { $0.totalCost } }

    /// The number of entries held.
    public var count: Int { storage.withLock { $0.count } }

    /// The keys from the most to the least recently used, up to the newest quarter's own order
    /// (a hit there is not recorded).
    public var keysByRecency: [Key] {
        storage.withLock { $0.keysByRecency }
    }
}
