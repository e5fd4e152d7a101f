#if HEIF
    import Foundation

    /// What libheif 1.15 trusts before it checks: where each item's bytes are (`iloc`) and how large
    /// a derived image says it is (`grid`, `iovl`). Read here from the `meta` box in safe Swift, so a
    /// file whose items point past its end or past its `idat`, or whose grid or overlay declares a
    /// canvas over the limits, is refused before libheif allocates for it; so is a derived image that
    /// is built, through its `dimg` references, from itself, which libheif follows until its stack or
    /// its threads run out. (A fuzzed file with a grid read past its `idat` made libheif allocate
    /// 2 GB and then crash; a grid made of itself took 4 GB in threads. Tests/Hostile keeps both.)
    struct HEIFItemCheck {
        struct Location {
            var method: Int
            var base: Int
            var extents: [(offset: Int, length: Int)]
        }

        private(set) var types: [UInt32: String] = [:]
        private(set) var locations: [UInt32: Location] = [:]
        /// Where the `idat` box's data lies in the file.
        private(set) var idat: Range<Int>?
        /// Each derived image's `dimg` references: the items it is made of.
        private(set) var ingredients: [UInt32: [UInt32]] = [:]

        /// Refuses `data` when an item lies outside the file or its `idat`, or (with `checksCanvas`) a
        /// grid or overlay declares a canvas over `options`' limits. A file without a `meta` box is
        /// left to libheif.
        static func check(_ data: Data, options: DecodingOptions, checksCanvas: Bool) throws(ImagoError) {
            let bytes = [UInt8](data)
            guard let meta = Box.children(of: bytes, in: 0..<bytes.count).first(where: { $0.type == "meta" }) else { return }
            // `meta` is a full box: version and flags before its children.
            guard meta.body.count >= 4 else { throw ImagoError.invalid(.heif, "damaged meta box") }
            var items = HEIFItemCheck()
            try items.read(bytes, children: Box.children(of: bytes, in: (meta.body.lowerBound + 4)..<meta.body.upperBound))
            guard !items.hasReferenceCycle else { throw ImagoError.invalid(.heif, "an image made of itself") }
            for (id, location) in items.locations {
                let range = try items.range(of: location, fileSize: bytes.count)
                guard checksCanvas, let type = items.types[id], type == "grid" || type == "iovl" else { continue }
                if let (width, height) = Self.canvas(type: type, Array(bytes[range])) {
                    try options.check(width: width, height: height)
                }
            }
        }

        private mutating func read(_ bytes: [UInt8], children: [Box]) throws(ImagoError) {
            for box in children {
                switch box.type {
                case "idat": idat = box.body
                case "iloc": try readLocations(Reader(bytes, box.body))
                case "iinf": try readTypes(bytes, Reader(bytes, box.body))
                case "iref": try readReferences(bytes, Reader(bytes, box.body))
                default: continue
                }
            }
        }

        /// ISO/IEC 14496-12 §8.11.3, versions 0 to 2.
        private mutating func readLocations(_ reader: Reader) throws(ImagoError) {
            var reader = reader
            let version = try reader.integer(1)
            _ = try reader.integer(3)
            let sizes = try reader.integer(1), more = try reader.integer(1)
            let offsetSize = sizes >> 4, lengthSize = sizes & 15, baseSize = more >> 4
            let indexSize = version == 1 || version == 2 ? more & 15 : 0
            guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }), version <= 2 else {
                throw ImagoError.invalid(.heif, "damaged iloc box")
            }
            let count = try reader.integer(version < 2 ? 2 : 4)
            for _ in 0..<count {
                let id = UInt32(truncatingIfNeeded: try reader.integer(version < 2 ? 2 : 4))
                let method = version >= 1 ? try reader.integer(2) & 15 : 0
                _ = try reader.integer(2)  // data reference index
                let base = try reader.integer(baseSize)
                let extentCount = try reader.integer(2)
                var extents: [(offset: Int, length: Int)] = []
                for _ in 0..<extentCount {
                    _ = try reader.integer(indexSize)
                    extents.append((try reader.integer(offsetSize), try reader.integer(lengthSize)))
                }
                locations[id] = Location(method: method, base: base, extents: extents)
            }
        }

        /// `iinf`'s `infe` entries of versions 2 and 3: item id and type.
        private mutating func readTypes(_ bytes: [UInt8], _ reader: Reader) throws(ImagoError) {
            var reader = reader
            let version = try reader.integer(1)
            _ = try reader.integer(3)
            _ = try reader.integer(version == 0 ? 2 : 4)
            for entry in Box.children(of: bytes, in: reader.position..<reader.end) where entry.type == "infe" {
                var infe = Reader(bytes, entry.body)
                let entryVersion = try infe.integer(1)
                _ = try infe.integer(3)
                guard entryVersion >= 2 else { continue }
                let id = UInt32(truncatingIfNeeded: try infe.integer(entryVersion == 2 ? 2 : 4))
                _ = try infe.integer(2)  // protection index
                types[id] = try infe.fourCC()
            }
        }

        /// `iref`'s `dimg` entries (ISO/IEC 14496-12 §8.11.12): 16-bit item ids in version 0, 32-bit in 1.
        private mutating func readReferences(_ bytes: [UInt8], _ reader: Reader) throws(ImagoError) {
            var reader = reader
            let version = try reader.integer(1)
            _ = try reader.integer(3)
            let idSize = version == 0 ? 2 : 4
            for entry in Box.children(of: bytes, in: reader.position..<reader.end) where entry.type == "dimg" {
                var references = Reader(bytes, entry.body)
                let from = UInt32(truncatingIfNeeded: try references.integer(idSize))
                let count = try references.integer(2)
                for _ in 0..<count { ingredients[from, default: []].append(UInt32(truncatingIfNeeded: try references.integer(idSize))) }
            }
        }

        /// Whether some image is made, directly or through others, of itself (a depth-first walk
        /// that meets an item it is still inside).
        var hasReferenceCycle: Bool {
            enum Mark { case visiting, done }
            var marks: [UInt32: Mark] = [:]
            for start in ingredients.keys where marks[start] == nil {
                // An explicit stack of (item, next ingredient to visit), so a long chain cannot
                // exhaust this thread's stack either.
                var stack: [(item: UInt32, next: Int)] = [(start, 0)]
                marks[start] = .visiting
                while let (item, next) = stack.last {
                    let children = ingredients[item] ?? []
                    guard next < children.count else {
                        marks[item] = .done
                        stack.removeLast()
                        continue
                    }
                    stack[stack.count - 1].next += 1
                    switch marks[children[next]] {
                    case .visiting: return true
                    case .done: continue
                    case nil:
                        marks[children[next]] = .visiting
                        stack.append((children[next], 0))
                    }
                }
            }
            return false
        }

        /// The bytes of an item's first extent, checked to lie inside the file (construction method
        /// 0) or the `idat` (method 1); every other extent is checked too. Method 2 (bytes of another
        /// item) is not followed: an empty range.
        private func range(of location: Location, fileSize: Int) throws(ImagoError) -> Range<Int> {
            let container: Range<Int>
            switch location.method {
            case 0: container = 0..<fileSize
            case 1:
                guard let idat else { throw ImagoError.invalid(.heif, "an item in a missing idat") }
                container = idat
            default: return 0..<0
            }
            var first: Range<Int>?
            for extent in location.extents {
                let (start, startOverflow) = container.lowerBound.addingReportingOverflow(location.base)
                let (begin, beginOverflow) = start.addingReportingOverflow(extent.offset)
                // A length of 0 means "to the end of the container".
                let (end, endOverflow) = extent.length == 0 ? (container.upperBound, false) : begin.addingReportingOverflow(extent.length)
                guard !startOverflow, !beginOverflow, !endOverflow, begin <= end, container.contains(begin) || begin == end, end <= container.upperBound else {
                    throw ImagoError.invalid(.heif, "an item lies outside the file")
                }
                if first == nil { first = begin..<end }
            }
            return first ?? 0..<0
        }

        /// The output size a `grid` (ISO/IEC 23008-12 §6.6.2.3) or `iovl` (§6.6.2.2) declares.
        static func canvas(type: String, _ body: [UInt8]) -> (Int, Int)? {
            var reader = Reader(body, 0..<body.count)
            guard let version = try? reader.integer(1), version == 0, let flags = try? reader.integer(1) else { return nil }
            let fieldSize = flags & 1 == 1 ? 4 : 2
            if type == "grid" {
                guard (try? reader.integer(2)) != nil else { return nil }  // rows and columns, less one
            } else {
                guard (try? reader.integer(8)) != nil else { return nil }  // four 16-bit fill values
            }
            guard let width = try? reader.integer(fieldSize), let height = try? reader.integer(fieldSize) else { return nil }
            return (width, height)
        }
    }

    /// An ISO-BMFF box: its four-character type and where its body lies.
    private struct Box {
        var type: String
        var body: Range<Int>

        /// The boxes one after another in `range`; a box that claims more than is left ends the list.
        static func children(of bytes: [UInt8], in range: Range<Int>) -> [Box] {
            var boxes: [Box] = []
            var position = range.lowerBound
            while range.upperBound - position >= 8, boxes.count < 10_000 {
                var reader = Reader(bytes, position..<range.upperBound)
                guard var size = try? reader.integer(4), let type = try? reader.fourCC() else { break }
                if size == 1 {
                    guard let large = try? reader.integer(8) else { break }
                    size = large
                } else if size == 0 {
                    size = range.upperBound - position
                }
                let bodyStart = reader.position
                guard size >= bodyStart - position, size <= range.upperBound - position else { break }
                boxes.append(Box(type: type, body: bodyStart..<(position + size)))
                position += size
            }
            return boxes
        }
    }

    /// Big-endian reads inside a range, each checked.
    private struct Reader {
        let bytes: [UInt8]
        private(set) var position: Int
        let end: Int

        init(_ bytes: [UInt8], _ range: Range<Int>) {
            self.bytes = bytes
            position = range.lowerBound
            end = min(range.upperBound, bytes.count)
        }

        /// An unsigned integer of `size` bytes (0 reads nothing and gives 0); sizes over 7 bytes must
        /// fit in 63 bits.
        mutating func integer(_ size: Int) throws(ImagoError) -> Int {
            guard size >= 0, size <= 8, end - position >= size else { throw ImagoError.invalid(.heif, "a box ends early") }
            guard size > 0 else { return 0 }
            guard let value = bytes.integer(size, at: position, .bigEndian) else { throw ImagoError.invalid(.heif, "a size too large") }
            position += size
            return value
        }

        mutating func fourCC() throws(ImagoError) -> String {
            guard end - position >= 4 else { throw ImagoError.invalid(.heif, "a box ends early") }
            defer { position += 4 }
            return String(decoding: bytes[position..<(position + 4)], as: UTF8.self)
        }
    }
#endif
