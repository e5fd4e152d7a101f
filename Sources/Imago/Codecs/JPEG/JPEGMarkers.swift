import Foundation

/// What Imago reads from a JPEG's marker segments itself: the EXIF orientation, the frame's
/// size and coding, the ICC profile and the Adobe marker (TurboJPEG 2.1 has no call for either).
/// Reads up to the first scan; never trusts a length past the end of the data.
struct JPEGMarkers {
    var orientation = ImageOrientation.up
    /// An `APP14 Adobe` segment: its CMYK is stored inverted (255 = no ink), as Photoshop writes.
    var hasAdobeMarker = false
    /// The `APP2 ICC_PROFILE` chunks by sequence number (from 1), and the count each declared.
    private var profileChunks: [Int: Range<Int>] = [:]
    private var profileChunkCounts: Set<Int> = []
    private var profileChunksRepeat = false
    /// The first `APP1` EXIF block (after `Exif\0\0`) and XMP packet (after its namespace).
    private var exifRange: Range<Int>?
    private var xmpRange: Range<Int>?
    /// The frame header's size (0 × 0 when there is none before the first scan).
    var width = 0, height = 0
    /// Progressive (SOF2/6/10/14): libjpeg keeps every coefficient of the image while decoding.
    var isProgressive = false
    /// Huffman-coded (SOF0–3), not arithmetic-coded or lossless: what Imago's DC decoder reads.
    var isHuffmanDCT = false
    /// Bits per sample the frame header declares (8, or 12 for rare medical files).
    var precision = 8
    /// Components the frame header declares (1 grey, 3 colour, 4 CMYK).
    var components = 0
    /// Samples each pixel has over all components, in eighths (24 for 4:4:4, 12 for 4:2:0): how
    /// large libjpeg's coefficient buffers are for a progressive file (2 bytes a sample).
    var sampleEighthsPerPixel = 0
    /// The first `APP2 MPF\0` index's payload after the signature: its TIFF header starts there,
    /// and the index's offsets count from it.
    var multiPictureRange: Range<Int>?
    /// The first ISO 21496-1 `APP2` payload after its namespace.
    var isoGainMapRange: Range<Int>?

