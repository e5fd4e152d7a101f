import CJPEGWriter
import Foundation

/// Encodes JPEG with libjpeg-turbo's libjpeg: 4:2:0 chroma (4:4:4 on request), baseline or
/// progressive, Huffman tables optimised for the image by default (libvips' `optimize_coding`,
/// which imgproxy sets: 2–4% smaller at the same quality). Transparent pixels are composited over
/// white, since JPEG has no alpha. A kept colour profile (``ImageMetadata/colorProfile``) is
/// embedded in `APP2` segments, split over several above 64 KB; kept EXIF and XMP in `APP1`. An
/// image with a gain map (``Image/gainMap``) is written as an Ultra HDR JPEG: the gain map as a
/// second JPEG (grey or colour) after the first, with an MPF index and both ISO 21496-1 and `hdrgm`
/// XMP metadata, which Android 14+, Chrome, libultrahdr and libvips 8.18 read.
public struct JPEGEncoder: ImageEncoding {
    public let format = ImageFormat.jpeg
    /// Quality 1…100.
    public var quality: Int
    /// Write a progressive JPEG.
    public var progressive: Bool
    /// Compute Huffman tables for the image (an extra pass) instead of the standard ones.
    public var optimizesCoding: Bool
    /// Keep chroma at full resolution (4:4:4) instead of halving it both ways (4:2:0).
    public var keepsFullChroma: Bool

    /// Makes a JPEG encoder.
    public init(quality: Int = 85, progressive: Bool = false, optimizesCoding: Bool = true, keepsFullChroma: Bool = false) {
        self.quality = min(max(quality, 1), 100)
        self.progressive = progressive
        self.optimizesCoding = optimizesCoding
        self.keepsFullChroma = keepsFullChroma
    }

    /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: the pixels over white and libjpeg's buffers: 2.4 bytes a pixel on a 53 MP photo.
    public func workingBytes(for image: Image) -> Int { image.width * image.height * 3 + (image.gainMap.map { $0.width * $0.height * 3 } ?? 0) }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard image.width > 0, image.height > 0, image.width <= 65_500, image.height <= 65_500 else {
            throw encodingError(format, "cannot write \(image.width)×\(image.height): JPEG's sides end at 65,500")
        }
        let primary = Self.withSegments(
            for: image.metadata, in: try compress(image.pixelsOverWhite, width: image.width, height: image.height, grayscale: false))
        guard let gainMap = image.gainMap else { return primary }
        // The gain map as its own JPEG after the primary: an Ultra HDR JPEG (ISO 21496-1 and hdrgm).
        let encoded = try compress(gainMap.pixels, width: gainMap.width, height: gainMap.height, grayscale: gainMap.channelCount == 1)
        return UltraHDRContainer.assemble(primary: primary, gainMap: encoded, metadata: gainMap.metadata)
    }

    /// `pixels` (RGBA8, alpha ignored) as a bare JPEG: SOI, JFIF, tables, scans, EOI.
    private func compress(_ pixels: [UInt8], width: Int, height: Int, grayscale: Bool) throws(ImagoError) -> Data {
        let settings = imago_jpeg_settings(
            quality: Int32(quality), progressive: progressive ? 1 : 0, optimize_coding: optimizesCoding ? 1 : 0,
            no_subsample: keepsFullChroma ? 1 : 0, grayscale: grayscale ? 1 : 0)
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 200)
        let status = pixels.withUnsafeBufferPointer { source in
            imago_jpeg_write(source.baseAddress, Int32(width), Int32(height), width * 4, settings, &output, &size, &message, message.count)
        }
        defer { imago_jpeg_free(output) }
        guard status == 0, let output else {
            throw encodingError(format, String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return Data(bytes: output, count: Int(size))
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
        // A kept packet that describes the source's gain-map container would misdescribe this file.
        if let xmp = metadata.xmp, xmp.count + 2 + JPEGMarkers.xmpSignature.count <= 65_535, !GainMapXMP.mentionsGainMap(xmp) {
            append(0xE1, JPEGMarkers.xmpSignature + xmp)
        }
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
