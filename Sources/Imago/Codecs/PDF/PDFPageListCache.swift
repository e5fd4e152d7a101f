#if PDF
    import Foundation

    /// The last `pdfinfo` answers, so that a decode does not run it again after the pipeline's
    /// estimate ran it on the same bytes (a process start, about 6 ms). Keyed, as
    /// ``VideoFileHandover`` keys opened videos, by the bytes' storage and the page range asked
    /// about: an entry holds the bytes, so no other document can take their address while it is
    /// kept, and nothing is hashed. At most two are kept, none for more than 10 s.
    enum PDFPageListCache {
        struct Key: Hashable {
            var address: Int
            var length: Int
            var pages: ClosedRange<Int>?
        }

        private struct Entry {
            let key: Key
            let list: PDFPageList
            /// Held so that the address stays this document's while the entry is kept.
            let data: Data
            let since: ContinuousClock.Instant
        }

        private static let entries = Locked<[Entry]>([])
        private static let capacity = 2
        private static let longest = Duration.seconds(10)

        static func key(_ data: Data, pages: ClosedRange<Int>?) -> Key {
            Key(address: data.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }, length: data.count, pages: pages)
        }

        static func value(for key: Key) -> PDFPageList? {
            let now = ContinuousClock.now
            return entries.withLock { list in
                list.removeAll { now - $0.since > longest }
                return list.first { $0.key == key }?.list
            }
        }

        static func store(_ value: PDFPageList, for key: Key, data: Data) {
            let now = ContinuousClock.now
            let dropped = entries.withLock { list -> [Entry] in
                var dropped = list.filter { $0.key == key || now - $0.since > longest }
                list.removeAll { $0.key == key || now - $0.since > longest }
                list.append(Entry(key: key, list: value, data: data, since: now))
                if list.count > capacity {
                    dropped += list.prefix(list.count - capacity)
                    list.removeFirst(list.count - capacity)
                }
                return dropped
            }
            // The bytes they held go here, outside the lock.
            _ = dropped
        }
    }
#endif
