import Foundation

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
