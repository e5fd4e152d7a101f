import Foundation

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

    /// The index maps a key to a slot number only, so a lookup copies an integer; a slot holds the
    /// key, the value, its cost and age, and its links in the recency list. A hit probes the index
    /// with the key's precomputed hash, relinks a few integers and retains the value once: no
    /// hashing under the lock, no copy of keys or values, no allocation.
    @usableFromInline
    struct Storage {
        /// A key with its hash computed before the lock is taken: hashing a URL-sized key is most
        /// of a lookup's work, and two threads then contend only for what must be serialised.
        @usableFromInline
        struct HashedKey: Sendable {
            @usableFromInline let key: Key
            @usableFromInline let hash: Int

            @inlinable init(_ key: Key) {
                self.key = key
                self.hash = key.hashValue
            }
        }

        @usableFromInline
        struct Slot {
            @usableFromInline var key: HashedKey?
            @usableFromInline var value: Value?
            @usableFromInline var cost: Int
            @usableFromInline var stored: ContinuousClock.Instant
            /// Neighbours in the recency list; -1 at its ends.
            @usableFromInline var newer: Int32
            @usableFromInline var older: Int32
        }

        /// Slot numbers by key: open addressing with linear probing over the hash each key
        /// carries, so a lookup hashes nothing under the lock. Entries are slot + 1 (0 is empty);
        /// the table is at most half full, and removal shifts later entries back (no tombstones).
        @usableFromInline var index = [Int32](repeating: 0, count: 16)
        @usableFromInline var keyCount = 0
        @usableFromInline var slots: [Slot] = []
        @usableFromInline var freeSlots: [Int] = []
        @usableFromInline var newest: Int32 = -1
        @usableFromInline var oldest: Int32 = -1
        @usableFromInline var totalCost = 0

        @usableFromInline init() {}

        @usableFromInline var count: Int { keyCount }

        /// Where `key` is in ``index``, or nil.
        @inlinable
        func position(of key: HashedKey) -> Int? {
            let mask = index.count - 1
            var position = key.hash & mask
            while true {
                let entry = Int(index[position])
                if entry == 0 { return nil }
                if let stored = slots[entry - 1].key, stored.hash == key.hash, stored.key == key.key { return position }
                position = (position + 1) & mask
            }
        }

        /// The slot holding `key`, or nil.
        @inlinable
        func slot(of key: HashedKey) -> Int? {
            position(of: key).map { Int(index[$0]) - 1 }
        }

        /// Records that `slot` holds `key` (which is not in the index), growing the table first
        /// when it would be more than half full.
        mutating func indexInsert(_ key: HashedKey, slot: Int) {
            if (keyCount + 1) * 2 > index.count {
                var grown = [Int32](repeating: 0, count: index.count * 2)
                let mask = grown.count - 1
                for entry in index where entry != 0 {
                    guard let hash = slots[Int(entry) - 1].key?.hash else { continue }
                    var position = hash & mask
                    while grown[position] != 0 { position = (position + 1) & mask }
                    grown[position] = entry
                }
                index = grown
            }
            let mask = index.count - 1
            var position = key.hash & mask
            while index[position] != 0 { position = (position + 1) & mask }
            index[position] = Int32(slot + 1)
            keyCount += 1
        }

        /// Forgets `key`'s entry in the index and shifts the entries after it back, so every key
        /// stays reachable from its home position. Returns its slot.
        mutating func indexRemove(_ key: HashedKey) -> Int? {
            guard var hole = position(of: key) else { return nil }
            let slot = Int(index[hole]) - 1
            let mask = index.count - 1
            index[hole] = 0
            var next = (hole + 1) & mask
            while index[next] != 0 {
                let home = (slots[Int(index[next]) - 1].key?.hash ?? 0) & mask
                // The entry at `next` may fill the hole unless its home lies after the hole.
                if (next - home) & mask >= (next - hole) & mask {
                    index[hole] = index[next]
                    index[next] = 0
                    hole = next
                }
                next = (next + 1) & mask
            }
            keyCount -= 1
            return slot
        }

        /// The value for `key`, made the most recent; nil when absent or older than `timeToLive`
        /// at `time` (and then removed).
        @inlinable
        mutating func hit(_ key: HashedKey, at time: ContinuousClock.Instant?, timeToLive: Duration?) -> Value? {
            guard let slot = slot(of: key) else { return nil }
            if let time, let timeToLive, time - slots[slot].stored >= timeToLive {
                remove(key)
                return nil
            }
            let current = Int32(slot)
            guard newest != current else { return slots[slot].value }
            // Relink as the newest: one unchecked pass (slots are valid by construction).
            var newest = self.newest, oldest = self.oldest
            let value = slots.withUnsafeMutableBufferPointer { slots -> Value? in
                let newer = slots[slot].newer, older = slots[slot].older
                // Not the newest, so it has a newer neighbour.
                slots[Int(newer)].older = older
                if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
                slots[slot].newer = -1
                slots[slot].older = newest
                slots[Int(newest)].newer = current
                newest = current
                return slots[slot].value
            }
            self.newest = newest
            self.oldest = oldest
            return value
        }

        @usableFromInline
        mutating func remove(_ key: HashedKey) {
            guard let slot = indexRemove(key) else { return }
            let newer = slots[slot].newer, older = slots[slot].older
            if newer >= 0 { slots[Int(newer)].older = older } else { newest = older }
            if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
            totalCost -= slots[slot].cost
            slots[slot].key = nil
            slots[slot].value = nil
            freeSlots.append(slot)
        }

        mutating func insert(key: HashedKey, value: Value, cost: Int, time: ContinuousClock.Instant) {
            let entry = Slot(key: key, value: value, cost: cost, stored: time, newer: -1, older: newest)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slots[slot] = entry
            } else {
                slot = slots.count
                slots.append(entry)
            }
            indexInsert(key, slot: slot)
            totalCost += cost
            if newest >= 0 { slots[Int(newest)].newer = Int32(slot) }
            newest = Int32(slot)
            if oldest < 0 { oldest = Int32(slot) }
        }

        mutating func trim(toCost cost: Int, count: Int) {
            while oldest >= 0, totalCost > cost || keyCount > count, let key = slots[Int(oldest)].key { remove(key) }
        }
    }

    /// The limits in force.
    public let limits: Limits
    @usableFromInline let storage = Locked(Storage())
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
        let hashed = Storage.HashedKey(key)
        return storage.withLock { $0.hit(hashed, at: time, timeToLive: timeToLive) }
    }

    /// Stores `value` for `key` at `cost`, evicting the least recently used entries past the limits.
    /// A value costing more than the per-entry cap is not stored (and replaces nothing).
    public func setValue(_ value: Value, forKey key: Key, cost: Int) {
        let time = now()
        let hashed = Storage.HashedKey(key)
        storage.withLock { storage in
            storage.remove(hashed)
            guard cost <= limits.entryCost else { return }
            storage.insert(key: hashed, value: value, cost: cost, time: time)
            storage.trim(toCost: limits.cost, count: limits.count)
        }
    }

    /// Removes the value for `key`.
    public func removeValue(forKey key: Key) {
        let hashed = Storage.HashedKey(key)
        storage.withLock { $0.remove(hashed) }
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

    /// The keys from most to least recently used.
    public var keysByRecency: [Key] {
        storage.withLock { storage in
            var keys: [Key] = []
            var slot = storage.newest
            while slot >= 0, let key = storage.slots[Int(slot)].key {
                keys.append(key.key)
                slot = storage.slots[Int(slot)].older
            }
            return keys
        }
    }
}
