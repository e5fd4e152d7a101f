#if AVIF
    import CAVIF
    import Foundation

    /// Encodes AVIF with libavif and libaom: 8-bit 4:2:0 (4:4:4 at quality 100), alpha kept
    /// exactly, a kept colour profile, EXIF and XMP embedded, an animated image as a sequence with its durations (libavif 0.11 writes no loop
    /// count: players loop sequences forever).
    public struct AVIFEncoder: ImageEncoding {
        public let format = ImageFormat.avif
        /// Quality 0…100, mapped to AV1's quantizer 63…0 as libavif 1.0's `quality` does.
        public var quality: Int
        /// libavif's speed, 0 (slowest, smallest) … 10 (fastest).
        public var speed: Int
        /// Encoder threads; by default every core.
        public var threads: Int

        /// Makes an AVIF encoder; `quality` is clamped to 0…100 and `speed` to 0…10.
        public init(quality: Int = 60, speed: Int = 6, threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
            self.quality = min(max(quality, 0), 100)
            self.speed = min(max(speed, 0), 10)
            self.threads = max(threads, 1)
        }

        /// AV1's quantizer for `quality`: 0 is lossless, 63 the coarsest.
        public var quantizer: Int32 { Int32((100 - quality) * 63 + 50) / 100 }

        /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: libavif's YUV image and aom's frame buffers: 20.4 bytes a pixel on a 53 MP photo.
        public func workingBytes(for image: Image) -> Int { image.width * image.height * 24 }

        public func encode(_ image: Image) throws(ImagoError) -> Data {
            try CodecLibrary.avif.load(writing: true)
            guard image.width > 0, image.height > 0, image.width <= 65_536, image.height <= 65_536 else {
                throw encodingError(format, "cannot write \(image.width)×\(image.height)")
            }
            guard let encoder = avifEncoderCreate() else { throw encodingError(format, "cannot make an encoder") }
            defer { avifEncoderDestroy(encoder) }
            encoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AOM
            encoder.pointee.maxThreads = Int32(clamping: threads)
            encoder.pointee.speed = Int32(speed)
            encoder.pointee.minQuantizer = quantizer
            encoder.pointee.maxQuantizer = quantizer
            // Alpha is kept exactly: edges of transparent images show every error.
            encoder.pointee.minQuantizerAlpha = 0
            encoder.pointee.maxQuantizerAlpha = 0
            encoder.pointee.timescale = 1000
            let single = !image.isAnimated
            for frame in image.frames {
                try add(frame, of: image, to: encoder, single: single)
            }
            var output = avifRWData()
            defer { avifRWDataFree(&output) }
            try check(avifEncoderFinish(encoder, &output), encoder)
            guard let bytes = output.data else { throw encodingError(format, "no output") }
            return Data(bytes: bytes, count: output.size)
        }

        /// Converts one frame to YUV and hands it to the encoder with its duration in milliseconds.
        private func add(_ frame: Image.Frame, of image: Image, to encoder: UnsafeMutablePointer<avifEncoder>, single: Bool) throws(ImagoError) {
            let subsampling = quality == 100 ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420
            guard let yuv = avifImageCreate(UInt32(image.width), UInt32(image.height), 8, subsampling) else {
                throw encodingError(format, "cannot make a \(image.width)×\(image.height) image")
            }
            defer { avifImageDestroy(yuv) }
            if let profile = image.metadata.colorProfile {
                profile.data.withUnsafeBytes { avifImageSetProfileICC(yuv, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
            }
            if let exif = image.metadata.exif { exif.withUnsafeBytes { avifImageSetMetadataExif(yuv, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) } }
            if let xmp = image.metadata.xmp { xmp.withUnsafeBytes { avifImageSetMetadataXMP(yuv, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) } }
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, yuv)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.ignoreAlpha = image.metadata.hasAlpha ? AVIF_FALSE : AVIF_TRUE
            rgb.rowBytes = UInt32(image.width * 4)
            var pixels = frame.pixels
            let converted = pixels.withUnsafeMutableBufferPointer { buffer in
                rgb.pixels = buffer.baseAddress
                return avifImageRGBToYUV(yuv, &rgb)
            }
            try check(converted, encoder)
            let (seconds, attoseconds) = frame.duration.components
            let milliseconds = UInt64(clamping: seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000)
            let flags = single ? avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_SINGLE.rawValue) : avifAddImageFlags(AVIF_ADD_IMAGE_FLAG_NONE.rawValue)
            try check(avifEncoderAddImage(encoder, yuv, max(milliseconds, 1), flags), encoder)
        }

        private func check(_ result: avifResult, _ encoder: UnsafeMutablePointer<avifEncoder>) throws(ImagoError) {
            guard result != AVIF_RESULT_OK else { return }
            let detail = withUnsafeBytes(of: encoder.pointee.diag.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw encodingError(format, String(cString: avifResultToString(result)) + (detail.isEmpty ? "" : ": " + detail))
        }
    }
#endif
