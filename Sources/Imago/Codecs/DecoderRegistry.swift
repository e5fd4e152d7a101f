import Foundation

/// The decoders a pipeline can use: the first, most recently registered, that recognises the bytes
/// decodes them (React Native's `RCTImageDataDecoder` registry).
public final class DecoderRegistry: Sendable {
    private let decoders: Locked<[any ImageDecoding]>

    /// Makes a registry; later decoders are asked first.
    public init(_ decoders: [any ImageDecoding] = []) {
        self.decoders = Locked(decoders)
    }

    /// The built-in decoders of the formats of `families`: still images alone by default; add
    /// ``ImageFormatInfo/Family/video`` to read videos' frames through FFmpeg.
    public static func standard(families: Set<ImageFormatInfo.Family> = [.still]) -> DecoderRegistry {
        // Each row of the format table's decoder, registered last first: asked in the table's order.
        DecoderRegistry(ImageFormat.table.reversed().filter { families.contains($0.family) }.compactMap { $0.makeDecoder?() })
    }

    /// Adds a decoder; it is asked before every decoder registered earlier.
    public func register(_ decoder: any ImageDecoding) {
        decoders.withLock { $0.append(decoder) }
    }

    /// The decoder for `data`, or nil when none recognises it.
    public func decoder(for data: Data) -> (any ImageDecoding)? {
        decoders.withLock { $0.reversed().first { $0.canDecode(data) } }
    }

    /// Whether the decoder for `data`, a body's first bytes, reads the rest by ranges
    /// (``RangedSource``) rather than needing it whole: videos' decoders.
    func readsRanges(_ data: Data) -> Bool {
        decoder(for: data) is VideoDecoder
    }

    /// What decoding `data` will hold, capped at ``DecodingOptions/maxDecodedBytes`` (a decode
    /// that would hold more is refused by its decoder); 0 when no decoder recognises the bytes,
    /// the cap when the decoder cannot tell.
    public func estimate(_ data: Data, options: DecodingOptions = DecodingOptions()) -> DecodeEstimate {
        guard let decoder = decoder(for: data) else { return DecodeEstimate(width: 0, height: 0, bytes: 0) }
        var estimate = decoder.estimate(data, options: options) ?? DecodeEstimate(width: 0, height: 0, bytes: options.maxDecodedBytes)
        estimate.bytes = min(estimate.bytes, options.maxDecodedBytes)
        estimate.format = decoder.format
        return estimate
    }

    /// Decodes `data` with the decoder that recognises it.
    public func decode(_ data: Data, options: DecodingOptions = DecodingOptions()) throws(ImagoError) -> Image {
        guard let decoder = decoder(for: data) else {
            let prefix = data.prefix(12).map { String(format: "%02x", $0) }.joined(separator: " ")
            throw ImagoError(.unsupportedFormat(firstBytes: prefix.isEmpty ? "none" : prefix), url: nil, stage: .decoding)
        }
        return try decoder.decode(data, options: options)
    }
}
