import Foundation

/// An Ultra HDR JPEG's structure: a primary JPEG (the SDR base) that declares a gain map (an ISO
/// 21496-1 version stamp in `APP2`, or `hdrgm` XMP), an MPF index (or the XMP container directory's
/// length) that says where the gain map's JPEG starts, and that JPEG after the primary's end, with
/// its metadata in its own `APP2` (ISO 21496-1, preferred) or XMP.
enum UltraHDRContainer {
    /// Where a file's gain map is and what it says.
    struct GainMapLocation: Sendable, Hashable {
        /// The gain map's JPEG within the file.
        var range: Range<Int>
        var metadata: GainMapMetadata
        /// Its frame header's size and component count.
        var width: Int
        var height: Int
        var components: Int
        /// `iso21496`, `hdrgm` or `apple`.
        var metadataSource: String

        /// What ``ImageMetadata/sourceGainMap`` says of it.
        var stored: StoredGainMap {
            StoredGainMap(width: width, height: height, channelCount: components, format: .jpeg, metadataSource: metadataSource, metadata: metadata)
        }
    }

    /// The gain map of the JPEG in `bytes` whose markers are `markers`; nil when nothing points at
    /// a whole JPEG inside the file past the index (an MPF entry past the end, into the segments
    /// before it, or not at a JPEG start; a JPEG that does not end with EOI), or that JPEG has no
    /// usable gain-map metadata (ISO 21496-1, `hdrgm`, or Apple's `HDRGainMapHeadroom`): a
    /// camera's preview is not a gain map. Of several, the first.
    static func locate(_ bytes: UnsafeRawBufferPointer, markers: JPEGMarkers) -> GainMapLocation? {
        let primaryXMP = markers.xmp(bytes)
        for range in candidates(bytes, markers: markers, primaryXMP: primaryXMP) {
            guard range.count >= 4, bytes[range.lowerBound] == 0xFF, bytes[range.lowerBound + 1] == 0xD8, bytes[range.upperBound - 2] == 0xFF,
                bytes[range.upperBound - 1] == 0xD9
            else { continue }
            let secondary = UnsafeRawBufferPointer(rebasing: bytes[range])
            let gainMarkers = JPEGMarkers(secondary)
            guard gainMarkers.width > 0, gainMarkers.height > 0, [1, 3].contains(gainMarkers.components), gainMarkers.precision == 8 else { continue }
            var metadata = gainMarkers.isoGainMapRange.flatMap { ISOGainMapMetadata.read(UnsafeRawBufferPointer(rebasing: secondary[$0])) }
            var source = "iso21496"
            if metadata == nil, let xmp = gainMarkers.xmp(secondary) {
                (metadata, source) = (GainMapXMP.read(xmp), "hdrgm")
                if metadata == nil { (metadata, source) = (GainMapXMP.readApple(xmp, primaryEXIF: markers.exif(bytes)), "apple") }
            }
            guard let metadata else { continue }
            return GainMapLocation(
                range: range, metadata: metadata, width: gainMarkers.width, height: gainMarkers.height, components: gainMarkers.components,
                metadataSource: source)
        }
        return nil
    }

    /// Where the gain map may be: each MPF entry after the first, then the XMP directory's length
    /// counted back from the end; every range in the file and past the index.
    private static func candidates(_ bytes: UnsafeRawBufferPointer, markers: JPEGMarkers, primaryXMP: Data?) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        if let mpf = markers.multiPictureRange, let index = MultiPictureIndex(tiff: UnsafeRawBufferPointer(rebasing: bytes[mpf])) {
            for entry in index.entries.dropFirst() {
                let (start, overflow) = mpf.lowerBound.addingReportingOverflow(entry.offset)
                guard !overflow, entry.offset > 0, start >= mpf.upperBound, entry.size <= bytes.count - start else { continue }
                ranges.append(start..<(start + entry.size))
            }
        }
        if let length = primaryXMP.flatMap(GainMapXMP.gainMapLength), length > 0, length < bytes.count {
            let start = bytes.count - length
            if markers.multiPictureRange.map({ start >= $0.upperBound }) ?? true { ranges.append(start..<bytes.count) }
        }
        return ranges
    }

    /// An Ultra HDR JPEG: `primary` (a complete JPEG; any segment it carries stays) with the ISO
    /// version stamp, the `hdrgm` container XMP and an MPF index put after its first segments, then
    /// `gainMap` (a complete JPEG) with the ISO metadata and the `hdrgm` XMP put after its SOI.
    static func assemble(primary: Data, gainMap: Data, metadata: GainMapMetadata) -> Data {
        let secondary = inserting(
            [
                segment(0xE2, ISOGainMapMetadata.namespace + ISOGainMapMetadata.payload(metadata)),
                segment(0xE1, JPEGMarkers.xmpSignature + [UInt8](GainMapXMP.gainMapPacket(metadata))),
            ],
            into: gainMap, afterJFIF: false)
        let stamp = segment(0xE2, ISOGainMapMetadata.namespace + ISOGainMapMetadata.versionStamp)
        let xmp = segment(0xE1, JPEGMarkers.xmpSignature + [UInt8](GainMapXMP.primaryPacket(gainMapLength: secondary.count)))
        let mpfSize = 4 + MultiPictureIndex.payloadSize(entries: 2)
        // The primary's size is known before the index's numbers: the index has a fixed size.
        let withoutIndex = inserting([xmp, stamp], into: primary, afterJFIF: true)
        let indexAt = insertionPoint(withoutIndex, afterJFIF: true) + xmp.count + stamp.count
        let primarySize = withoutIndex.count + mpfSize
        let tiffStart = indexAt + 4 + MultiPictureIndex.signature.count
        let index = MultiPictureIndex(entries: [.init(size: primarySize, offset: 0), .init(size: secondary.count, offset: primarySize - tiffStart)])
        var result = Data(withoutIndex.prefix(indexAt))
        result.append(contentsOf: segment(0xE2, index.payload()))
        result.append(withoutIndex.dropFirst(indexAt))
        result.append(secondary)
        return result
    }

    private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload
    }

    /// After SOI, and after a JFIF `APP0` when `afterJFIF` (which must come first), then after the
    /// EXIF `APP1` (which readers expect right after).
    private static func insertionPoint(_ jpeg: Data, afterJFIF: Bool) -> Int {
        var offset = 2
        let bytes = [UInt8](jpeg.prefix(65_600))
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let isJFIF = marker == 0xE0 && afterJFIF
            let isEXIF = marker == 0xE1 && bytes.count >= offset + 10 && Array(bytes[(offset + 4)..<(offset + 10)]) == Array("Exif\0\0".utf8)
            guard isJFIF || isEXIF, let length = bytes.integer(2, at: offset + 2, .bigEndian) else { break }
            offset += 2 + length
        }
        return min(offset, jpeg.count)
    }

    private static func inserting(_ segments: [[UInt8]], into jpeg: Data, afterJFIF: Bool) -> Data {
        let at = insertionPoint(jpeg, afterJFIF: afterJFIF)
        var result = Data(jpeg.prefix(at))
        for segment in segments { result.append(contentsOf: segment) }
        result.append(jpeg.dropFirst(at))
        return result
    }
}
