#if TIFF
    import CTIFFSupport
    import Foundation

    /// Encodes TIFF with libtiff: one page of 8-bit RGB, or RGBA with unassociated alpha, deflate
    /// with the horizontal predictor (lossless; every TIFF reader takes it), a kept colour profile in
    /// tag 34675. EXIF and XMP are not written. An animation gives its first frame. libtiff writes
    /// to memory that never grows past the pixels' size plus a margin, checked before it starts.
    public struct TIFFEncoder: ImageEncoding {
        public let format = ImageFormat.tiff

        /// Makes a TIFF encoder.
        public init() {}

        /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: the file in memory, never past the pixels' size.
        public func workingBytes(for image: Image) -> Int { image.width * image.height * 4 }

        public func encode(_ image: Image) throws(ImagoError) -> Data {
            try CodecLibrary.tiff.load(writing: true)
            let pixels = try encodableFrame(image, format, maxWidth: Int(UInt32.max) / 4, maxHeight: Int(UInt32.max))
            let (width, height) = (image.width, image.height)
            let alpha = image.metadata.hasAlpha
            let profile = image.metadata.colorProfile.map { [UInt8]($0.data) } ?? []
            // Deflate can grow incompressible rows a little; strips, tags and the profile add a few KiB.
            let raw = width * height * (alpha ? 4 : 3)
            var sink = imago_tiff_sink()
            sink.limit = UInt64(raw + raw / 16 + profile.count + (1 << 20))
            defer { imago_tiff_sink_free(&sink) }
            let written = pixels.withUnsafeBufferPointer { rgba in
                profile.withUnsafeBufferPointer { icc in
                    imago_tiff_write_rgba(
                        &sink, rgba.baseAddress, UInt32(width), UInt32(height), alpha ? 1 : 0, profile.isEmpty ? nil : icc.baseAddress,
                        UInt32(profile.count))
                }
            }
            guard written == 1, let bytes = sink.bytes else {
                let message = withUnsafeBytes(of: sink.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                throw encodingError(format, message.isEmpty ? "libtiff could not write \(width)×\(height)" : message)
            }
            return Data(bytes: bytes, count: Int(sink.count))
        }
    }
#endif
