#if PDF
    import Foundation

    /// The last few `pdfinfo` answers, so that a decode does not run it again after the pipeline's
    /// estimate ran it on the same bytes (a process start, about 6 ms). Keyed by the document's
    /// length and a SipHash of its bytes (seeded per process, so no document can be made to
    /// collide with another) and the page range asked about.
    enum PDFPageListCache {
        struct Key: Hashable {
            var length: Int
            var digest: Int
            var pages: ClosedRange<Int>?
        }

        private static let entries = Locked<[(Key, PDFPageList)]>([])
        private static let capacity = 16

        static func key(_ data: Data, pages: ClosedRange<Int>?) -> Key {
            var hasher = Hasher()
            data.withUnsafeBytes { hasher.combine(bytes: $0) }
            return Key(length: data.count, digest: hasher.finalize(), pages: pages)
        }

        static func value(for key: Key) -> PDFPageList? {
            entries.withLock { list in list.first { $0.0 == key }?.1 }
        }

        static func store(_ value: PDFPageList, for key: Key) {
            entries.withLock { list in
                list.removeAll { $0.0 == key }
                list.append((key, value))
                if list.count > capacity { list.removeFirst(list.count - capacity) }
            }
        }
    }
#endif
