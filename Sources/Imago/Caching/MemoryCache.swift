import Foundation
import Synchronization

/// A thread-safe LRU cache by cost, answered synchronously: a lookup is one lock, one hash lookup
/// and a few index updates, with no allocation. Entries are evicted, least recently used first,
/// past the cost limit or the count limit; an entry costing more than the per-entry cap is not
/// stored; with a time to live, an entry older than it is not returned.
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

    /// An entry sits inline in the dictionary (one hash lookup yields value, age and slot); the
    /// recency list is an array of link pairs indexed by slot, so a hit moves a few integers: no
    /// copy of keys or values, no allocation.
    @usableFromInline
    struct Storage {
        @usableFromInline
        struct Entry {
            @usableFromInline var value: Value
            @usableFromInline var slot: Int
            @usableFromInline var cost: Int
            @usableFromInline var stored: ContinuousClock.Instant
        }

        @usableFromInline
        struct Link {
            @usableFromInline var newer: Int32
            @usableFromInline var older: Int32

            @inlinable init(newer: Int32 = -1, older: Int32 = -1) {
                self.newer = newer
                self.older = older
            }
        }

        @usableFromInline var entries: [Key: Entry] = [:]
        /// The key in each slot, for eviction from the old end.
        @usableFromInline var slotKeys: [Key?] = []
        @usableFromInline var links: [Link] = []
        @usableFromInline var freeSlots: [Int] = []
        @usableFromInline var newest: Int32 = -1
        @usableFromInline var oldest: Int32 = -1
        @usableFromInline var totalCost = 0

        @usableFromInline init() {}

        @inlinable
        mutating func unlink(_ slot: Int) {
            let link = links[slot]
            if link.newer >= 0 { links[Int(link.newer)].older = link.older } else { newest = link.older }
            if link.older >= 0 { links[Int(link.older)].newer = link.newer } else { oldest = link.newer }
        }

        @inlinable
        mutating func pushNewest(_ slot: Int) {
            links[slot] = Link(newer: -1, older: newest)
            if newest >= 0 { links[Int(newest)].newer = Int32(slot) }
            newest = Int32(slot)
            if oldest < 0 { oldest = Int32(slot) }
        }

        /// Makes `slot` the most recent: the hit path, so one unchecked pass over the links
        /// (slots are valid by construction) instead of several checked array writes.
        @inlinable
        mutating func touch(_ slot: Int) {
            let current = Int32(slot)
            guard newest != current else { return }
            var newest = self.newest, oldest = self.oldest
            links.withUnsafeMutableBufferPointer { links in
                let link = links[slot]
                // Not the newest, so it has a newer neighbour.
                links[Int(link.newer)].older = link.older
                if link.older >= 0 { links[Int(link.older)].newer = link.newer } else { oldest = link.newer }
                links[slot] = Link(newer: -1, older: newest)
                links[Int(newest)].newer = current
                newest = current
            }
            self.newest = newest
            self.oldest = oldest
        }

        @usableFromInline
        mutating func remove(_ key: Key) {
            guard let entry = entries.removeValue(forKey: key) else { return }
            unlink(entry.slot)
            totalCost -= entry.cost
            slotKeys[entry.slot] = nil
            freeSlots.append(entry.slot)
        }

        mutating func insert(key: Key, value: Value, cost: Int, time: ContinuousClock.Instant) {
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slotKeys[slot] = key
            } else {
                slot = slotKeys.count
                slotKeys.append(key)
                links.append(Link())
            }
            entries[key] = Entry(value: value, slot: slot, cost: cost, stored: time)
            totalCost += cost
            pushNewest(slot)
        }

        mutating func trim(toCost cost: Int, count: Int) {
            while oldest >= 0, totalCost > cost || entries.count > count { remove(slotKeys[Int(oldest)]!) }
        }
    }

    /// The limits in force.
    public let limits: Limits
    @usableFromInline let storage = Mutex(Storage())
    @usableFromInline let now: @Sendable () -> ContinuousClock.Instant

    /// Makes a cache. `now` is the clock that ages entries (tests pass their own).
    public init(limits: Limits = Limits(), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.limits = limits
        self.now = now
    }

    /// The value for `key`, which becomes the most recently used; nil when absent or expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let timeToLive = limits.timeToLive
        let time = timeToLive == nil ? nil : now()
        return storage.withLock { storage in
            guard let entry = storage.entries[key] else { return nil }
            if let time, let timeToLive, time - entry.stored >= timeToLive {
                storage.remove(key)
                return nil
            }
            storage.touch(entry.slot)
            return entry.value
        }
    }

    /// Stores `value` for `key` at `cost`, evicting the least recently used entries past the limits.
    /// A value costing more than the per-entry cap is not stored (and replaces nothing).
    public func setValue(_ value: Value, forKey key: Key, cost: Int) {
        let time = now()
        storage.withLock { storage in
            storage.remove(key)
            guard cost <= limits.entryCost else { return }
            storage.insert(key: key, value: value, cost: cost, time: time)
            storage.trim(toCost: limits.cost, count: limits.count)
        }
    }

    /// Removes the value for `key`.
    public func removeValue(forKey key: Key) {
        storage.withLock { $0.remove(key) }
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
    public var count: Int { storage.withLock { $0.entries.count } }

    /// The keys from most to least recently used.
    public var keysByRecency: [Key] {
        storage.withLock { storage in
            var keys: [Key] = []
            var slot = storage.newest
            while slot >= 0 {
                keys.append(storage.slotKeys[Int(slot)]!)
                slot = storage.links[Int(slot)].older
            }
            return keys
        }
    }
}