    init(_ bytes: UnsafeRawBufferPointer) {
        var offset = 2  // after SOI
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xFF {
                offset += 1
                continue
            }  // fill byte
            if marker == 0xDA || marker == 0xD9 { break }  // start of scan, end of image
            let length = bytes.integer(2, at: offset + 2, .bigEndian) ?? 0
            guard length >= 2, offset + 2 + length <= bytes.count else { break }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])
            if marker == 0xE1 {
                orientation = Self.exifOrientation(segment) ?? orientation
                if exifRange == nil, segment.starts(with: Array("Exif\0\0".utf8)) { exifRange = (offset + 4 + 6)..<(offset + 2 + length) }
                if xmpRange == nil, segment.starts(with: Self.xmpSignature) {
                    xmpRange = (offset + 4 + Self.xmpSignature.count)..<(offset + 2 + length)
                }
            }
            if marker == 0xE2, segment.count >= 14, segment.starts(with: Self.iccSignature) {
                let sequence = Int(segment[12])
                if profileChunks[sequence] != nil { profileChunksRepeat = true }
                profileChunks[sequence] = (offset + 4 + 14)..<(offset + 2 + length)
                profileChunkCounts.insert(Int(segment[13]))
            }
            if marker == 0xE2, multiPictureRange == nil, segment.starts(with: MultiPictureIndex.signature) {
                multiPictureRange = (offset + 4 + 4)..<(offset + 2 + length)
            }
            if marker == 0xE2, isoGainMapRange == nil, segment.starts(with: ISOGainMapMetadata.namespace) {
                isoGainMapRange = (offset + 4 + ISOGainMapMetadata.namespace.count)..<(offset + 2 + length)
            }
            if marker == 0xEE, segment.starts(with: Array("Adobe".utf8)) { hasAdobeMarker = true }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker), segment.count >= 5 {
                precision = Int(segment[0])
                components = segment.count >= 6 ? Int(segment[5]) : 0
                height = segment.integer(2, at: 1, .bigEndian) ?? 0
                width = segment.integer(2, at: 3, .bigEndian) ?? 0
                isProgressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
                isHuffmanDCT = [0xC0, 0xC1, 0xC2].contains(marker)
                // Each component: id, sampling (H << 4 | V), table; sampled at H×V of the largest.
                let factors = stride(from: 7, to: min(segment.count, 6 + 3 * components), by: 3).map { (Int(segment[$0]) >> 4, Int(segment[$0]) & 15) }
                let largest = (factors.map(\.0).max() ?? 1, factors.map(\.1).max() ?? 1)
                sampleEighthsPerPixel =
                    largest.0 > 0 && largest.1 > 0 ? factors.reduce(0) { $0 + 8 * $1.0 * $1.1 / (largest.0 * largest.1) } : 8 * max(components, 1)
            }
            offset += 2 + length
        }
    }

    /// What libjpeg's coefficient buffers hold for a progressive frame: every coefficient at full
    /// size, 2 bytes for each sample of each component, rounded up to whole blocks (a row more).
    var coefficientBytes: Int {
        isProgressive ? width * height * 2 * max(8, sampleEighthsPerPixel) / 8 + width * 64 : 0
    }

    /// Whether a decode at 1/8 goes to Imago's DC decoder, which keeps one DC value per block
    /// (2 bytes a block a component) instead of libjpeg's coefficient buffers: an 8-bit Huffman
    /// frame of one component, or of three without an Adobe marker (which may say RGB or YCCK).
    var decodesDCAtEighth: Bool {
        isHuffmanDCT && precision == 8 && (components == 1 || (components == 3 && !hasAdobeMarker))
    }

    private static let iccSignature = Array("ICC_PROFILE\0".utf8)
    static let xmpSignature = Array("http://ns.adobe.com/xap/1.0/\0".utf8)

    /// The EXIF block's bytes, if there is one.
    func exif(_ bytes: UnsafeRawBufferPointer) -> Data? { exifRange.map { Self.copy(bytes, $0) } }
    /// The XMP packet's bytes, if there is one.
    func xmp(_ bytes: UnsafeRawBufferPointer) -> Data? { xmpRange.map { Self.copy(bytes, $0) } }

    /// A copy of `range` of `bytes` (in bounds: every range here was checked against the data's end).
    /// Copied from the pointer: `Data(bytes[range])` and `append(contentsOf: bytes[range])` go
    /// through `Slice<UnsafeRawBufferPointer>`'s `ContiguousBytes` conformance, which in release
    /// builds here now and then handed Foundation a garbage length and trapped (2 of 15 runs of
    /// `imago thumbnail` on 20 profiled JPEGs; 0 of 40 after this change).
    static func copy(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Data {
        guard let base = bytes.baseAddress, !range.isEmpty else { return Data() }
        return Data(bytes: base + range.lowerBound, count: range.count)
    }

    /// The ICC profile in the `APP2` chunks, joined in their sequence order; nil when there is
    /// none, or when a chunk is missing, repeated or numbered past the count (the profile is then
    /// unusable; the image is not).
    func iccProfile(_ bytes: UnsafeRawBufferPointer) -> ColorProfile? {
        guard !profileChunks.isEmpty, !profileChunksRepeat, profileChunkCounts.count == 1, let count = profileChunkCounts.first,
            count == profileChunks.count
        else { return nil }
        var data = Data()
        for sequence in 1...count {
            guard let range = profileChunks[sequence] else { return nil }
            data.append(Self.copy(bytes, range))
        }
        return ColorProfile(iccData: data)
    }

    /// Tag 0x0112 of IFD0 in an APP1 "Exif\0\0" segment.
    private static func exifOrientation(_ segment: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard segment.starts(with: Array("Exif\0\0".utf8)) else { return nil }
        return EXIF(Data(segment))?.orientation
    }
}
