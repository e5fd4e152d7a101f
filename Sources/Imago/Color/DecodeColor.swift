import Foundation
import Logging
import Metrics

/// One decode's colour, decided once for every decoder: the profile the file stated, and what
/// happens to the pixels. By default they are converted to sRGB (``DecodingOptions/ColorProfileHandling``);
/// CMYK always is, through its own profile or the default CMYK one; a 16-bit source is converted
/// before it becomes 8-bit; a profile that is refused (too large, unreadable, for other pixels)
/// is ignored with a debug log and the metric `imago.color.profiles_ignored`, the pixels taken as sRGB.
struct DecodeColor {
    /// What the file stated, for ``ImageMetadata/sourceColorProfile``.
    let stated: ColorProfile?
    /// The profile the delivered pixels are in (nil: sRGB), for ``ImageMetadata/colorProfile``.
    let kept: ColorProfile?
    /// What the decoder applies to its pixels, if anything.
    private let transform: ColorTransform?
    /// CMYK without a usable profile anywhere: the naive conversion.
    private let isUnmanagedCMYK: Bool
    private let isCMYKInverted: Bool

    private static let logger = Logger(label: "imago.color")

    /// Decides for pixels of `kind` (`.rgb`, `.gray` or `.cmyk`) that the decoder reads with
    /// `bitsPerSample` (8 or 16; CMYK is 8), described by the file as `stated`.
    init(stated: ColorProfile?, pixels kind: ColorProfile.Kind, bitsPerSample: Int = 8, cmykInverted: Bool = false, options: DecodingOptions) {
        self.stated = stated
        isCMYKInverted = cmykInverted
        let isCMYK = kind == .cmyk
        let layout: ColorPixelLayout = isCMYK ? (cmykInverted ? .cmyk8Inverted : .cmyk8) : bitsPerSample > 8 ? .rgba16 : .rgba8
        var usable: (profile: ColorProfile, transform: ColorTransform)?
        if let stated {
            switch Self.checked(stated, pixels: kind, layout: layout, options: options) {
            case .success(let transform): usable = (stated, transform)
            case .failure(let refusal): Self.ignored(stated, refusal)
            }
        }
        if isCMYK, usable == nil, let fallback = ColorProfile.defaultCMYK,
            case .success(let transform) = ColorTransforms.shared.transform(for: fallback, layout: layout, options: options)
        {
            usable = (fallback, transform)
        }
        isUnmanagedCMYK = isCMYK && usable == nil
        guard let usable else {
            (kept, transform) = (nil, nil)
            return
        }
        let keeps = options.colorProfileHandling == .keep || (options.defersColorConversion && layout == .rgba8)
        if keeps, !isCMYK {
            (kept, transform) = (usable.profile, nil)
        } else {
            (kept, transform) = (nil, usable.transform.isIdentity && layout == .rgba8 ? nil : usable.transform)
        }
    }

    /// Whether the decoder should read 16 bits a sample (when it can), for a conversion to make
    /// before the pixels become 8-bit.
    var wantsSixteenBits: Bool { transform?.layout == .rgba16 && transform?.isIdentity == false }

    /// Converts the decoder's RGBA8 (or CMYK8) pixels as decided.
    func apply(_ pixels: inout [UInt8], width: Int, height: Int) {
        if let transform, transform.layout != .rgba16 {
            transform.apply(&pixels, width: width, height: height)
        } else if isUnmanagedCMYK {
            Self.convertUnmanagedCMYK(&pixels, inverted: isCMYKInverted)
        }
    }

    /// Converts the decoder's RGBA16 pixels (machine byte order) into RGBA8 as decided.
    func apply(rgba16 pixels: UnsafeBufferPointer<UInt16>, width: Int, height: Int) throws(ImagoError) -> [UInt8] {
        try makePixelBuffer(count: width * height * 4) { output in
            if let transform, transform.layout == .rgba16 {
                transform.apply(rgba16: pixels, width: width, height: height, into: output)
            } else {
                for index in 0..<output.count { output[index] = ColorTransform.narrow(pixels[index]) }
            }
            return .success(())
        }
    }

    /// Records the decision in the image's metadata.
    func record(in metadata: inout ImageMetadata) {
        metadata.sourceColorProfile = stated
        metadata.colorProfile = kept
    }

    /// A transform for `profile` on pixels of `kind`, or why it may not be used.
    private static func checked(
        _ profile: ColorProfile, pixels kind: ColorProfile.Kind, layout: ColorPixelLayout, options: DecodingOptions
    ) -> Result<ColorTransform, ColorTransform.Refusal> {
        // A gray image may carry an RGB profile (its pixels are R = G = B); nothing else crosses.
        let fits = profile.kind == kind || (kind == .gray && profile.kind == .rgb)
        guard fits else { return .failure(.mismatched) }
        return ColorTransforms.shared.transform(for: profile, layout: layout, options: options)
    }

    static func ignored(_ profile: ColorProfile, _ refusal: ColorTransform.Refusal) {
        Counter(label: "imago.color.profiles_ignored", dimensions: [("reason", refusal.rawValue)]).increment()
        logger.debug("colour profile ignored", metadata: ["reason": "\(refusal.rawValue)", "bytes": "\(profile.data.count)", "kind": "\(profile.kind)"])
    }

    /// CMYK to RGB as ink over white, for a CMYK image when no CMYK profile can be had.
    private static func convertUnmanagedCMYK(_ pixels: inout [UInt8], inverted: Bool) {
        for offset in stride(from: 0, to: pixels.count, by: 4) {
            var c = Int(pixels[offset]), m = Int(pixels[offset + 1]), y = Int(pixels[offset + 2]), k = Int(pixels[offset + 3])
            if !inverted { (c, m, y, k) = (255 - c, 255 - m, 255 - y, 255 - k) }
            pixels[offset] = UInt8((c * k + 127) / 255)
            pixels[offset + 1] = UInt8((m * k + 127) / 255)
            pixels[offset + 2] = UInt8((y * k + 127) / 255)
            pixels[offset + 3] = 255
        }
    }
}

extension Image {
    /// This image with its pixels in sRGB: converted from ``ImageMetadata/colorProfile`` when it
    /// has one (a decode that kept the file's profile), unchanged otherwise. A profile Little CMS
    /// refuses is dropped and the pixels taken as sRGB.
    public func convertedToSRGB(options: DecodingOptions = DecodingOptions()) -> Image {
        guard let profile = metadata.colorProfile else { return self }
        var image = self
        image.metadata.colorProfile = nil
        switch ColorTransforms.shared.transform(for: profile, layout: .rgba8, options: options) {
        case .success(let transform):
            guard !transform.isIdentity else { return image }
            for index in image.frames.indices { transform.apply(&image.frames[index].pixels, width: width, height: height) }
        case .failure(let refusal):
            DecodeColor.ignored(profile, refusal)
        }
        return image
    }
}
