import Foundation

@testable import Imago

/// A fuzzer's bytes as a colour profile through Little CMS: the first byte picks the pixels
/// (RGB 8- or 16-bit, gray, CMYK plain or inverted); the rest is the profile, its declared size
/// and `acsp` signature patched in so every input reaches Little CMS rather than Imago's header
/// check. The profile is read, described, made into a transform within 16 MiB and applied to a
/// small image. Every input must end in a transform or a refusal.
enum ColorProfileFeed {
    static func run(_ data: Data) {
        guard let selector = data.first else { return }
        var bytes = [UInt8](data.dropFirst())
        if bytes.count < 132 { bytes += [UInt8](repeating: 0, count: 132 - bytes.count) }
        let size = bytes.count
        bytes.replaceSubrange(0..<4, with: [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        bytes.replaceSubrange(36..<40, with: Array("acsp".utf8))
        let layouts: [(String, ColorPixelLayout)] = [("RGB ", .rgba8), ("RGB ", .rgba16), ("GRAY", .rgba8), ("CMYK", .cmyk8), ("CMYK", .cmyk8Inverted)]
        let (space, layout) = layouts[Int(selector) % layouts.count]
        if selector & 0x80 == 0 { bytes.replaceSubrange(16..<20, with: Array(space.utf8)) }
        guard let profile = ColorProfile(iccData: Data(bytes)) else { return }
        _ = profile.description
        guard case .success(let transform) = ColorTransform.make(profile: profile, layout: layout, maxProfileSize: 4 << 20, maxMemory: 16 << 20)
        else { return }
        let (width, height) = (7, 5)
        if layout == .rgba16 {
            let samples = (0..<(width * height * 4)).map { UInt16(truncatingIfNeeded: $0 &* 4099) }
            var output = [UInt8](repeating: 0, count: width * height * 4)
            samples.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { transform.apply(rgba16: input, width: width, height: height, into: $0) }
            }
        } else {
            var pixels = (0..<(width * height * 4)).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            transform.apply(&pixels, width: width, height: height)
        }
    }
}
