import CTurboJPEG
import Foundation

/// Encodes JPEG with TurboJPEG, 4:2:0 chroma, baseline or progressive. Transparent pixels are
/// composited over white, since JPEG has no alpha. A kept colour profile
/// (``ImageMetadata/colorProfile``) is embedded in `APP2` segments, split over several above 64 KB;
/// kept EXIF and XMP in `APP1`.
public struct JPEGEncoder: ImageEncoding {
    public let format = ImageFormat.jpeg
    /// Quality 1…100.
    public var quality: Int
    /// Write a progressive JPEG.
    public var progressive: Bool

    /// Makes a JPEG encoder.
    public init(quality: Int = 85, progressive: Bool = false) {
        self.quality = min(max(quality, 1), 100)
        self.progressive = progressive
    }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard let handle = tjInitCompress() else { throw encodingError(format, "cannot create a compressor") }
        defer { tjDestroy(handle) }
        let pixels = image.pixelsOverWhite
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.withUnsafeBufferPointer { source in
            tjCompress2(
                handle, source.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(TJPF_RGBA.rawValue),
                &output, &size, Int32(TJSAMP_420.rawValue), Int32(quality), progressive ? TJFLAG_PROGRESSIVE : 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else { throw encodingError(format, String(cString: tjGetErrorStr2(handle))) }
        return Self.withSegments(for: image.metadata, in: Data(bytes: output, count: Int(size)))
    }

    /// Most profile bytes one `APP2` segment carries: 65,535 less the length field and the
    /// 14-byte `ICC_PROFILE\0` header with its sequence number and count.
    static let profileBytesPerMarker = 65_519

    /// `jpeg` with the metadata's EXIF (`APP1 Exif`), XMP (`APP1`, when it fits one segment) and
    /// colour profile (`APP2 ICC_PROFILE` segments, as many as it needs, numbered from 1) after SOI
    /// and any JFIF `APP0`, where readers look for them.
    static func withSegments(for metadata: ImageMetadata, in jpeg: Data) -> Data {
        var segments = Data()
        func append(_ marker: UInt8, _ payload: [UInt8]) {
            let length = 2 + payload.count
            segments.append(contentsOf: [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
            segments.append(contentsOf: payload)
        }
        if let exif = metadata.exif, exif.count + 8 <= 65_535 { append(0xE1, Array("Exif\0\0".utf8) + exif) }
        if let xmp = metadata.xmp, xmp.count + 2 + JPEGMarkers.xmpSignature.count <= 65_535 { append(0xE1, JPEGMarkers.xmpSignature + xmp) }
        if let profile = metadata.colorProfile {
            let bytes = [UInt8](profile.data)
            let count = (bytes.count + profileBytesPerMarker - 1) / profileBytesPerMarker
            if count <= 255 {
                for index in 0..<count {
                    let chunk = bytes[(index * profileBytesPerMarker)..<min(bytes.count, (index + 1) * profileBytesPerMarker)]
                    append(0xE2, Array("ICC_PROFILE\0".utf8) + [UInt8(index + 1), UInt8(count)] + chunk)
                }
            }
        }
        guard !segments.isEmpty, jpeg.count >= 4 else { return jpeg }
        var insertAt = 2
        if jpeg[jpeg.startIndex + 2] == 0xFF, jpeg[jpeg.startIndex + 3] == 0xE0, jpeg.count >= 6 {
            insertAt = 4 + (jpeg.integer(2, at: 4, .bigEndian) ?? 0)
        }
        var result = Data(jpeg.prefix(insertAt))
        result.append(segments)
        result.append(jpeg.dropFirst(insertAt))
        return result
    }
}
