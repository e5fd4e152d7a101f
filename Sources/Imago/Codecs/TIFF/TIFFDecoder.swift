#if TIFF
    import CTIFFSupport
    import Foundation

    /// Decodes TIFF with libtiff: strips and tiles, 1 to 16 bits per sample (to 8-bit RGBA), palette,
    /// grayscale, RGB, CMYK (8-bit CMYK through its ICC profile or the default CMYK one), YCbCr, the
    /// ICC profile (tag 34675) honoured, every compression libtiff was built with, alpha, and all eight
    /// orientations. A file of several pages decodes its first, or the one given to ``init(page:)``;
    /// ``pageCount(_:)`` says how many there are. libtiff reads from memory, never prints, and makes no
    /// single allocation above ``DecodingOptions/maxDecodedBytes``.
    public struct TIFFDecoder: ImageDecoding {
        public let format = ImageFormat.tiff
        /// The page (TIFF directory) this decoder reads, from 0.
        public let page: Int

        /// Makes a TIFF decoder of `page` (0, the first, by default).
        public init(page: Int = 0) {
            self.page = page
        }

        public func canDecode(_ data: Data) -> Bool {
            guard data.count >= 8 else { return false }
            let head = [UInt8](data.prefix(4))
            // Classic TIFF (42) and BigTIFF (43), little- and big-endian.
            return (head[0] == 0x49 && head[1] == 0x49 && (head[2] == 42 || head[2] == 43) && head[3] == 0)
                || (head[0] == 0x4D && head[1] == 0x4D && head[2] == 0 && (head[3] == 42 || head[3] == 43))
        }

        /// The output, a turned copy when the orientation is applied, and 16-bit samples that may be
        /// converted before they become 8-bit.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            try? Self.withPage(page, of: data, options: options) { tiff, info throws(ImagoError) in
                let turned = options.appliesOrientation && Self.orientation(info) != .up
                let wide = imago_tiff_is_plain_16bit(tiff) != 0
                return DecodeEstimate.buffers((turned ? 2 : 1) + (wide ? 2 : 0), width: Int(info.width), height: Int(info.height), options: options)
            }
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            try Self.withPage(page, of: data, options: options) { tiff, info throws(ImagoError) in
                let width = Int(info.width), height = Int(info.height)
                let orientation = options.appliesOrientation ? Self.orientation(info) : .up
                try options.check(width: width, height: height)
                let isCMYK = imago_tiff_is_plain_cmyk(tiff) != 0
                let isGray = info.photometric == 0 || info.photometric == 1
                let isWide = imago_tiff_is_plain_16bit(tiff) != 0
                let color = DecodeColor(
                    stated: Self.iccProfile(tiff), pixels: isCMYK ? .cmyk : isGray ? .gray : .rgb, bitsPerSample: isWide ? 16 : 8, options: options)
                // 16-bit samples to convert are read as they are (twice an 8-bit buffer) and
                // converted before they become 8-bit.
                let readsWide = isWide && color.wantsSixteenBits
                try options.checkMemory((orientation == .up ? 1 : 2) + (readsWide ? 2 : 0), width: width, height: height)
                var message = [CChar](repeating: 0, count: 1024)
                var pixels: [UInt8]
                if readsWide {
                    pixels = try Self.readConverted(tiff, info, color: color, message: &message)
                } else {
                    pixels = [UInt8](repeating: 0, count: width * height * 4)
                    let ok =
                        isCMYK
                        ? pixels.withUnsafeMutableBytes {
                            imago_tiff_read_cmyk(tiff, info.width, info.height, $0.bindMemory(to: UInt8.self).baseAddress, &message)
                        }
                        : pixels.withUnsafeMutableBytes { raster in
                            imago_tiff_read_rgba(tiff, info.width, info.height, raster.bindMemory(to: UInt32.self).baseAddress, &message)
                        }
                    guard ok != 0 else { throw ImagoError.invalid(.tiff, Self.text(message)) }
                    Self.finish(&pixels, isCMYK: isCMYK, hasAlpha: info.has_alpha != 0)
                    color.apply(&pixels, width: width, height: height)
                }
                let upright = orientation.apply(to: pixels, width: width, height: height)
                var metadata = ImageMetadata(
                    format: .tiff, originalWidth: width, originalHeight: height, orientationApplied: orientation, hasAlpha: info.has_alpha != 0)
                color.record(in: &metadata)
                metadata.bitsPerSample = Int(info.bits_per_sample)
                return Image(width: upright.width, height: upright.height, frames: [Image.Frame(pixels: upright.pixels)], metadata: metadata)
            }
        }

        /// How many pages (directories) the file holds; 0 when it cannot be read.
        public static func pageCount(_ data: Data) -> Int {
            (try? withTIFF(data, options: DecodingOptions()) { tiff throws(ImagoError) in Int(TIFFNumberOfDirectories(tiff)) }) ?? 0
        }

        /// Reads a plain 16-bit directory and converts it to 8-bit RGBA through `color`.
        private static func readConverted(
            _ tiff: OpaquePointer, _ info: imago_tiff_info, color: DecodeColor, message: inout [CChar]
        ) throws(ImagoError) -> [UInt8] {
            let (width, height) = (Int(info.width), Int(info.height))
            let wide = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: width * height * 4)
            defer { wide.deallocate() }
            guard imago_tiff_read_rgba16(tiff, info.width, info.height, wide.baseAddress, &message) != 0 else { throw ImagoError.invalid(.tiff, text(message)) }
            return try color.apply(rgba16: UnsafeBufferPointer(wide), width: width, height: height)
        }

        /// libtiff's RGBA raster as Imago's pixels: bytes in order on every machine, alpha straight.
        private static func finish(_ pixels: inout [UInt8], isCMYK: Bool, hasAlpha: Bool) {
            guard !isCMYK else { return }
            #if _endian(big)
                // libtiff packs each pixel as A<<24 | B<<16 | G<<8 | R: RGBA bytes only on little-endian.
                for index in stride(from: 0, to: pixels.count, by: 4) { pixels[index..<index + 4].reverse() }
            #endif
            if hasAlpha { unpremultiply(&pixels) }
        }

        private static func text(_ message: [CChar]) -> String {
            String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// Tag 34675, the ICC profile.
        private static func iccProfile(_ tiff: OpaquePointer) -> ColorProfile? {
            var bytes: UnsafePointer<UInt8>?
            var count: UInt32 = 0
            guard imago_tiff_icc_profile(tiff, &bytes, &count) != 0, let bytes else { return nil }
            return ColorProfile(iccData: Data(bytes: bytes, count: Int(count)))
        }

        private static func orientation(_ info: imago_tiff_info) -> ImageOrientation {
            ImageOrientation(rawValue: Int(info.orientation)) ?? .up
        }

        /// libtiff's RGBA interface premultiplies alpha; Imago's images are not.
        private static func unpremultiply(_ pixels: inout [UInt8]) {
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = Int(pixels[index + 3])
                guard alpha != 0, alpha != 255 else { continue }
                for channel in index..<index + 3 {
                    pixels[channel] = UInt8(min(255, (Int(pixels[channel]) * 255 + alpha / 2) / alpha))
                }
            }
        }

        /// Opens `data` in libtiff for `body`, then closes it.
        private static func withTIFF<T>(
            _ data: Data, options: DecodingOptions, _ body: (OpaquePointer) throws(ImagoError) -> T
        ) throws(ImagoError) -> T {
            try CodecLibrary.tiff.load()
            let result = data.withUnsafeBytes { bytes -> Result<T, ImagoError> in
                var source = imago_tiff_source()
                source.bytes = bytes.bindMemory(to: UInt8.self).baseAddress
                source.count = UInt64(bytes.count)
                return withUnsafeMutablePointer(to: &source) { source -> Result<T, ImagoError> in
                    guard let tiff = imago_tiff_open(source, Int64(options.maxDecodedBytes)) else {
                        return .failure(ImagoError.invalid(.tiff, message(source)))
                    }
                    defer { TIFFClose(tiff) }
                    return Result { () throws(ImagoError) -> T in
                        do throws(ImagoError) {
                            // libtiff goes on past some damage (a tag cut off by the file's end) that
                            // it only reports: a report is a failure.
                            guard message(source).isEmpty else { throw ImagoError.invalid(.tiff, "") }
                            let value = try body(tiff)
                            guard message(source).isEmpty else { throw ImagoError.invalid(.tiff, "") }
                            return value
                        } catch {
                            // libtiff's own words, when it had any, say more than the wrapper's.
                            let detail = message(source)
                            if error.code.kind == .invalidImage, !detail.isEmpty { throw ImagoError.invalid(.tiff, detail) }
                            throw error
                        }
                    }
                }
            }
            return try result.get()
        }

        /// Opens `data`, moves to `page` and reads what it declares.
        private static func withPage<T>(
            _ page: Int, of data: Data, options: DecodingOptions, _ body: (OpaquePointer, imago_tiff_info) throws(ImagoError) -> T
        ) throws(ImagoError) -> T {
            try withTIFF(data, options: options) { tiff throws(ImagoError) in
                if page != 0 {
                    guard page > 0, page < Int(TIFFNumberOfDirectories(tiff)), TIFFSetDirectory(tiff, tdir_t(page)) != 0 else {
                        throw ImagoError.invalid(.tiff, "no page \(page)")
                    }
                }
                var info = imago_tiff_info()
                guard imago_tiff_read_info(tiff, &info) != 0 else { throw ImagoError.invalid(.tiff, "no image size") }
                return try body(tiff, info)
            }
        }

        private static func message(_ source: UnsafeMutablePointer<imago_tiff_source>) -> String {
            withUnsafeBytes(of: source.pointee.message) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
    }
#endif
