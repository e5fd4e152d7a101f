#if HEIF
    import CHEIF
    import Foundation

    /// Encodes HEIC with libheif and its x265 HEVC encoder (what imgproxy's `heic` output uses
    /// through libvips): one 8-bit RGB or RGBA image at a lossy quality 1…100, or lossless; a kept
    /// colour profile is written as the image's ICC profile. EXIF and XMP are not written. An
    /// animation gives its first frame. Sides up to 16,384 (x265's limit for a single picture).
    public struct HEIFEncoder: ImageEncoding {
        public let format = ImageFormat.heif
        /// Quality 1…100.
        public var quality: Int
        /// Lossless instead of lossy.
        public var lossless: Bool
        /// The largest side written (x265's for one picture; the format table's ``ImageFormatInfo/maxSide``).
        public static var maxSide: Int { ImageFormat.heif.info?.maxSide ?? 16_384 }

        /// Makes a HEIC encoder; `quality` is clamped to 1…100.
        public init(quality: Int = 85, lossless: Bool = false) {
            self.quality = min(max(quality, 1), 100)
            self.lossless = lossless
        }

        /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: libheif's YUV image and x265's lookahead and reference frames: 15.7 bytes a pixel on a 53 MP photo.
        public func workingBytes(for image: Image) -> Int { image.width * image.height * 20 }

        public func encode(_ image: Image) throws(ImagoError) -> Data {
            try CodecLibrary.heif.load(writing: true)
            let rgba = try encodableFrame(image, format, maxWidth: Self.maxSide, maxHeight: Self.maxSide)
            let (width, height, alpha) = (image.width, image.height, image.metadata.hasAlpha)
            guard let context = heif_context_alloc() else { throw encodingError(format, "libheif could not start") }
            defer { heif_context_free(context) }
            var encoder: OpaquePointer?
            try check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder))
            guard let encoder else { throw encodingError(format, "libheif has no HEVC encoder") }
            defer { heif_encoder_release(encoder) }
            try check(lossless ? heif_encoder_set_lossless(encoder, 1) : heif_encoder_set_lossy_quality(encoder, Int32(quality)))
            // As libvips' HEIF saver (imgproxy's) does by default: full chroma from quality 90 up,
            // where 4:2:0 alone kept colour edges from ever scoring high (q95 scored 53 in
            // SSIMULACRA2 on a chart), so auto quality could not reach its targets.
            if lossless || quality >= 90 { try check(heif_encoder_set_parameter_string(encoder, "chroma", "444")) }
            var picture: OpaquePointer?
            try check(
                heif_image_create(
                    Int32(width), Int32(height), heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &picture))
            guard let picture else { throw encodingError(format, "libheif could not make an image") }
            defer { heif_image_release(picture) }
            try check(heif_image_add_plane(picture, heif_channel_interleaved, Int32(width), Int32(height), 8))
            var stride: Int32 = 0
            let channels = alpha ? 4 : 3
            guard let plane = heif_image_get_plane(picture, heif_channel_interleaved, &stride), Int(stride) >= width * channels else {
                throw encodingError(format, "libheif gave no plane")
            }
            for y in 0..<height {
                let row = plane + y * Int(stride)
                for x in 0..<width {
                    let from = (y * width + x) * 4, to = x * channels
                    for channel in 0..<channels { row[to + channel] = rgba[from + channel] }
                }
            }
            if let profile = image.metadata.colorProfile?.data {
                try check(profile.withUnsafeBytes { heif_image_set_raw_color_profile(picture, "prof", $0.baseAddress, $0.count) })
            }
            try check(heif_context_encode_image(context, picture, encoder, nil, nil))
            let sink = HEIFSink()
            var writer = heif_writer(writer_api_version: 1) { _, data, size, userdata in
                let sink = Unmanaged<HEIFSink>.fromOpaque(userdata!).takeUnretainedValue()
                if let data { sink.data.append(data.assumingMemoryBound(to: UInt8.self), count: size) }
                return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: nil)
            }
            try check(heif_context_write(context, &writer, Unmanaged.passUnretained(sink).toOpaque()))
            return sink.data
        }

        /// Throws libheif's message when `error` is not success.
        private func check(_ error: heif_error) throws(ImagoError) {
            guard error.code != heif_error_Ok else { return }
            throw encodingError(format, error.message.map { String(cString: $0) } ?? "libheif failed")
        }
    }

    /// Where libheif's writer puts the file.
    private final class HEIFSink {
        var data = Data()
    }
#endif
