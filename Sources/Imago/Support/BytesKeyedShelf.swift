import Foundation

/// A few values made from some bytes, kept for the next step that asks about the same bytes (a
/// decode after the pipeline's estimate): keyed by the bytes' storage (address and length) and a
/// detail of what was asked, so nothing is hashed. Each entry holds the bytes, so no other bytes
/// can take that address while it is kept. At most `capacity` entries, none older than
/// `longest`; what is let go is released outside the lock. A value is used by one thread at a
/// time: put by one step, then read or taken by the next.
final class BytesKeyedShelf<Detail: Hashable, Value>: @unchecked Sendable {
    private struct Key: Hashable {
        var address: Int
        var length: Int
        var detail: Detail
    }

    private struct Entry {
        let key: Key
        let value: Value
        /// Held so that the address stays these bytes' while the entry is kept.
        let bytes: Data
        let since: ContinuousClock.Instant
    }

    private let entries = Locked<[Entry]>([])
    private let capacity: Int
    private let longest: Duration

    init(capacity: Int = 2, longest: Duration = .seconds(10)) {
        self.capacity = capacity
        self.longest = longest
    }

    /// Keeps `value`, made from `bytes` for `detail`, in place of one kept for the same.
    func put(_ value: Value, for bytes: Data, _ detail: Detail) {
        let key = Self.key(bytes, detail), now = ContinuousClock.now
        let released = entries.withLock { list -> [Entry] in
            var released = list.filter { $0.key == key || now - $0.since > longest }
            list.removeAll { $0.key == key || now - $0.since > longest }
            list.append(Entry(key: key, value: value, bytes: bytes, since: now))
            released += list.prefix(max(0, list.count - capacity))
            list.removeFirst(max(0, list.count - capacity))
            return released
        }
        _ = released
    }

    /// The value kept for `bytes` and `detail`, left kept; nil when none is.
    func value(for bytes: Data, _ detail: Detail) -> Value? {
        find(bytes, detail, removing: false)
    }

    /// The value kept for `bytes` and `detail`, taken out; nil when none is.
    func take(for bytes: Data, _ detail: Detail) -> Value? {
        find(bytes, detail, removing: true)
    }

    private func find(_ bytes: Data, _ detail: Detail, removing: Bool) -> Value? {
        let key = Self.key(bytes, detail), now = ContinuousClock.now
        let (found, released) = entries.withLock { list -> (Value?, [Entry]) in
            let released = list.filter { now - $0.since > longest }
            list.removeAll { now - $0.since > longest }
            guard let index = list.firstIndex(where: { $0.key == key }) else { return (nil, released) }
            return (removing ? list.remove(at: index).value : list[index].value, released)
        }
        _ = released
        return found
    }

    private static func key(_ bytes: Data, _ detail: Detail) -> Key {
        Key(address: bytes.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }, length: bytes.count, detail: detail)
    }
}
