import CLCMS
import CLCMSSupport
import Foundation

/// A colour space as an ICC profile: the bytes a file embedded (or that Imago built from what the
/// file stated: PNG `gAMA`/`cHRM`, AVIF/HEIC CICP), what kind of pixels it describes, and its
/// description.
///
/// A profile is untrusted input like any byte of an image: Imago reads its header itself and
/// hands it to Little CMS only within ``DecodingOptions/maxColorProfileSize`` and
/// ``DecodingOptions/maxColorTransformMemory``.
public struct ColorProfile: Sendable, Hashable, CustomStringConvertible {
    /// The pixels a profile describes.
    public enum Kind: String, Sendable, Hashable {
        /// Red, green and blue.
        case rgb
        /// One gray channel.
        case gray
        /// Cyan, magenta, yellow and black ink.
        case cmyk
        /// Anything else (Lab, YCbCr, n-colour): Imago converts none of these.
        case other
    }

    /// The ICC profile's bytes.
    public let data: Data
    /// What pixels the profile describes, from its header.
    public let kind: Kind

    /// A profile from ICC bytes, or nil when they do not start with a plausible ICC header: at
    /// least the 128-byte header and a tag count, a declared size no larger than the bytes and
    /// the `acsp` signature. Whether Little CMS can use it is decided when a transform is made.
    public init?(iccData: Data) {
        guard iccData.count >= 132 else { return nil }
        let header = [UInt8](iccData.prefix(40))
        let declared = header.integer(4, at: 0, .bigEndian) ?? 0
        guard declared >= 132, declared <= iccData.count, header[36..<40].elementsEqual(Array("acsp".utf8)) else { return nil }
        switch String(decoding: header[16..<20], as: UTF8.self) {
        case "RGB ": kind = .rgb
        case "GRAY": kind = .gray
        case "CMYK": kind = .cmyk
        default: kind = .other
        }
        data = iccData.count == declared ? iccData : iccData.prefix(declared)
    }

    /// The profile's description (its `desc` tag, as Little CMS reads it), or an empty string
    /// when it has none or Little CMS cannot read the profile.
    public var description: String {
        guard let context = imago_lcms_context_create(16 << 20) else { return "" }
        defer { imago_lcms_context_delete(context) }
        let profile = data.withUnsafeBytes { cmsOpenProfileFromMemTHR(context, $0.baseAddress, cmsUInt32Number(clamping: $0.count)) }
        guard let profile else { return "" }
        defer { cmsCloseProfile(profile) }
        var buffer = [CChar](repeating: 0, count: 512)
        let count = cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", &buffer, cmsUInt32Number(buffer.count))
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Two profiles are the same when their bytes are.
    public static func == (lhs: ColorProfile, rhs: ColorProfile) -> Bool { lhs.data == rhs.data }

    /// Hashes the profile's bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(data.count)
        data.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
