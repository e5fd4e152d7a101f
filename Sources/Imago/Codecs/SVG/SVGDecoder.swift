#if SVG
    import CRSVG
    import Foundation

    /// Renders SVG with librsvg at the size the request needs: a first processor's
    /// (``ReducedDecodeProcessing/vectorRenderSize(width:height:)``), or ``DecodingOptions/targetSize``
    /// (up or down, as vectors scale without loss), else the document's own size (its `width` and
    /// `height`, else its `viewBox`, else 300 × 150 as browsers take it).
    ///
    /// Nothing outside the document is read: the text is made safe first (no document
    /// type or entities, no reference but to fragments), and librsvg, given no base URL, loads
    /// nothing else. The element count and the rendered size are checked against the limits
    /// before librsvg sees the document.
    public struct SVGDecoder: ImageDecoding {
        public let format = ImageFormat.svg

        /// Makes an SVG decoder.
        public init() {}

        public func canDecode(_ data: Data) -> Bool { SVGText.looksLikeSVG(data) }

        /// The rendered canvas at the size the decode will render (the document parsed by
        /// librsvg to learn its size, as the decode parses it), and librsvg's tree, counted as four
        /// times the document's bytes; nil when the document cannot be read (the decode says why).
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            guard (try? CodecLibrary.rsvg.load()) != nil, let text = try? SVGText(data) else { return nil }
            let handle = text.data.withUnsafeBytes { bytes in
                rsvg_handle_new_from_data(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, nil)
            }
            guard let handle else { return nil }
            defer { g_object_unref(handle) }
            let nominal = Self.nominalSize(handle)
            let size = options.renderSize(width: nominal.width, height: nominal.height)
            guard (try? options.check(width: nominal.width, height: nominal.height)) != nil else {
                return DecodeEstimate(width: nominal.width, height: nominal.height, bytes: 0)
            }
            var estimate = DecodeEstimate.buffers(1, width: size.width, height: size.height, options: options)
            guard estimate.bytes > 0 else { return DecodeEstimate(width: nominal.width, height: nominal.height, bytes: 0) }
            (estimate.width, estimate.height) = (nominal.width, nominal.height)
            if size != nominal { estimate.decodedSize = size }
            estimate.bytes += text.data.count * 4
            return estimate
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            try CodecLibrary.rsvg.load()
            let text = try SVGText(data)
            var error: UnsafeMutablePointer<ImagoGError>?
            let handle = text.data.withUnsafeBytes { bytes in
                rsvg_handle_new_from_data(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &error)
            }
            guard let handle else { throw Self.failure(error, "not a document librsvg reads") }
            defer { g_object_unref(handle) }
            let nominal = Self.nominalSize(handle)
            try options.check(width: nominal.width, height: nominal.height)
            let size = options.renderSize(width: nominal.width, height: nominal.height)
            try options.check(width: size.width, height: size.height)
            try options.checkMemory(1, width: size.width, height: size.height)
            var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
            let rendered = pixels.withUnsafeMutableBytes { buffer -> Bool in
                guard
                    let surface = cairo_image_surface_create_for_data(
                        buffer.bindMemory(to: UInt8.self).baseAddress, 0, Int32(size.width), Int32(size.height), Int32(size.width * 4))
                else { return false }
                defer { cairo_surface_destroy(surface) }
                guard let cairo = cairo_create(surface) else { return false }
                defer { cairo_destroy(cairo) }
                var viewport = ImagoRsvgRectangle(x: 0, y: 0, width: Double(size.width), height: Double(size.height))
                let done = rsvg_handle_render_document(handle, cairo, &viewport, &error) != 0
                cairo_surface_flush(surface)
                return done && cairo_status(cairo) == 0
            }
            guard rendered else { throw Self.failure(error, "librsvg could not render it") }
            Self.straighten(&pixels)
            let metadata = ImageMetadata(format: .svg, originalWidth: nominal.width, originalHeight: nominal.height, hasAlpha: true)
            return Image(width: size.width, height: size.height, frames: [.init(pixels: pixels)], metadata: metadata)
        }

        /// The document's size in pixels: its `width` and `height`, else its `viewBox`'s, else 300 × 150.
        static func nominalSize(_ handle: UnsafeMutableRawPointer) -> PixelSize {
            var width = 0.0, height = 0.0
            if rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) != 0, width.isFinite, height.isFinite, width > 0, height > 0 {
                return PixelSize(width: Self.side(width), height: Self.side(height))
            }
            var hasWidth: Int32 = 0, hasHeight: Int32 = 0, hasViewBox: Int32 = 0
            var length = ImagoRsvgLength(length: 0, unit: 0), other = ImagoRsvgLength(length: 0, unit: 0)
            var viewBox = ImagoRsvgRectangle(x: 0, y: 0, width: 0, height: 0)
            rsvg_handle_get_intrinsic_dimensions(handle, &hasWidth, &length, &hasHeight, &other, &hasViewBox, &viewBox)
            if hasViewBox != 0, viewBox.width.isFinite, viewBox.height.isFinite, viewBox.width > 0, viewBox.height > 0 {
                return PixelSize(width: Self.side(viewBox.width), height: Self.side(viewBox.height))
            }
            return PixelSize(width: 300, height: 150)
        }

        /// A side in whole pixels, rounded up, within 1…2^30 so it cannot overflow the checks.
        private static func side(_ value: Double) -> Int { Int(min(max(value.rounded(.up), 1), Double(1 << 30))) }

        /// Cairo's premultiplied native-endian ARGB words to straight RGBA bytes.
        static func straighten(_ pixels: inout [UInt8]) {
            pixels.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt32.self)
                for index in words.indices {
                    let word = words[index]
                    let alpha = Int(word >> 24)
                    var (red, green, blue) = (Int((word >> 16) & 0xFF), Int((word >> 8) & 0xFF), Int(word & 0xFF))
                    if alpha > 0, alpha < 255 {
                        red = min(255, (red * 255 + alpha / 2) / alpha)
                        green = min(255, (green * 255 + alpha / 2) / alpha)
                        blue = min(255, (blue * 255 + alpha / 2) / alpha)
                    }
                    let bytes = raw.baseAddress!.advanced(by: index * 4).assumingMemoryBound(to: UInt8.self)
                    (bytes[0], bytes[1], bytes[2], bytes[3]) = (UInt8(red), UInt8(green), UInt8(blue), UInt8(alpha))
                }
            }
        }

        private static func failure(_ error: UnsafeMutablePointer<ImagoGError>?, _ fallback: String) -> ImagoError {
            defer { if let error { g_error_free(error) } }
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? fallback
            return ImagoError.invalid(.svg, String(message.prefix(200)))
        }
    }
#endif
