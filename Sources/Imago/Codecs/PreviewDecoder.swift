import Foundation

/// Makes previews of an image while its bytes arrive: a progressive JPEG after each complete scan;
/// a baseline JPEG, a non-interlaced PNG and a still WebP from the rows decoded so far. Each call
/// gets all the bytes so far and answers nil when there is nothing new worth showing.
public struct PreviewDecoder: Sendable {
    private let options: DecodingOptions
    private var shownScans = 0
    private var shownRows = 0

    /// Makes a preview decoder that respects `options`' limits.
    public init(options: DecodingOptions = DecodingOptions()) {
        self.options = options
    }

    /// A preview of `data` (the bytes received so far), or nil.
    public mutating func preview(of data: Data) -> Image? {
        if JPEGDecoder().canDecode(data) { return jpegPreview(data) }
        if PNGDecoder().canDecode(data) { return rowsPreview(PNGDecoder().partialImage(data, options: options)) }
        if WebPDecoder().canDecode(data) { return rowsPreview(WebPDecoder().partialImage(data, options: options)) }
        return nil
    }

    private mutating func jpegPreview(_ data: Data) -> Image? {
        let layout = data.withUnsafeBytes { JPEGScanLayout($0) }
        if layout.isProgressive {
            // A new preview only when a further scan is complete: each scan refines the whole picture.
            guard layout.completeScans > shownScans else { return nil }
            shownScans = layout.completeScans
            // Decode exactly the complete scans, closed with EOI, so libjpeg never reads a
            // half-received table that follows them.
            return try? JPEGDecoder().decode(data.prefix(layout.endOfCompleteScans) + [0xFF, 0xD9], options: options)
        } else {
            // Baseline rows arrive in order; show them when the first scan has started and data grew.
            guard layout.scanStarted, data.count > shownRows else { return nil }
            shownRows = data.count
        }
        return try? JPEGDecoder().decode(data, options: options)
    }

    private mutating func rowsPreview(_ partial: (image: Image, rows: Int)?) -> Image? {
        guard let partial, partial.rows > shownRows else { return nil }
        shownRows = partial.rows
        return partial.image
    }
}

/// Where a JPEG's scans start and end, read from its markers: a scan is complete once a marker
/// other than a restart marker follows its entropy-coded data.
struct JPEGScanLayout {
    var isProgressive = false
    var scanStarted = false
    var completeScans = 0
    /// Where the marker that ended the last complete scan starts.
    var endOfCompleteScans = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        var offset = 2
        var inScan = false
        while offset + 1 < bytes.count {
            guard bytes[offset] == 0xFF else {
                offset += 1
                continue
            }
            let marker = bytes[offset + 1]
            if inScan {
                // Stuffed 0xFF00, fill bytes and restart markers belong to the scan's data.
                if marker == 0x00 || marker == 0xFF || (0xD0...0xD7).contains(marker) {
                    offset += 2
                    continue
                }
                inScan = false
                completeScans += 1
                endOfCompleteScans = offset
            }
            if marker == 0xD9 { break }
            guard offset + 4 <= bytes.count else { break }
            let length = bytes.integer(2, at: offset + 2, .bigEndian) ?? 0
            if marker == 0xC2 { isProgressive = true }
            if marker == 0xDA {
                inScan = true
                scanStarted = true
            }
            offset += 2 + max(length, 2)
        }
    }
}
