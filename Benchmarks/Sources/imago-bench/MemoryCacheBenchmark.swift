import Foundation
import Imago
import Synchronization

/// Memory-cache hits against the limit of any locked cache: a bare `Dictionary` under one `Mutex`
/// doing the same lookups (10,000 URL-like keys, 31 rounds of 500,000 random hits), on one thread and on two.
enum MemoryCacheBenchmark {
    static let keys = 10_000
    static let lookups = 500_000
    static let rounds = 31

    final class Box: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    /// The peer: a dictionary under one lock, nothing else.
    final class LockedDictionary: Sendable {
        let storage = Mutex<[String: Box]>([:])
        func value(forKey key: String) -> Box? { storage.withLock { $0[key] } }
    }

    static func run() async {
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
            let (cacheTimes, dictionaryTimes, ratio) = await Measure.pairedRounds(
                rounds,
                imago: { measure(threads: threads, order: order) { cache.value(forKey: names[$0])?.value ?? -1 } },
                peer: { measure(threads: threads, order: order) { dictionary.value(forKey: names[$0])?.value ?? -1 } })
            let imago = Double(lookups) / Measure.median(cacheTimes) / 1_000_000
            let peer = Double(lookups) / Measure.median(dictionaryTimes) / 1_000_000
            report(
                "Memory-cache hits, \(keys) keys, \(lookups) random lookups a round, \(threads) thread\(threads == 1 ? "" : "s"), median of \(rounds) paired rounds",
                imago: String(format: "MemoryCache (LRU, cost, TTL checks): %.1f M lookups/s", imago),
                peer: String(format: "Dictionary under one Mutex: %.1f M lookups/s", peer),
                ratio: ratio, target: "≥ 0.8× the dictionary", met: ratio >= 0.8)
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
