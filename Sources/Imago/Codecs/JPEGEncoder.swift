import CTurboJPEG
import Foundation

/// Encodes JPEG with TurboJPEG, 4:2:0 chroma, baseline or progressive. Transparent pixels are
/// composited over white, since JPEG has no alpha. A kept colour profile
/// (``ImageMetadata/colorProfile``) is embedded in `APP2` segments, split over several above 64 KB.
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
        let jpeg = Data(bytes: output, count: Int(size))
        guard let profile = image.metadata.colorProfile else { return jpeg }
        return Self.embedding(profile, in: jpeg)
    }

    /// Most profile bytes one `APP2` segment carries: 65,535 less the length field and the
    /// 14-byte `ICC_PROFILE\0` header with its sequence number and count.
    static let profileBytesPerMarker = 65_519

    /// `jpeg` with `profile` in `APP2 ICC_PROFILE` segments (as many as it needs, numbered from 1)
    /// after SOI and any JFIF `APP0`, where readers look for it.
    static func embedding(_ profile: ColorProfile, in jpeg: Data) -> Data {
        let bytes = [UInt8](profile.data)
        let count = (bytes.count + profileBytesPerMarker - 1) / profileBytesPerMarker
        guard count <= 255, jpeg.count >= 4 else { return jpeg }
        var insertAt = 2
        if jpeg[jpeg.startIndex + 2] == 0xFF, jpeg[jpeg.startIndex + 3] == 0xE0, jpeg.count >= 6 {
            insertAt = 4 + (Int(jpeg[jpeg.startIndex + 4]) << 8 | Int(jpeg[jpeg.startIndex + 5]))
        }
        var segments = Data()
        for index in 0..<count {
            let chunk = bytes[(index * profileBytesPerMarker)..<min(bytes.count, (index + 1) * profileBytesPerMarker)]
            let length = 2 + 14 + chunk.count
            segments.append(contentsOf: [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)])
            segments.append(contentsOf: Array("ICC_PROFILE\0".utf8))
            segments.append(contentsOf: [UInt8(index + 1), UInt8(count)])
            segments.append(contentsOf: chunk)
        }
        var result = Data(jpeg.prefix(insertAt))
        result.append(segments)
        result.append(jpeg.dropFirst(insertAt))
        return result
    }
}
