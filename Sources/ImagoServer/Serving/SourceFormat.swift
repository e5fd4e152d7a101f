import Foundation

/// A source's format told by its first bytes, for `skip_processing` and `raw`: imgproxy's names,
/// media types and extensions.
struct SourceFormat: Equatable {
    /// imgproxy's canonical name (`jpeg`, `png`, `webp`, `gif`, `avif`, `heif`, `bmp`, `tiff`,
    /// `ico`, `jxl`, `svg`).
    let name: String
    let mimeType: String
    let fileExtension: String

    static func sniff(_ data: Data) -> SourceFormat? {
        let bytes = [UInt8](data.prefix(32))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return SourceFormat(name: "jpeg", mimeType: "image/jpeg", fileExtension: "jpg") }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return SourceFormat(name: "png", mimeType: "image/png", fileExtension: "png") }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return SourceFormat(name: "webp", mimeType: "image/webp", fileExtension: "webp") }
        if starts(Array("GIF8".utf8)) { return SourceFormat(name: "gif", mimeType: "image/gif", fileExtension: "gif") }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            if brand.hasPrefix("avi") { return SourceFormat(name: "avif", mimeType: "image/avif", fileExtension: "avif") }
            return SourceFormat(name: "heif", mimeType: "image/heif", fileExtension: "heic")
        }
        if starts(Array("BM".utf8)) { return SourceFormat(name: "bmp", mimeType: "image/bmp", fileExtension: "bmp") }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) {
            return SourceFormat(name: "tiff", mimeType: "image/tiff", fileExtension: "tiff")
        }
        if starts([0x00, 0x00, 0x01, 0x00]) { return SourceFormat(name: "ico", mimeType: "image/x-icon", fileExtension: "ico") }
        if starts([0xFF, 0x0A]) || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) {
            return SourceFormat(name: "jxl", mimeType: "image/jxl", fileExtension: "jxl")
        }
        let text = String(decoding: data.prefix(1024), as: UTF8.self)
        if text.contains("<svg") { return SourceFormat(name: "svg", mimeType: "image/svg+xml", fileExtension: "svg") }
        return nil
    }
}
