import Foundation

/// Makes previews of an image while its bytes arrive, through the decoder that reads it (see
/// ``ImageDecoding/preview(of:after:options:)``): a progressive JPEG after each complete scan; a
/// baseline JPEG, a non-interlaced PNG and a still WebP from the rows decoded so far; a decoder
/// you register, if it implements previews. Each call gets all the bytes so far and answers nil
/// when there is nothing new worth showing.
public struct PreviewDecoder: Sendable {
    private let decoders: DecoderRegistry
    private let options: DecodingOptions
    private var decoder: (any ImageDecoding)?
    private var shown = 0

    /// Makes a preview decoder that picks among `decoders` and respects `options`' limits.
    public init(decoders: DecoderRegistry = .standard(), options: DecodingOptions = DecodingOptions()) {
        self.decoders = decoders
        self.options = options
    }

    /// A preview of `data` (the bytes received so far), or nil.
    public mutating func preview(of data: Data) -> Image? {
        // Until enough bytes arrived to tell the format, no decoder is chosen.
        if decoder == nil { decoder = decoders.decoder(for: data) }
        guard let partial = decoder?.preview(of: data, after: shown, options: options) else { return nil }
        shown = partial.reached
        return partial.image
    }
}
