extension MemoryCache {
    /// The entries, in two tables. ``index`` is an open-addressing hash table (linear probing,
    /// at most three quarters full, as `Dictionary`, no tombstones) whose entries hold the key,
    /// the value and the last-use stamp: all a hit reads, in one place, so a hit waits for one
    /// memory load after the key's own, as a `Dictionary` lookup does. (With the key and value in
    /// a slot named by the index, a hit waited for two in a row, and fell to 0.6–0.8× of a
    /// `Dictionary` whenever memory was slow.) Each entry names a slot in ``slots`` and
    /// ``links``, which hold what eviction reads (cost, age, the recency list) and stay put while
    /// index entries move. The price: the index holds keys and values inline, so it is
    /// 4/3–8/3 × the entries × (16 bytes + key + value), as a dictionary's storage is.
    @usableFromInline
    struct Storage {
        /// An index entry. `tagAndSlot` is the key's hash's low 32 bits above its slot + 1; 0 is
        /// an empty entry. The hash bits give the entry's home in any table of up to 2³² entries
        /// and turn away most other keys before their key is compared.
        @usableFromInline
        struct Entry {
            @usableFromInline var tagAndSlot: UInt64
            /// The value of ``moves`` when the entry was last used (stored, or hit outside the
            /// newest quarter).
            @usableFromInline var stamp: UInt64
            @usableFromInline var key: Key?
            @usableFromInline var value: Value?

            @inlinable init(tagAndSlot: UInt64, stamp: UInt64, key: Key?, value: Value?) {
                self.tagAndSlot = tagAndSlot
                self.stamp = stamp
                self.key = key
                self.value = value
            }

            @usableFromInline static var empty: Entry { Entry(tagAndSlot: 0, stamp: 0, key: nil, value: nil) }

            /// The slot this entry names.
            @inlinable var slot: Int { Int(truncatingIfNeeded: tagAndSlot & 0xFFFF_FFFF) - 1 }
            /// The hash bits this entry keeps.
            @inlinable var tag: UInt64 { tagAndSlot >> 32 }
        }

        /// What eviction needs of an entry, by slot.
        @usableFromInline
        struct Slot {
            @usableFromInline var hash: Int
            @usableFromInline var cost: Int
            @usableFromInline var stored: Int64
            /// The stamp the entry had when it was put at the newest end of the list: a larger
            /// stamp means a hit since, which eviction honours by moving it there again.
            @usableFromInline var placed: UInt64
        }

        /// A slot's neighbours in the recency list (-1 at its ends).
        @usableFromInline
        struct Link {
            @usableFromInline var newer: Int32
            @usableFromInline var older: Int32
        }

        @usableFromInline var index = [Entry](repeating: .empty, count: 16)
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

        @inlinable static func tag(_ hash: Int) -> UInt64 { UInt64(UInt32(truncatingIfNeeded: hash)) }

        /// The `tagAndSlot` of an entry whose key hashes to `hash`, stored in `slot`.
        static func tagAndSlot(hash: Int, slot: Int) -> UInt64 { tag(hash) << 32 | UInt64(slot + 1) }

        /// The first empty entry of `table` from `hash`'s home on.
        static func emptyPosition(for hash: Int, in table: [Entry]) -> Int {
            let mask = table.count - 1
            var position = hash & mask
            while table[position].tagAndSlot != 0 { position = (position + 1) & mask }
            return position
        }

        /// Where `key`, whose hash is `hash`, is in ``index``, or nil. The hash is computed
        /// before the lock is taken: hashing a URL-sized key is most of a lookup's work, and two
        /// threads then contend only for what must be serialised.
        @inlinable
        func position(of key: Key, hash: Int) -> Int? {
            let mask = index.count - 1
            let tag = Self.tag(hash)
            var position = hash & mask
            while true {
                let tagAndSlot = index[position].tagAndSlot
                if tagAndSlot == 0 { return nil }
                if tagAndSlot >> 32 == tag, index[position].key == key { return position }
                position = (position + 1) & mask
            }
        }

        /// Where the entry of `slot` is in ``index`` (nil only if the tables disagreed).
        func position(ofSlot slot: Int) -> Int? {
            let mask = index.count - 1
            let wanted = Self.tagAndSlot(hash: slots[slot].hash, slot: slot)
            var position = slots[slot].hash & mask
            while index[position].tagAndSlot != 0 {
                if index[position].tagAndSlot == wanted { return position }
                position = (position + 1) & mask
            }
            return nil
        }

