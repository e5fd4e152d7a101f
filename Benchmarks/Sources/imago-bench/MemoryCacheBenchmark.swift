import Foundation
import Imago
import Synchronization

/// Memory-cache hits against the limit of any locked cache: a bare `Dictionary` under one `Mutex`
/// doing the same lookups (10,000 URL-like keys, 2,000,000 random hits), on one thread and on two.
enum MemoryCacheBenchmark {
    static let keys = 10_000
    static let lookups = 2_000_000

    final class Box: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    /// The peer: a dictionary under one lock, nothing else.
    final class LockedDictionary: Sendable {
        let storage = Mutex<[String: Box]>([:])
        func value(forKey key: String) -> Box? { storage.withLock { $0[key] } }
    }

    static func run() {
        let names = (0..<keys).map { "https://images.example.com/photos/\($0).jpg?w=512" }
        var generator = SystemRandomNumberGenerator()
        let order = (0..<lookups).map { _ in Int.random(in: 0..<keys, using: &generator) }
        let cache = MemoryCache<String, Box>(limits: .init(cost: .max, entryCost: .max))
        let dictionary = LockedDictionary()
        for (index, name) in names.enumerated() {
            cache.setValue(Box(index), forKey: name, cost: 1)
            dictionary.storage.withLock { $0[name] = Box(index) }
        }
        for threads in [1, 2] {
            // Rounds alternate between the two so drift in the machine hits both alike.
            var cacheTimes: [Double] = [], dictionaryTimes: [Double] = []
            for _ in 0..<7 {
                cacheTimes.append(measure(threads: threads, order: order) { cache.value(forKey: names[$0])?.value ?? -1 })
                dictionaryTimes.append(measure(threads: threads, order: order) { dictionary.value(forKey: names[$0])?.value ?? -1 })
            }
            let cacheSeconds = Measure.median(cacheTimes), dictionarySeconds = Measure.median(dictionaryTimes)
            let imago = Double(lookups) / cacheSeconds / 1_000_000, peer = Double(lookups) / dictionarySeconds / 1_000_000
            report(
                "Memory-cache hits, \(keys) keys, \(lookups) random lookups, \(threads) thread\(threads == 1 ? "" : "s")",
                imago: String(format: "MemoryCache (LRU, cost, TTL checks): %.1f M lookups/s", imago),
                peer: String(format: "Dictionary under one Mutex: %.1f M lookups/s", peer),
                ratio: imago / peer, target: "≥ 0.8× the dictionary", met: imago / peer >= 0.8)
        }
    }

    /// Seconds for `lookups` calls of `lookup` split over `threads` threads.
    static func measure(threads: Int, order: [Int], _ lookup: @Sendable (Int) -> Int) -> Double {
        let start = ContinuousClock.now
        let sums = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var sum = 0
            for index in stride(from: thread, to: order.count, by: threads) { sum &+= lookup(order[index]) }
            sums.withLock { $0 &+= sum }
        }
        precondition(sums.withLock { $0 } > 0)
        return (ContinuousClock.now - start) / .seconds(1)
    }
}
