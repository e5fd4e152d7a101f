import CWebP
import Foundation

/// Encodes WebP with libwebp, lossy at a quality or lossless, alpha kept. Lossless is exact: the
/// colour under fully transparent pixels is kept too (`WebPConfig.exact`). An animated image keeps
/// every frame, its duration and the loop count (`WebPAnimEncoder`). A kept colour profile goes in `ICCP`, EXIF and XMP
/// in their chunks.
public struct WebPEncoder: ImageEncoding {
    public let format = ImageFormat.webp
    /// Quality 0…100 for lossy encoding.
    public var quality: Float
    /// Encode losslessly (quality is then ignored).
    public var lossless: Bool

    /// Lossless, but colours nudged where that saves bytes, as far as ``quality`` allows (libwebp's
    /// `near_lossless`; imgproxy's `IMGPROXY_WEBP_COMPRESSION=near_lossless`).
    public var nearLossless: Bool
    /// Sharper RGB→YUV conversion (libwebp's `use_sharp_yuv`; imgproxy's `IMGPROXY_WEBP_SMART_SUBSAMPLE`):
    /// fine coloured edges keep their colour, at some time and size.
    public var smartSubsample: Bool
    /// libwebp's method, 0…6: slower, smaller (imgproxy's `IMGPROXY_WEBP_EFFORT`, default 4).
    public var effort: Int
    /// What the picture is, for libwebp's tuning (imgproxy's `IMGPROXY_WEBP_PRESET`).
    public var preset: Preset

    /// libwebp's presets (`WebPPreset`).
    public enum Preset: String, Sendable, Hashable, CaseIterable, Codable {
        /// General purpose.
        case `default`
        /// A digital picture, like a portrait or an inside shot.
        case picture
        /// An outdoor photograph with natural light.
        case photo
        /// A drawing with high-contrast details.
        case drawing
        /// A small colourful image.
        case icon
        /// Text-like.
        case text

        var libwebp: WebPPreset {
            switch self {
            case .default: WEBP_PRESET_DEFAULT
            case .picture: WEBP_PRESET_PICTURE
            case .photo: WEBP_PRESET_PHOTO
            case .drawing: WEBP_PRESET_DRAWING
            case .icon: WEBP_PRESET_ICON
            case .text: WEBP_PRESET_TEXT
            }
        }
    }

    /// Makes a WebP encoder.
    public init(
        quality: Float = 80, lossless: Bool = false, nearLossless: Bool = false, smartSubsample: Bool = false, effort: Int = 4,
        preset: Preset = .default
    ) {
        self.quality = min(max(quality, 0), 100)
        self.lossless = lossless
        self.nearLossless = nearLossless
        self.smartSubsample = smartSubsample
        self.effort = min(max(effort, 0), 6)
        self.preset = preset
    }

