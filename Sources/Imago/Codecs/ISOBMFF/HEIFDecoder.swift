#if HEIF
    import CHEIF
    import Foundation

    /// Decodes HEIC and other HEIF stills with libheif (HEVC through libde265): the primary image with
    /// its alpha and its rotation, mirror and crop applied, HDR samples reduced to 8 bits. When
    /// ``DecodingOptions/targetSize`` is small enough, the file's own thumbnail is decoded instead of
    /// the full image, as long as it still covers the target. Colour from the ICC profile or `nclx`,
    /// converted from the file's own depth when it has more than 8 bits. AVIF files, which are HEIF too, are left
    /// to ``AVIFDecoder``.
    public struct HEIFDecoder: ImageDecoding {
        public let format = ImageFormat.heif

        /// Makes a HEIF decoder.
        public init() {}

        static let brands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]

        /// An `ftyp` box with a HEVC brand, or the generic `mif1`/`msf1` without an AVIF one.
        public func canDecode(_ data: Data) -> Bool {
            let found = FileTypeBox.brands(data)
            if found.contains(where: { $0 == "avif" || $0 == "avis" }) { return false }
            return found.contains { Self.brands.contains($0) || $0 == "mif1" || $0 == "msf1" }
        }

        /// libheif's output and Imago's copy of it; more for samples over 8 bits, which may be
        /// converted from their own depth.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            try? Self.withImageHandle(data, options: options, estimating: true) { handle throws(ImagoError) in
                DecodeEstimate.buffers(
                    heif_image_handle_get_luma_bits_per_pixel(handle) > 8 ? 5 : 2, width: Int(heif_image_handle_get_width(handle)),
                    height: Int(heif_image_handle_get_height(handle)), options: options)
            }
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            try Self.withImageHandle(data, options: options) { handle throws(ImagoError) in
                let width = Int(heif_image_handle_get_width(handle)), height = Int(heif_image_handle_get_height(handle))
                let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
                try options.check(width: width, height: height)
                let bits = Int(heif_image_handle_get_luma_bits_per_pixel(handle))
                let color = DecodeColor(stated: Self.colorProfile(handle), pixels: .rgb, bitsPerSample: bits, options: options)
                // More than 8 bits to convert: libheif's samples are kept (twice an 8-bit buffer)
                // and converted before they become 8-bit.
                let wide = bits > 8 && color.wantsSixteenBits
                // libheif's output, (when wide) its samples widened to 16 bits, and Imago's copy.
                try options.checkMemory(wide ? 5 : 2, width: width, height: height)
                guard let decoding = heif_decoding_options_alloc() else { throw ImagoError.invalid(.heif, "libheif could not make decoding options") }
                defer { heif_decoding_options_free(decoding) }
                decoding.pointee.convert_hdr_to_8bit = wide ? 0 : 1
                var decoded: OpaquePointer?
                let chroma = wide ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RGBA
                try Self.check(heif_decode_image(handle, &decoded, heif_colorspace_RGB, chroma, decoding))
                guard let decoded else { throw ImagoError.invalid(.heif, "no image decoded") }
                defer { heif_image_release(decoded) }
                // The decoded size is the handle's after its transformations; read it back rather than trust it.
                let outWidth = Int(heif_image_get_width(decoded, heif_channel_interleaved))
                let outHeight = Int(heif_image_get_height(decoded, heif_channel_interleaved))
                guard outWidth == width, outHeight == height else {
                    throw ImagoError.invalid(.heif, "decoded \(outWidth)×\(outHeight), declared \(width)×\(height)")
                }
                var stride: Int32 = 0
                let bytesPerPixel = wide ? 8 : 4
                guard let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride), Int(stride) >= width * bytesPerPixel else {
                    throw ImagoError.invalid(.heif, "no pixels")
                }
                var pixels: [UInt8]
                if wide {
                    let range = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved))
                    guard (9...16).contains(range) else { throw ImagoError.invalid(.heif, "\(range) bits a sample") }
                    pixels = try Self.converted(plane, stride: Int(stride), width: width, height: height, bits: range, color: color)
                } else {
                    pixels = [UInt8](repeating: 0, count: width * height * 4)
                    pixels.withUnsafeMutableBytes { target in
                        for row in 0..<height {
                            let source = UnsafeRawBufferPointer(start: plane + row * Int(stride), count: width * 4)
                            UnsafeMutableRawBufferPointer(rebasing: target[row * width * 4..<(row + 1) * width * 4]).copyMemory(from: source)
                        }
                    }
                    color.apply(&pixels, width: width, height: height)
                }
                var metadata = ImageMetadata(format: .heif, originalWidth: width, originalHeight: height, hasAlpha: hasAlpha)
                color.record(in: &metadata)
                metadata.bitsPerSample = bits
                if options.metadataHandling != .strip {
                    // libheif applies the container's rotation, so the EXIF orientation no longer holds.
                    (metadata.exif, metadata.xmp) = options.keptMetadata(
                        exif: Self.metadataBlock(handle, type: "Exif"), xmp: Self.metadataBlock(handle, type: "mime"), turned: true)
                }
                return Image(width: width, height: height, frames: [Image.Frame(pixels: pixels)], metadata: metadata)
            }
        }

        /// libheif's little-endian samples of `bits` bits, widened to 16 and converted through `color`.
        private static func converted(
            _ plane: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, bits: Int, color: DecodeColor
        ) throws(ImagoError) -> [UInt8] {
            let wide = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: width * height * 4)
            defer { wide.deallocate() }
            // v << (16 − bits) | v >> (2·bits − 16) spreads 0…2^bits − 1 over 0…65535 (both ends kept).
            let (up, down) = (UInt16(16 - bits), UInt16(2 * bits - 16))
            let mask = UInt16((1 << bits) - 1)
            for row in 0..<height {
                let source = UnsafeRawPointer(plane + row * stride)
                for index in 0..<width * 4 {
                    let value = UInt16(littleEndian: source.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)) & mask
                    wide[row * width * 4 + index] = value << up | value >> down
                }
            }
            return try color.apply(rgba16: UnsafeBufferPointer(wide), width: width, height: height)
        }

        /// The first metadata block of `type` (`Exif`, or `mime` for XMP), at most 1 MiB.
        static func metadataBlock(_ handle: OpaquePointer, type: String) -> Data? {
            let count = heif_image_handle_get_number_of_metadata_blocks(handle, type)
            guard count > 0 else { return nil }
            var ids = [heif_item_id](repeating: 0, count: Int(count))
            let found = heif_image_handle_get_list_of_metadata_block_IDs(handle, type, &ids, count)
            for id in ids.prefix(Int(found)) {
                if type == "mime", let contentType = heif_image_handle_get_metadata_content_type(handle, id),
                    String(cString: contentType) != "application/rdf+xml"
                {
                    continue
                }
                let size = heif_image_handle_get_metadata_size(handle, id)
                guard size > 0, size <= XMP.maxSize else { continue }
                var bytes = [UInt8](repeating: 0, count: size)
                guard heif_image_handle_get_metadata(handle, id, &bytes).code == heif_error_Ok else { continue }
                return Data(bytes)
            }
            return nil
        }

        /// The image's ICC profile (`prof` or `rICC`), else the one its `nclx` CICP code points describe.
        static func colorProfile(_ handle: OpaquePointer) -> ColorProfile? {
            let size = heif_image_handle_get_raw_color_profile_size(handle)
            if size > 0 {
                var bytes = [UInt8](repeating: 0, count: size)
                guard heif_image_handle_get_raw_color_profile(handle, &bytes).code == heif_error_Ok else { return nil }
                return ColorProfile(iccData: Data(bytes))
            }
            var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
            guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else { return nil }
            defer { heif_nclx_color_profile_free(nclx) }
            return ColorProfile.cicp(primaries: Int(nclx.pointee.color_primaries.rawValue), transfer: Int(nclx.pointee.transfer_characteristics.rawValue))
        }

        private static func check(_ error: heif_error) throws(ImagoError) {
            guard error.code != heif_error_Ok else { return }
            throw ImagoError.invalid(.heif, error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)")
        }

        /// The image to decode: the primary image, or its smallest thumbnail that covers the target.
        /// An estimate reports a size over the limits (with no bytes) rather than failing, so its
        /// item check holds only the layout, not the grid's canvas, to account.
        private static func withImageHandle<T>(
            _ data: Data, options: DecodingOptions, estimating: Bool = false, _ body: (OpaquePointer) throws(ImagoError) -> T
        ) throws(ImagoError) -> T {
            try CodecLibrary.heif.load()
            try HEIFItemCheck.check(data, options: options, checksCanvas: !estimating)
            let result = data.withUnsafeBytes { bytes -> Result<T, ImagoError> in
                Result { () throws(ImagoError) -> T in
                    guard let base = bytes.baseAddress, let context = heif_context_alloc() else { throw ImagoError.invalid(.heif, "no data") }
                    defer { heif_context_free(context) }
                    heif_context_set_maximum_image_size_limit(context, Int32(clamping: options.maxSide))
                    // A grid's tiles on this thread: the CPU stage already runs decodes in parallel, and a
                    // grid of thousands of tiles made libheif start threads until none could be had
                    // (a fuzz input whose grid was made of itself, Tests/Hostile/fuzz-heif-grid-made-of-itself.heic).
                    heif_context_set_max_decoding_threads(context, 0)
                    try check(heif_context_read_from_memory_without_copy(context, base, bytes.count, nil))
                    var primary: OpaquePointer?
                    try check(heif_context_get_primary_image_handle(context, &primary))
                    guard let primary else { throw ImagoError.invalid(.heif, "no primary image") }
                    defer { heif_image_handle_release(primary) }
                    let chosen = options.usesEmbeddedThumbnail ? largestThumbnail(of: primary) : coveringThumbnail(of: primary, options: options)
                    guard let thumbnail = chosen else { return try body(primary) }
                    defer { heif_image_handle_release(thumbnail) }
                    return try body(thumbnail)
                }
            }
            return try result.get()
        }

        /// The smallest thumbnail whose size still covers ``DecodingOptions/targetSize``, if any.
        private static func coveringThumbnail(of primary: OpaquePointer, options: DecodingOptions) -> OpaquePointer? {
            guard let target = options.targetSize else { return nil }
            return thumbnail(of: primary) { width, height in
                switch options.targetMode {
                case .fill: width >= target.width && height >= target.height
                case .fit: width >= target.width || height >= target.height
                }
            } isBetter: {
                $0 < $1
            }
        }

        /// The largest thumbnail, if the file has one (``DecodingOptions/usesEmbeddedThumbnail``).
        private static func largestThumbnail(of primary: OpaquePointer) -> OpaquePointer? {
            thumbnail(of: primary) { _, _ in
                true
            } isBetter: {
                $0 > $1
            }
        }

        /// The thumbnail that `qualifies` with the pixel count `isBetter` prefers.
        private static func thumbnail(
            of primary: OpaquePointer, qualifies: (Int, Int) -> Bool, isBetter: (_ pixels: Int, _ than: Int) -> Bool
        ) -> OpaquePointer? {
            let count = Int(heif_image_handle_get_number_of_thumbnails(primary))
            guard count > 0, count <= 64 else { return nil }
            var ids = [heif_item_id](repeating: 0, count: count)
            let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(count)))
            var best: (handle: OpaquePointer, pixels: Int)?
            for id in ids.prefix(listed) {
                var handle: OpaquePointer?
                guard heif_image_handle_get_thumbnail(primary, id, &handle).code == heif_error_Ok, let handle else { continue }
                let width = Int(heif_image_handle_get_width(handle)), height = Int(heif_image_handle_get_height(handle))
                if qualifies(width, height), width > 0, height > 0, best.map({ isBetter(width * height, $0.pixels) }) ?? true {
                    if let previous = best { heif_image_handle_release(previous.handle) }
                    best = (handle, width * height)
                } else {
                    heif_image_handle_release(handle)
                }
            }
            return best?.handle
        }
    }
#endif
