import Imago
import Synchronization

/// Reads a fuzzer's bytes as a sequence of memory-cache operations (store, hit, remove, trim, a
/// clock step) on keys of 16 hash values, so probe runs are long and removals shift entries, and
/// checks every answer against a plain model: a hit returns what was last stored for its key and
/// is not older than the time to live; the count, the cost and the recency list agree and keep
/// the limits. A broken invariant traps, which libFuzzer reports as a finding.
enum MemoryCacheOperations {
    /// A key with 16 hash values.
    struct Key: Hashable, Sendable {
        var value: UInt8
        func hash(into hasher: inout Hasher) { hasher.combine(value & 15) }
    }

    /// What was last stored for a key: the cache holds it, or evicted it.
    struct Stored {
        var value: Int
        var cost: Int
        var at: Duration
    }

    /// The cache's clock: moved only by the operations.
    final class Clock: Sendable {
        let start = ContinuousClock.now
        private let offset = Mutex(Duration.zero)
        var elapsed: Duration { offset.withLock { $0 } }
        var now: ContinuousClock.Instant { start + elapsed }
        func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
    }

    static func run(_ bytes: [UInt8]) {
        var stream = ByteStream(bytes)
        let count = Int(stream.byte() % 64) + 1
        let timeToLive: Duration? = stream.byte() & 1 == 0 ? nil : .milliseconds(Int(stream.byte()) + 1)
        let clock = Clock()
        let cache = MemoryCache<Key, Int>(limits: .init(cost: 200, count: count, entryCost: 40, timeToLive: timeToLive), now: { clock.now })
        var model: [Key: Stored] = [:]
        var step = 0
        while !stream.isAtEnd {
            step += 1
            let key = Key(value: stream.byte())
            switch stream.byte() % 8 {
            case 0, 1, 2:
                let cost = Int(stream.byte() % 48)
                cache.setValue(step, forKey: key, cost: cost)
                // Over the per-entry cap: not stored, and the old entry is gone too.
                model[key] = cost <= 40 ? Stored(value: step, cost: cost, at: clock.elapsed) : nil
            case 3, 4:
                guard let value = cache.value(forKey: key) else { break }
                guard let stored = model[key], stored.value == value else { preconditionFailure("a hit on \(key) gave \(value), not what was stored") }
                if let timeToLive {
                    precondition(clock.elapsed - stored.at < timeToLive, "an expired entry was returned")
                }
            case 5:
                cache.removeValue(forKey: key)
                model[key] = nil
                precondition(cache.value(forKey: key) == nil, "a removed key was returned")
            case 6:
                if key.value & 1 == 0 { cache.trim(toCount: Int(key.value >> 2)) } else { cache.trim(toCost: Int(key.value)) }
            default:
                clock.advance(.milliseconds(Int(key.value)))
            }
            precondition(cache.count <= count && cache.totalCost <= 200, "the limits do not hold")
        }
        let keys = cache.keysByRecency
        precondition(keys.count == cache.count && Set(keys).count == keys.count, "the recency list and the count disagree")
        var cost = 0
        for key in keys {
            guard let stored = model[key] else { preconditionFailure("\(key) is held but was removed") }
            cost += stored.cost
        }
        precondition(cost == cache.totalCost, "the total cost is \(cache.totalCost), the entries' \(cost)")
    }
}