    /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: libwebp's YUV planes, its analysis and the output (each frame of an animation): 5.1 bytes a pixel on a 53 MP photo.
    public func workingBytes(for image: Image) -> Int { image.width * image.height * (6 + image.frames.count) }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        var config = WebPConfig()
        guard WebPConfigPreset(&config, preset.libwebp, quality) != 0 else { throw encodingError(format, "libwebp version mismatch") }
        config.method = Int32(effort)
        config.use_sharp_yuv = smartSubsample ? 1 : 0
        if lossless {
            config.lossless = 1
            config.exact = 1
        } else if nearLossless {
            // libvips' mapping: lossless coding with near_lossless at the quality.
            config.lossless = 1
            config.near_lossless = Int32(quality.rounded())
        }
        let encoded = image.isAnimated ? try encodeAnimation(image, config: config) : try encodeStill(image, config: config)
        let chunks = [("ICCP", image.metadata.colorProfile?.data), ("EXIF", image.metadata.exif), ("XMP ", image.metadata.xmp)]
            .compactMap { name, data in data.map { (name, $0) } }
        return chunks.isEmpty ? encoded : try Self.embedding(chunks, in: encoded)
    }

    /// `webp` with `chunks` (`ICCP`, `EXIF`, `XMP `) added; libwebpmux writes the VP8X header
    /// they need.
    static func embedding(_ chunks: [(String, Data)], in webp: Data) throws(ImagoError) -> Data {
        let result = webp.withUnsafeBytes { bytes -> Data? in
            var input = WebPData(bytes: bytes.bindMemory(to: UInt8.self).baseAddress, size: bytes.count)
            guard let mux = WebPMuxCreate(&input, 1) else { return nil }
            defer { WebPMuxDelete(mux) }
            for (name, data) in chunks {
                let set = data.withUnsafeBytes { payload -> Bool in
                    var chunk = WebPData(bytes: payload.bindMemory(to: UInt8.self).baseAddress, size: payload.count)
                    return WebPMuxSetChunk(mux, name, &chunk, 1) == WEBP_MUX_OK
                }
                guard set else { return nil }
            }
            var output = WebPData()
            WebPDataInit(&output)
            defer { WebPDataClear(&output) }
            guard WebPMuxAssemble(mux, &output) == WEBP_MUX_OK, let assembled = output.bytes else { return nil }
            return Data(bytes: assembled, count: output.size)
        }
        guard let result else { throw encodingError(.webp, "cannot embed the colour profile or metadata") }
        return result
    }

    private func encodeStill(_ image: Image, config: WebPConfig) throws(ImagoError) -> Data {
        var config = config

        // Lossy coding is YUV: the pixels go straight to it (ARGB first, then YUV, took a third
        // again of a 512 px encode); an opaque image without an alpha plane to check.
        let yuv = config.lossless == 0 && config.use_sharp_yuv == 0  // sharp YUV is made from ARGB
        var picture = try makePicture(image.pixels, width: image.width, height: image.height, yuv: yuv, opaque: yuv && !image.metadata.hasAlpha)
        defer { WebPPictureFree(&picture) }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0, let memory = writer.mem else { throw encodingError(format, "libwebp error \(picture.error_code.rawValue)") }
        return Data(bytes: memory, count: writer.size)
    }

    /// Every frame at its start time in milliseconds; the end time of the last one closes it.
    private func encodeAnimation(_ image: Image, config: WebPConfig) throws(ImagoError) -> Data {
        var config = config
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0 else { throw encodingError(format, "libwebp version mismatch") }
        options.anim_params.loop_count = Int32(clamping: image.loopCount)
        guard let encoder = WebPAnimEncoderNew(Int32(image.width), Int32(image.height), &options) else {
            throw encodingError(format, "cannot make an animation encoder for \(image.width)×\(image.height)")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var timestamp = 0
        for frame in image.frames {
            var picture = try makePicture(frame.pixels, width: image.width, height: image.height)
            let added = WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config)
            WebPPictureFree(&picture)
            guard added != 0 else { throw encodingError(format, String(cString: WebPAnimEncoderGetError(encoder))) }
            let (seconds, attoseconds) = frame.duration.components
            timestamp += Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
        }
        var output = WebPData()
        WebPDataInit(&output)
        defer { WebPDataClear(&output) }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0,
            WebPAnimEncoderAssemble(encoder, &output) != 0, let bytes = output.bytes
        else {
            throw encodingError(format, String(cString: WebPAnimEncoderGetError(encoder)))
        }
        return Data(bytes: bytes, count: output.size)
    }

    /// A picture of `pixels` (RGBA), as ARGB (lossless, animation frames) or, with `yuv`, converted
    /// to YUV 4:2:0 as lossy coding wants it; `opaque` leaves the alpha channel unread.
    private func makePicture(_ pixels: [UInt8], width: Int, height: Int, yuv: Bool = false, opaque: Bool = false) throws(ImagoError) -> WebPPicture {
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw encodingError(format, "libwebp version mismatch") }
        picture.use_argb = yuv ? 0 : 1
        picture.width = Int32(width)
        picture.height = Int32(height)
        let imported = pixels.withUnsafeBufferPointer { pixels in
            opaque
                ? WebPPictureImportRGBX(&picture, pixels.baseAddress, Int32(width * 4)) : WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(width * 4))
        }
        guard imported != 0 else {
            WebPPictureFree(&picture)
            throw encodingError(format, "cannot import \(width)×\(height) pixels")
        }
        return picture
    }
}
