import Foundation

/// What Imago reads from a JPEG's marker segments itself: the EXIF orientation and the frame's
/// size and coding. Reads up to
/// the first scan; never trusts a length past the end of the data.
struct JPEGMarkers {
    var orientation = ImageOrientation.up
    /// The frame header's size (0 × 0 when there is none before the first scan).
    var width = 0, height = 0
    /// Progressive (SOF2/6/10/14): libjpeg keeps every coefficient of the image while decoding.
    var isProgressive = false

    init(_ bytes: UnsafeRawBufferPointer) {
        var offset = 2  // after SOI
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xFF {
                offset += 1
                continue
            }  // fill byte
            if marker == 0xDA || marker == 0xD9 { break }  // start of scan, end of image
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { break }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])
            if marker == 0xE1 { orientation = Self.exifOrientation(segment) ?? orientation }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker), segment.count >= 5 {
                height = Int(segment[1]) << 8 | Int(segment[2])
                width = Int(segment[3]) << 8 | Int(segment[4])
                isProgressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
            }
            offset += 2 + length
        }
    }

    /// Tag 0x0112 of IFD0 in an APP1 "Exif\0\0" segment.
    private static func exifOrientation(_ segment: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard segment.count >= 14, segment.starts(with: Array("Exif\0\0".utf8)) else { return nil }
        let tiff = UnsafeRawBufferPointer(rebasing: segment[6...])
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func read16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return littleEndian ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func read32(_ at: Int) -> Int? {
            guard let high = read16(littleEndian ? at + 2 : at), let low = read16(littleEndian ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard let ifd = read32(4), let count = read16(ifd) else { return nil }
        for index in 0..<count {
            let entry = ifd + 2 + index * 12
            guard let tag = read16(entry) else { return nil }
            if tag == 0x0112, let value = read16(entry + 8) { return ImageOrientation(rawValue: value) }
        }
        return nil
    }
}
