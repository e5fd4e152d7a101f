import Foundation

/// An HDR gain map: a small picture that says how much brighter each part of the SDR base image is
/// in its HDR rendition (Ultra HDR JPEG, ISO 21496-1). It travels with the ``Image`` it belongs to,
/// at its own scale: it always covers the whole base, stretched to the base's size.
///
/// Decoders keep it when asked (``DecodingOptions/gainMapHandling``); every geometric processor
/// moves it with the base (``GainMap/Geometry``), tone processors keep it as it is, and the JPEG
/// encoder writes it back as an Ultra HDR JPEG. See ``hdrRendition(of:headroom:)`` for the HDR picture.
public struct GainMap: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// RGBA8, alpha 255, `width × height × 4` bytes; for a one-channel map red, green and blue are equal.
    public let pixels: [UInt8]
    /// 1 for a grey gain map (one gain for all three channels), 3 for one gain per channel.
    public var channelCount: Int
    /// How the pixel values become gains.
    public var metadata: GainMapMetadata

    /// Makes a gain map; `pixels` must hold `width × height × 4` bytes.
    public init(width: Int, height: Int, pixels: [UInt8], channelCount: Int, metadata: GainMapMetadata) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 4, "pixels must match the size")
        self.width = width
        self.height = height
        self.pixels = pixels
        self.channelCount = channelCount == 1 ? 1 : 3
        self.metadata = metadata
    }

    /// Bytes its pixels hold, which a memory cache counts with the base's.
    public var cost: Int { pixels.count }

    /// The pixels as an opaque still ``Image``, for the processors that move them.
    var image: Image {
        Image(
            width: width, height: height, frames: [Image.Frame(pixels: pixels)],
            metadata: ImageMetadata(format: .jpeg, originalWidth: width, originalHeight: height, hasAlpha: false))
    }

    /// The same metadata over new pixels.
    func replacing(_ image: Image) -> GainMap {
        GainMap(width: image.width, height: image.height, pixels: image.pixels, channelCount: channelCount, metadata: metadata)
    }

    /// The 8-bit value whose gain is 1 (no boost) in each channel: what a region the source did not
    /// cover (an extended canvas, a border) gets.
    public var noBoostValue: (UInt8, UInt8, UInt8) {
        func value(_ channel: Int) -> UInt8 {
            let low = metadata.gainMapMin[channel], high = metadata.gainMapMax[channel]
            guard high > low else { return 0 }
            let linear = min(max(-low / (high - low), 0), 1)
            return UInt8((pow(linear, metadata.gamma[channel]) * 255).rounded())
        }
        return (value(0), value(1), value(2))
    }
}

/// The numbers that turn gain-map values into gains, as ISO 21496-1 and Adobe's `hdrgm` XMP state
/// them. Logarithms are base 2; each per-channel array has three entries (equal for a grey map).
public struct GainMapMetadata: Sendable, Hashable {
    /// log2 of the smallest gain (the value 0 means this), per channel.
    public var gainMapMin: [Double]
    /// log2 of the largest gain (the value 1 means this), per channel.
    public var gainMapMax: [Double]
    /// The gamma the values were encoded with, per channel.
    public var gamma: [Double]
    /// Added to the base's linear values before the gain (`OffsetSDR`), per channel.
    public var baseOffset: [Double]
    /// Taken from the result after the gain (`OffsetHDR`), per channel.
    public var alternateOffset: [Double]
    /// log2 of the display headroom at which the gain map starts to apply (`HDRCapacityMin`).
    public var baseHeadroom: Double
    /// log2 of the display headroom at which it applies fully (`HDRCapacityMax`).
    public var alternateHeadroom: Double
    /// Whether the gains apply in the base image's colour space (else the alternate's).
    public var usesBaseColorSpace: Bool

    /// Makes metadata; a single value for a channel array stands for all three.
    public init(
        gainMapMin: [Double], gainMapMax: [Double], gamma: [Double] = [1], baseOffset: [Double] = [1.0 / 64], alternateOffset: [Double] = [1.0 / 64],
        baseHeadroom: Double = 0, alternateHeadroom: Double, usesBaseColorSpace: Bool = true
    ) {
        func three(_ values: [Double]) -> [Double] { values.count >= 3 ? Array(values.prefix(3)) : Array(repeating: values.first ?? 0, count: 3) }
        self.gainMapMin = three(gainMapMin)
        self.gainMapMax = three(gainMapMax)
        self.gamma = three(gamma)
        self.baseOffset = three(baseOffset)
        self.alternateOffset = three(alternateOffset)
        self.baseHeadroom = baseHeadroom
        self.alternateHeadroom = alternateHeadroom
        self.usesBaseColorSpace = usesBaseColorSpace
    }

    /// Whether every channel has the same numbers (a grey map's metadata).
    public var isSingleChannel: Bool {
        [gainMapMin, gainMapMax, gamma, baseOffset, alternateOffset].allSatisfy { $0[0] == $0[1] && $0[0] == $0[2] }
    }

    /// The largest boost the map encodes, as a linear factor: 2^max(gainMapMax).
    public var maxBoost: Double { exp2(gainMapMax.max() ?? 0) }

    /// The display headroom (a linear factor over SDR white) at which the map applies fully.
    public var hdrCapacityMax: Double { exp2(alternateHeadroom) }

    /// Whether the numbers can be used: finite, within ±64 stops, gamma positive, each channel's
    /// maximum at least its minimum, the alternate headroom above the base's. A file's metadata
    /// that is not is ignored (the picture is shown as its SDR base).
    var isUsable: Bool {
        let all = gainMapMin + gainMapMax + gamma + baseOffset + alternateOffset + [baseHeadroom, alternateHeadroom]
        guard all.allSatisfy({ $0.isFinite && abs($0) <= 64 }) else { return false }
        guard gamma.allSatisfy({ $0 > 0 }), alternateHeadroom > baseHeadroom, baseHeadroom >= 0 else { return false }
        return (0..<3).allSatisfy { gainMapMax[$0] >= gainMapMin[$0] }
    }
}

/// Whether a decode keeps a file's HDR gain map.
public enum GainMapHandling: Sendable, Hashable {
    /// The gain map is not decoded (the default): the image is its SDR base.
    case drop
    /// The gain map is decoded at the base's reduced scale and kept in ``Image/gainMap``.
    case keep
}