        /// The value for `key`, made the most recent; nil when absent, or when `expiry` is given
        /// and the entry was stored at or before it (and is then removed).
        @inlinable
        mutating func hit(_ key: Key, hash: Int, expiry: Int64?) -> Value? {
            guard let position = position(of: key, hash: hash) else { return nil }
            if let expiry, slots[index[position].slot].stored <= expiry {
                remove(at: position)
                return nil
            }
            if moves &- index[position].stamp >= UInt64(keyCount / 4) {
                // Stamped only: eviction moves it to the newest end if it comes to it (see `trim`).
                moves &+= 1
                index[position].stamp = moves
            }
            return index[position].value
        }

        @usableFromInline
        mutating func remove(_ key: Key, hash: Int) {
            guard let position = position(of: key, hash: hash) else { return }
            remove(at: position)
        }

        /// Removes the entry at `position` of ``index``: unlinks and frees its slot, then shifts
        /// the entries after it back, so every key stays reachable from its home position.
        @usableFromInline
        mutating func remove(at position: Int) {
            let slot = index[position].slot
            let newer = links[slot].newer, older = links[slot].older
            if newer >= 0 { links[Int(newer)].older = older } else { newest = older }
            if older >= 0 { links[Int(older)].newer = newer } else { oldest = newer }
            totalCost -= slots[slot].cost
            freeSlots.append(slot)
            let mask = index.count - 1
            var hole = position
            index[hole] = .empty
            var next = (hole + 1) & mask
            while index[next].tagAndSlot != 0 {
                let home = Int(index[next].tag) & mask
                // The entry at `next` may fill the hole unless its home lies after the hole.
                if (next - home) & mask >= (next - hole) & mask {
                    index.swapAt(hole, next)
                    hole = next
                }
                next = (next + 1) & mask
            }
            keyCount -= 1
        }

        /// Stores `key` (not present) as the newest entry, growing the index first when it would
        /// be more than three quarters full.
        mutating func insert(key: Key, hash: Int, value: Value, cost: Int, time: Int64) {
            moves &+= 1
            let metadata = Slot(hash: hash, cost: cost, stored: time, placed: moves)
            let link = Link(newer: -1, older: newest)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slots[slot] = metadata
                links[slot] = link
            } else {
                slot = slots.count
                slots.append(metadata)
                links.append(link)
            }
            if (keyCount + 1) * 4 > index.count * 3 { grow() }
            index[Self.emptyPosition(for: hash, in: index)] = Entry(
                tagAndSlot: Self.tagAndSlot(hash: hash, slot: slot), stamp: moves, key: key, value: value)
            keyCount += 1
            totalCost += cost
            if newest >= 0 { links[Int(newest)].newer = Int32(slot) }
            newest = Int32(slot)
            if oldest < 0 { oldest = Int32(slot) }
        }

        /// Doubles ``index``, moving every entry to its place in the larger table.
        mutating func grow() {
            var grown = [Entry](repeating: .empty, count: index.count * 2)
            for position in index.indices where index[position].tagAndSlot != 0 {
                // The tag holds the hash's low 32 bits, all a table of up to 2³² entries uses.
                swap(&grown[Self.emptyPosition(for: Int(index[position].tag), in: grown)], &index[position])
            }
            index = grown
        }

        /// Evicts from the oldest end until both limits hold. An entry hit since it was put at
        /// the newest end goes back there instead (once per trim: its stamp then matches).
        mutating func trim(toCost cost: Int, count: Int) {
            while oldest >= 0, totalCost > cost || keyCount > count {
                let slot = Int(oldest)
                guard let position = position(ofSlot: slot) else { return }
                if index[position].stamp != slots[slot].placed, newest != oldest {
                    moveToNewest(slot, stamp: index[position].stamp)
                } else {
                    remove(at: position)
                }
            }
        }

        /// Unlinks the oldest entry, `slot`, and links it as the newest.
        mutating func moveToNewest(_ slot: Int, stamp: UInt64) {
            let newer = links[slot].newer
            links[Int(newer)].older = -1
            oldest = newer
            links[slot] = Link(newer: -1, older: newest)
            links[Int(newest)].newer = Int32(slot)
            newest = Int32(slot)
            slots[slot].placed = stamp
        }

        /// The keys from the most to the least recently used (by stamp: every store and every
        /// recorded hit takes a new one).
        var keysByRecency: [Key] {
            index.compactMap { entry in entry.key.map { (key: $0, stamp: entry.stamp) } }.sorted { $0.stamp > $1.stamp }.map(\.key)
        }
    }
}
