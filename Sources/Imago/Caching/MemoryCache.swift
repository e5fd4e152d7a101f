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

    /// The index maps a key to a slot number only, so a lookup copies an integer; a slot holds the
    /// key, the value, its cost and age, and its links in the recency list. A hit probes the index
    /// with the key's precomputed hash, relinks a few integers and retains the value once: no
    /// hashing under the lock, no copy of keys or values, no allocation.
    @usableFromInline
    struct Storage {
        /// A slot keeps the key's hash apart from the key, so probing compares a plain integer
        /// and touches the key (a reference-counted string, say) only on the hit itself.
        @usableFromInline
        struct Slot {
            @usableFromInline var hash: Int
            @usableFromInline var key: Key?
            @usableFromInline var value: Value?
            @usableFromInline var cost: Int
            @usableFromInline var stored: Int64
            /// The value of ``moves`` when the entry was last used (stored or hit); it sits in the
            /// slot, which the probe has just read, so a hit writes only here.
            @usableFromInline var stamp: UInt64
            /// The stamp the entry had when it was put at the newest end of the list: a larger
            /// ``stamp`` means a hit since, which eviction honours by moving it there again.
            @usableFromInline var placed: UInt64
        }

        /// A slot's neighbours in the recency list (-1 at its ends), kept in an array of their own
        /// beside the slots: a hit relinks three of them, and 8-byte links lie dense in the cache
        /// where slots would not.
        @usableFromInline
        struct Link {
            @usableFromInline var newer: Int32
            @usableFromInline var older: Int32

            @inlinable init(newer: Int32, older: Int32) {
                self.newer = newer
                self.older = older
            }
        }

        /// Slot numbers by key: open addressing with linear probing over the hash each key
        /// carries, so a lookup hashes nothing under the lock. Entries are slot + 1 (0 is empty);
        /// the table is at most half full, and removal shifts later entries back (no tombstones).
        @usableFromInline var index = [Int32](repeating: 0, count: 16)
        @usableFromInline var keyCount = 0
        @usableFromInline var slots: [Slot] = []
        @usableFromInline var links: [Link] = []
        @usableFromInline var freeSlots: [Int] = []
        @usableFromInline var newest: Int32 = -1
        @usableFromInline var oldest: Int32 = -1
        @usableFromInline var totalCost = 0
        /// How many times an entry became the most recently used. Each such use puts every other
        /// entry at most one place further back, so an entry whose stamp is fewer than `count / 4`
        /// uses ago is certainly among the newest quarter: a hit on it writes nothing, which is
        /// what two threads on one lock need; such an entry is at least three quarters of the
        /// cache's turnover away from eviction either way.
        @usableFromInline var moves: UInt64 = 0

        @usableFromInline init() {}

        @usableFromInline var count: Int { keyCount }

        /// Where `key`, whose hash is `hash`, is in ``index``, or nil. The hash is computed
        /// before the lock is taken: hashing a URL-sized key is most of a lookup's work, and two
        /// threads then contend only for what must be serialised.
        @inlinable
        func position(of key: Key, hash: Int) -> Int? {
            let mask = index.count - 1
            var position = hash & mask
            while true {
                let entry = Int(index[position])
                if entry == 0 { return nil }
                if slots[entry - 1].hash == hash, slots[entry - 1].key == key { return position }
                position = (position + 1) & mask
            }
        }

        /// Records that `slot` holds `key` (which is not in the index), growing the table first
        /// when it would be more than half full.
        mutating func indexInsert(hash: Int, slot: Int) {
            if (keyCount + 1) * 2 > index.count {
                var grown = [Int32](repeating: 0, count: index.count * 2)
                let mask = grown.count - 1
                for entry in index where entry != 0 {
                    let hash = slots[Int(entry) - 1].hash
                    var position = hash & mask
                    while grown[position] != 0 { position = (position + 1) & mask }
                    grown[position] = entry
                }
                index = grown
            }
            let mask = index.count - 1
            var position = hash & mask
            while index[position] != 0 { position = (position + 1) & mask }
            index[position] = Int32(slot + 1)
            keyCount += 1
        }

        /// Forgets `key`'s entry in the index and shifts the entries after it back, so every key
        /// stays reachable from its home position. Returns its slot.
        mutating func indexRemove(_ key: Key, hash: Int) -> Int? {
            guard var hole = position(of: key, hash: hash) else { return nil }
            let slot = Int(index[hole]) - 1
            let mask = index.count - 1
            index[hole] = 0
            var next = (hole + 1) & mask
            while index[next] != 0 {
                let home = slots[Int(index[next]) - 1].hash & mask
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

        /// The value for `key`, made the most recent; nil when absent, or when `expiry` is given
        /// and the entry was stored at or before it (and is then removed).
        @inlinable
        mutating func hit(_ key: Key, hash: Int, expiry: Int64?) -> Value? {
            guard let position = position(of: key, hash: hash) else { return nil }
            let slot = Int(index[position]) - 1
            if let expiry, slots[slot].stored <= expiry {
                remove(key, hash: hash)
                return nil
            }
            guard moves &- slots[slot].stamp >= UInt64(keyCount / 4) else { return slots[slot].value }
            // Stamped only: eviction moves it to the newest end if it comes to it (see `trim`).
            moves &+= 1
            slots[slot].stamp = moves
            return slots[slot].value
        }

        @usableFromInline
        mutating func remove(_ key: Key, hash: Int) {
            guard let slot = indexRemove(key, hash: hash) else { return }
            let newer = links[slot].newer, older = links[slot].older
            if newer >= 0 { links[Int(newer)].older = older } else { newest = older }
            if older >= 0 { links[Int(older)].newer = newer } else { oldest = newer }
            totalCost -= slots[slot].cost
            slots[slot].key = nil
            slots[slot].value = nil
            freeSlots.append(slot)
        }

        mutating func insert(key: Key, hash: Int, value: Value, cost: Int, time: Int64) {
            moves &+= 1
            let entry = Slot(hash: hash, key: key, value: value, cost: cost, stored: time, stamp: moves, placed: moves)
            let link = Link(newer: -1, older: newest)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slots[slot] = entry
                links[slot] = link
            } else {
                slot = slots.count
                slots.append(entry)
                links.append(link)
            }
            indexInsert(hash: hash, slot: slot)
            totalCost += cost
            if newest >= 0 { links[Int(newest)].newer = Int32(slot) }
            newest = Int32(slot)
            if oldest < 0 { oldest = Int32(slot) }
        }

        /// Evicts from the oldest end until both limits hold. An entry hit since it was put at
        /// the newest end goes back there instead (once per trim: its stamp then matches).
        mutating func trim(toCost cost: Int, count: Int) {
            while oldest >= 0, totalCost > cost || keyCount > count {
                let slot = Int(oldest)
                guard let key = slots[slot].key else { return }
                if slots[slot].stamp != slots[slot].placed, newest != oldest {
                    moveToNewest(slot)
                } else {
                    remove(key, hash: slots[slot].hash)
                }
            }
        }

        /// Unlinks the oldest entry, `slot`, and links it as the newest.
        mutating func moveToNewest(_ slot: Int) {
            let newer = links[slot].newer
            links[Int(newer)].older = -1
            oldest = newer
            links[slot] = Link(newer: -1, older: newest)
            links[Int(newest)].newer = Int32(slot)
            newest = Int32(slot)
            slots[slot].placed = slots[slot].stamp
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
        storage.withLock { storage in
            // Every store and every recorded hit takes a new stamp, so stamps order the entries.
            storage.slots.compactMap { slot in slot.key.map { (key: $0, stamp: slot.stamp) } }.sorted { $0.stamp > $1.stamp }.map(\.key)
        }
    }
}
