import Foundation
@testable import Imago
import ImagoTestSupport
import Testing

/// A clock the test moves by hand, so time-to-live needs no sleeping.
private final class ManualClock: Sendable {
    private let start = ContinuousClock.now
    private let offset = Locked<Duration>(.zero)
    func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
    var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
}

@Suite("Memory cache")
struct MemoryCacheTests {
    @Test("least recently used goes first; a read makes an entry recent")
    func lruOrder() {
        let cache = MemoryCache<String, Int>(limits: .init(cost: 1000, count: 3))
        for (index, key) in ["a", "b", "c"].enumerated() { cache.setValue(index, forKey: key, cost: 1) }
        #expect(cache.value(forKey: "a") == 0)
        cache.setValue(3, forKey: "d", cost: 1)
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.count == 3)
    }

    @Test("a hit among the newest quarter leaves the order; a hit further back makes the entry the newest")
    func newestQuarterIsNotReordered() {
        let cache = MemoryCache<Int, Int>(limits: .init(cost: 1000, entryCost: 1000))
        for key in 0..<8 { cache.setValue(key, forKey: key, cost: 1) }
        // 8 entries: the newest 2 (7, 6) are the newest quarter.
        #expect(cache.value(forKey: 6) == 6)
        #expect(cache.keysByRecency == [7, 6, 5, 4, 3, 2, 1, 0])
        #expect(cache.value(forKey: 5) == 5)
        #expect(cache.keysByRecency == [5, 7, 6, 4, 3, 2, 1, 0])
        #expect(cache.value(forKey: 0) == 0)
        #expect(cache.keysByRecency == [0, 5, 7, 6, 4, 3, 2, 1])
        // Eviction still takes the least recently used: 1, then 2.
        cache.trim(toCount: 6)
        #expect(cache.keysByRecency == [0, 5, 7, 6, 4, 3])
    }

    @Test("a hit only stamps its entry; eviction moves stamped entries to the newest end, so the least recently used still go first")
    func lazyPromotion() {
        let cache = MemoryCache<Int, Int>(limits: .init(cost: 1000, entryCost: 1000))
        for key in 0..<8 { cache.setValue(key, forKey: key, cost: 1) }
        for key in [0, 1, 2] { #expect(cache.value(forKey: key) == key) }
        #expect(cache.keysByRecency == [2, 1, 0, 7, 6, 5, 4, 3])
        cache.trim(toCount: 5)
        #expect(cache.keysByRecency == [2, 1, 0, 7, 6])
        cache.trim(toCount: 2)
        #expect(cache.keysByRecency == [2, 1])
        // A stamped entry is moved once per trim: with every entry stamped, the oldest stamp goes.
        for key in [1, 2] { #expect(cache.value(forKey: key) == key) }
        cache.trim(toCount: 1)
        #expect(cache.keysByRecency == [2])
    }

    @Test("the cost limit evicts the oldest until the total fits; replacing a key replaces its cost")
    func costLimit() {
        let cache = MemoryCache<Int, String>(limits: .init(cost: 100, entryCost: 100))
        cache.setValue("one", forKey: 1, cost: 40)
        cache.setValue("two", forKey: 2, cost: 40)
        cache.setValue("three", forKey: 3, cost: 40)
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.totalCost == 80)
        cache.setValue("two again", forKey: 2, cost: 10)
        #expect(cache.totalCost == 50)
        #expect(cache.value(forKey: 2) == "two again")
    }

    @Test("an entry above the per-entry cap (10% of the limit by default) is not stored and replaces nothing")
    func entryCap() {
        let cache = MemoryCache<String, Int>(limits: .init(cost: 100))
        #expect(cache.limits.entryCost == 10)
        cache.setValue(1, forKey: "small", cost: 10)
        cache.setValue(2, forKey: "big", cost: 11)
        #expect(cache.value(forKey: "small") == 1)
        #expect(cache.value(forKey: "big") == nil)
        cache.setValue(3, forKey: "small", cost: 50)
        #expect(cache.value(forKey: "small") == nil)
        #expect(cache.totalCost == 0)
    }

    @Test("entries older than the time to live are not returned, and leave")
    func timeToLive() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(limits: .init(cost: 100, timeToLive: .seconds(60)), now: { clock.now })
        cache.setValue(1, forKey: "a", cost: 1)
        clock.advance(.seconds(30))
        cache.setValue(2, forKey: "b", cost: 1)
        #expect(cache.value(forKey: "a") == 1)
        clock.advance(.seconds(31))
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.value(forKey: "b") == 2)
        #expect(cache.count == 1)
    }

    @Test("trim to a cost or a count, memory pressure, remove one, remove all")
    func trimming() {
        let cache = MemoryCache<Int, Int>(limits: .init(cost: 1000, entryCost: 1000))
        for key in 0..<10 { cache.setValue(key, forKey: key, cost: 100) }
        cache.trim(toCost: 550)
        #expect(cache.totalCost == 500)
        #expect(cache.keysByRecency == [9, 8, 7, 6, 5])
        cache.trim(toCount: 3)
        #expect(cache.keysByRecency == [9, 8, 7])
        cache.handleMemoryPressure()
        #expect(cache.totalCost <= 250)
        #expect(cache.keysByRecency == [9, 8])
        cache.removeValue(forKey: 9)
        #expect(cache.keysByRecency == [8])
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.setValue(1, forKey: 1, cost: 1)
        #expect(cache.value(forKey: 1) == 1)
    }

    @Test("the default cost limit is min(15% of RAM, 512 MB)")
    func defaults() {
        let expected = min(Int(ProcessInfo.processInfo.physicalMemory) / 100 * 15, 512 << 20)
        #expect(MemoryCache<Int, Int>().limits.cost == expected)
    }

    @Test("concurrent readers and writers keep the limits and the books straight")
    func concurrency() async {
        let cache = MemoryCache<Int, Int>(limits: .init(cost: 500, count: 64, entryCost: 100))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for step in 0..<5_000 {
                        let key = (step * 7 + worker) % 200
                        if step % 3 == 0 { cache.setValue(key, forKey: key, cost: key % 20 + 1) } else { _ = cache.value(forKey: key) }
                    }
                }
            }
        }
        #expect(cache.count <= 64)
        #expect(cache.totalCost <= 500)
        let keys = cache.keysByRecency
        #expect(keys.count == cache.count)
        #expect(Set(keys).count == keys.count)
        #expect(keys.allSatisfy { cache.value(forKey: $0) == $0 })
    }

    /// A key whose hash collides with a quarter of the others, so the index probes long runs.
    struct CollidingKey: Hashable, Sendable {
        var value: Int
        func hash(into hasher: inout Hasher) { hasher.combine(value % 4) }
    }

    @Test("the index stays right through 20,000 random sets, removals and lookups of colliding keys, against a Dictionary")
    func indexAgainstADictionary() {
        let cache = MemoryCache<CollidingKey, Int>(limits: .init(cost: .max, count: .max, entryCost: .max))
        var model: [Int: Int] = [:]
        var generator = SplitMix(seed: 42)
        for step in 0..<20_000 {
            let key = Int(generator.next() % 300)
            switch generator.next() % 3 {
            case 0:
                cache.setValue(step, forKey: CollidingKey(value: key), cost: 1)
                model[key] = step
            case 1:
                cache.removeValue(forKey: CollidingKey(value: key))
                model[key] = nil
            default:
                #expect(cache.value(forKey: CollidingKey(value: key)) == model[key], "step \(step), key \(key)")
            }
        }
        #expect(cache.count == model.count)
        for key in 0..<300 { #expect(cache.value(forKey: CollidingKey(value: key)) == model[key]) }
    }

    /// A key with 97 hash values, so probe runs hold keys of many homes and removals shift them.
    struct ClusteredKey: Hashable, Sendable {
        var value: Int
        func hash(into hasher: inout Hasher) { hasher.combine(value % 97) }
    }

    @Test("with a count limit, 20,000 random sets, hits and removals keep every answer, the count and the cost right")
    func evictionAgainstADictionary() {
        let cache = MemoryCache<ClusteredKey, Int>(limits: .init(cost: .max, count: 150, entryCost: .max))
        // What was last stored for a key; the cache holds a subset of it (the rest was evicted).
        var model: [Int: Int] = [:]
        var generator = SplitMix(seed: 7)
        for step in 0..<20_000 {
            let key = Int(generator.next() % 400)
            switch generator.next() % 4 {
            case 0, 1:
                cache.setValue(step, forKey: ClusteredKey(value: key), cost: 2)
                model[key] = step
                // The newest entry is never the one evicted.
                #expect(cache.value(forKey: ClusteredKey(value: key)) == step)
            case 2:
                cache.removeValue(forKey: ClusteredKey(value: key))
                model[key] = nil
            default:
                if let value = cache.value(forKey: ClusteredKey(value: key)) { #expect(value == model[key], "step \(step), key \(key)") }
            }
            #expect(cache.count <= 150)
        }
        let keys = cache.keysByRecency
        // Sets outnumber removals two to one over 400 keys, so the cache ends (nearly) full.
        #expect(cache.count > 140)
        #expect(keys.count == cache.count && Set(keys).count == keys.count)
        #expect(cache.totalCost == 2 * cache.count)
        #expect(keys.allSatisfy { cache.value(forKey: $0) == model[$0.value] })
        cache.trim(toCount: 10)
        #expect(cache.count == 10 && cache.totalCost == 20)
        #expect(cache.keysByRecency.allSatisfy { cache.value(forKey: $0) == model[$0.value] })
    }
}
