#if JXL
    import CJXL
    import Foundation

    /// Encodes JPEG XL with libjxl: one frame of 8-bit RGB or RGBA, lossy at a butteraugli distance
    /// from the quality as libvips maps it (which imgproxy uses: q ≥ 30 gives 0.1 + (100 − q) × 0.09),
    /// or lossless; `effort` 1…9 (imgproxy's `IMGPROXY_JXL_EFFORT`, 4 by default). A kept colour
    /// profile is written as the image's ICC profile, else the pixels are tagged sRGB. EXIF and
    /// XMP are not written. An animation gives its first frame. The output is bounded: more bytes
    /// than twice the pixels' is refused.
    public struct JXLEncoder: ImageEncoding {
        public let format = ImageFormat.jxl
        /// Quality 1…100.
        public var quality: Int
        /// libjxl's effort, 1 (fastest) … 9 (smallest).
        public var effort: Int
        /// Mathematically lossless instead of lossy.
        public var lossless: Bool

        /// Makes a JPEG XL encoder; `quality` is clamped to 1…100 and `effort` to 1…9.
        public init(quality: Int = 85, effort: Int = 4, lossless: Bool = false) {
            self.quality = min(max(quality, 1), 100)
            self.effort = min(max(effort, 1), 9)
            self.lossless = lossless
        }

        /// The butteraugli distance for a quality, as libvips' `jxlsave` (after cjxl) maps it.
        public static func distance(quality: Int) -> Float {
            let q = Float(quality)
            return q >= 30 ? 0.1 + (100 - q) * 0.09 : 53.0 / 3000.0 * q * q - 23.0 / 20.0 * q + 25.0
        }

        /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: libjxl's float planes and buffers: 40 bytes a pixel on a 53 MP photo.
        public func workingBytes(for image: Image) -> Int { image.width * image.height * 48 }

        public func encode(_ image: Image) throws(ImagoError) -> Data {
            try CodecLibrary.jxl.load(writing: true)
            let rgba = try encodableFrame(image, format, maxWidth: 1 << 30, maxHeight: 1 << 30)
            let (width, height, alpha) = (image.width, image.height, image.metadata.hasAlpha)
            let channels = alpha ? 4 : 3
            var pixels = rgba
            if !alpha {
                pixels = [UInt8](repeating: 0, count: width * height * 3)
                for index in 0..<(width * height) {
                    pixels[index * 3] = rgba[index * 4]
                    pixels[index * 3 + 1] = rgba[index * 4 + 1]
                    pixels[index * 3 + 2] = rgba[index * 4 + 2]
                }
            }
            guard let encoder = JxlEncoderCreate(nil) else { throw encodingError(format, "libjxl could not start") }
            defer { JxlEncoderDestroy(encoder) }
            var info = JxlBasicInfo()
            JxlEncoderInitBasicInfo(&info)
            info.xsize = UInt32(width)
            info.ysize = UInt32(height)
            info.bits_per_sample = 8
            info.num_color_channels = 3
            info.alpha_bits = alpha ? 8 : 0
            info.num_extra_channels = alpha ? 1 : 0
            info.uses_original_profile = lossless ? 1 : 0
            guard JxlEncoderSetBasicInfo(encoder, &info) == JXL_ENC_SUCCESS else { throw encodingError(format, "libjxl refused the basic info") }
            if let profile = image.metadata.colorProfile?.data {
                let set = profile.withUnsafeBytes { JxlEncoderSetICCProfile(encoder, $0.bindMemory(to: UInt8.self).baseAddress, profile.count) }
                guard set == JXL_ENC_SUCCESS else { throw encodingError(format, "libjxl refused the colour profile") }
            } else {
                var color = JxlColorEncoding()
                JxlColorEncodingSetToSRGB(&color, 0)
                guard JxlEncoderSetColorEncoding(encoder, &color) == JXL_ENC_SUCCESS else { throw encodingError(format, "libjxl refused sRGB") }
            }
            guard let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else { throw encodingError(format, "libjxl could not make frame settings") }
            let configured =
                JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(effort)) == JXL_ENC_SUCCESS
                && (lossless
                    ? JxlEncoderSetFrameLossless(settings, 1) == JXL_ENC_SUCCESS
                    : JxlEncoderSetFrameDistance(settings, Self.distance(quality: quality)) == JXL_ENC_SUCCESS)
            guard configured else { throw encodingError(format, "libjxl refused the settings") }
            var pixelFormat = JxlPixelFormat(num_channels: UInt32(channels), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
            let added = pixels.withUnsafeBytes { JxlEncoderAddImageFrame(settings, &pixelFormat, $0.baseAddress, $0.count) }
            guard added == JXL_ENC_SUCCESS else { throw encodingError(format, "libjxl refused the pixels") }
            JxlEncoderCloseInput(encoder)
            return try output(of: encoder, limit: width * height * channels * 2 + (1 << 16))
        }

        /// libjxl's output, in chunks of 64 KiB, refused past `limit` bytes.
        private func output(of encoder: OpaquePointer, limit: Int) throws(ImagoError) -> Data {
            var out = [UInt8](repeating: 0, count: min(limit, 1 << 16))
            var written = 0
            while true {
                let status = out.withUnsafeMutableBytes { buffer -> JxlEncoderStatus in
                    var next: UnsafeMutablePointer<UInt8>? = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + written
                    var available = buffer.count - written
                    let status = JxlEncoderProcessOutput(encoder, &next, &available)
                    written = buffer.count - available
                    return status
                }
                if status == JXL_ENC_SUCCESS { return Data(out.prefix(written)) }
                guard status == JXL_ENC_NEED_MORE_OUTPUT, out.count < limit else { throw encodingError(format, "libjxl could not encode the image") }
                out += [UInt8](repeating: 0, count: min(out.count, limit - out.count))
            }
        }
    }
#endif
