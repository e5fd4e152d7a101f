#if AVIF
    import CAVIF
    import Foundation

    /// Decodes AVIF with libavif (AV1 through dav1d or libaom): stills and image sequences, alpha,
    /// 8-, 10- and 12-bit samples (to 8-bit RGBA), colour from the ICC profile or CICP (P3, BT.2020,
    /// PQ and HLG reduced to sRGB), and the container's rotation and mirror (`irot`,
    /// `imir`). Sizes and frame counts are checked before anything is decoded, and libavif is given
    /// the same limits so the AV1 decoder refuses a frame larger than the container said.
    public struct AVIFDecoder: ImageDecoding {
        public let format = ImageFormat.avif

        /// Makes an AVIF decoder.
        public init() {}

        /// An ISO-BMFF `ftyp` box whose major or a compatible brand is `avif` or `avis`.
        public func canDecode(_ data: Data) -> Bool {
            FileTypeBox.brands(data).contains { $0 == "avif" || $0 == "avis" }
        }

        /// Every frame's pixels, the working canvas and a turned copy when the orientation is applied.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            try? Self.withDecoder(data, options: options) { decoder throws(ImagoError) in
                let image = try Self.image(of: decoder)
                let width = Int(image.pointee.width), height = Int(image.pointee.height)
                let turned = options.appliesOrientation && Self.orientation(image) != .up
                let frames = max(1, Int(decoder.pointee.imageCount))
                return DecodeEstimate.buffers(frames + (turned ? 1 : 0), width: width, height: height, options: options)
            }
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            try Self.withDecoder(data, options: options) { decoder throws(ImagoError) in
                let parsed = try Self.image(of: decoder)
                let width = Int(parsed.pointee.width), height = Int(parsed.pointee.height)
                let frameCount = max(1, Int(decoder.pointee.imageCount))
                let orientation = options.appliesOrientation ? Self.orientation(parsed) : .up
                try options.check(width: width, height: height)
                try options.checkFrames(frameCount, width: width, height: height)
                try options.checkMemory(frameCount + (orientation == .up ? 0 : 1), width: width, height: height)
                let hasAlpha = decoder.pointee.alphaPresent != 0
                let color = DecodeColor(stated: Self.colorProfile(parsed), pixels: .rgb, bitsPerSample: Int(parsed.pointee.depth), options: options)
                let wide = color.wantsSixteenBits
                if wide { try options.checkMemory(frameCount + 3, width: width, height: height) }

                var frames: [Image.Frame] = []
                var upright = (width: width, height: height)
                for index in 0..<frameCount {
                    let result = avifDecoderNextImage(decoder)
                    guard result == AVIF_RESULT_OK else { throw Self.failure(result, decoder, "frame \(index)") }
                    let image = try Self.image(of: decoder)
                    // The AV1 stream must agree with the container's size, which the checks above used.
                    guard Int(image.pointee.width) == width, Int(image.pointee.height) == height else {
                        throw ImagoError.invalid(.avif, "frame \(index) is \(image.pointee.width)×\(image.pointee.height), not \(width)×\(height)")
                    }
                    var rgb = avifRGBImage()
                    avifRGBImageSetDefaults(&rgb, image)
                    rgb.format = AVIF_RGB_FORMAT_RGBA
                    var pixels: [UInt8]
                    if wide {
                        // 10- and 12-bit samples are converted from 16 bits, before they become 8.
                        rgb.depth = 16
                        rgb.rowBytes = UInt32(width * 8)
                        var samples = [UInt16](repeating: 0, count: width * height * 4)
                        let converted = samples.withUnsafeMutableBytes { buffer in
                            rgb.pixels = buffer.bindMemory(to: UInt8.self).baseAddress
                            return avifImageYUVToRGB(image, &rgb)
                        }
                        guard converted == AVIF_RESULT_OK else { throw Self.failure(converted, decoder, "frame \(index)") }
                        let narrowed = samples.withUnsafeBufferPointer { buffer in
                            Result { () throws(ImagoError) in try color.apply(rgba16: buffer, width: width, height: height) }
                        }
                        pixels = try narrowed.get()
                    } else {
                        pixels = [UInt8](repeating: 0, count: width * height * 4)
                        rgb.depth = 8
                        rgb.rowBytes = UInt32(width * 4)
                        let converted = pixels.withUnsafeMutableBufferPointer { buffer in
                            rgb.pixels = buffer.baseAddress
                            return avifImageYUVToRGB(image, &rgb)
                        }
                        guard converted == AVIF_RESULT_OK else { throw Self.failure(converted, decoder, "frame \(index)") }
                        color.apply(&pixels, width: width, height: height)
                    }
                    let turned = orientation.apply(to: pixels, width: width, height: height)
                    upright = (turned.width, turned.height)
                    let seconds = decoder.pointee.imageTiming.duration
                    let duration: Duration =
                        frameCount > 1 && seconds.isFinite && seconds > 0 ? .milliseconds(Int((min(seconds, 86_400) * 1000).rounded())) : .zero
                    frames.append(Image.Frame(pixels: turned.pixels, duration: duration))
                }
                var metadata = ImageMetadata(format: .avif, originalWidth: width, originalHeight: height, orientationApplied: orientation, hasAlpha: hasAlpha)
                color.record(in: &metadata)
                metadata.bitsPerSample = Int(parsed.pointee.depth)
                if options.metadataHandling != .strip {
                    func bytes(_ block: avifRWData) -> Data? { block.data.flatMap { block.size > 0 ? Data(bytes: $0, count: block.size) : nil } }
                    (metadata.exif, metadata.xmp) = options.keptMetadata(
                        exif: bytes(parsed.pointee.exif), xmp: bytes(parsed.pointee.xmp), turned: orientation != .up)
                }
                return Image(width: upright.width, height: upright.height, frames: frames, metadata: metadata)
            }
        }

        /// The `colr` box's ICC profile, else the profile its CICP code points describe.
        static func colorProfile(_ image: UnsafeMutablePointer<avifImage>) -> ColorProfile? {
            if let bytes = image.pointee.icc.data, image.pointee.icc.size > 0 {
                return ColorProfile(iccData: Data(bytes: bytes, count: image.pointee.icc.size))
            }
            return ColorProfile.cicp(primaries: Int(image.pointee.colorPrimaries), transfer: Int(image.pointee.transferCharacteristics))
        }

        /// libavif's result and, when it gave one, its diagnostic.
        private static func failure(_ result: avifResult, _ decoder: UnsafeMutablePointer<avifDecoder>, _ context: String) -> ImagoError {
            let name = String(cString: avifResultToString(result))
            let detail = withUnsafeBytes(of: decoder.pointee.diag.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return ImagoError.invalid(.avif, "\(context): \(name)" + (detail.isEmpty ? "" : " (\(detail))"))
        }

        private static func image(of decoder: UnsafeMutablePointer<avifDecoder>) throws(ImagoError) -> UnsafeMutablePointer<avifImage> {
            guard let image = decoder.pointee.image else { throw ImagoError.invalid(.avif, "no image") }
            return image
        }

        /// The container's rotation (`irot`, anticlockwise quarter turns) then mirror (`imir`) as the
        /// EXIF orientation that undoes them.
        static func orientation(_ image: UnsafeMutablePointer<avifImage>) -> ImageOrientation {
            let flags = image.pointee.transformFlags
            let angle = flags & AVIF_TRANSFORM_IROT.rawValue != 0 ? Int(image.pointee.irot.angle) & 3 : 0
            let mirror: Int? = flags & AVIF_TRANSFORM_IMIR.rawValue != 0 ? Int(image.pointee.imir.mode) & 1 : nil
            let table: [ImageOrientation] =
                switch mirror {
                case nil: [.up, .left, .down, .right]
                case 1: [.upMirrored, .rightMirrored, .downMirrored, .leftMirrored]
                default: [.downMirrored, .leftMirrored, .upMirrored, .rightMirrored]
                }
            return table[angle]
        }

        /// A libavif decoder over `data`, parsed, for `body`. libavif gets Imago's limits too, so the
        /// AV1 decoder itself refuses a frame larger than they allow.
        private static func withDecoder<T>(
            _ data: Data, options: DecodingOptions, _ body: (UnsafeMutablePointer<avifDecoder>) throws(ImagoError) -> T
        ) throws(ImagoError) -> T {
            try CodecLibrary.avif.load()
            let result = data.withUnsafeBytes { bytes -> Result<T, ImagoError> in
                Result { () throws(ImagoError) -> T in
                    guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw ImagoError.invalid(.avif, "no data") }
                    guard let decoder = avifDecoderCreate() else { throw ImagoError.invalid(.avif, "libavif could not make a decoder") }
                    defer { avifDecoderDestroy(decoder) }
                    decoder.pointee.imageSizeLimit = UInt32(clamping: options.maxPixels)
                    decoder.pointee.imageDimensionLimit = UInt32(clamping: options.maxSide)
                    decoder.pointee.imageCountLimit = UInt32(clamping: options.maxFrames)
                    let status = parse(decoder, base, bytes.count, readsMetadata: options.metadataHandling != .strip)
                    guard status == AVIF_RESULT_OK else {
                        // Refused, perhaps by those limits: say so with the size when it is the reason.
                        if let (width, height) = declaredSize(base, bytes.count) { try options.check(width: width, height: height) }
                        throw failure(status, decoder, "parsing")
                    }
                    return try body(decoder)
                }
            }
            return try result.get()
        }

        private static func parse(
            _ decoder: UnsafeMutablePointer<avifDecoder>, _ base: UnsafePointer<UInt8>, _ count: Int, readsMetadata: Bool = false
        ) -> avifResult {
            decoder.pointee.maxThreads = 1
            decoder.pointee.ignoreExif = readsMetadata ? 0 : 1
            decoder.pointee.ignoreXMP = readsMetadata ? 0 : 1
            let status = avifDecoderSetIOMemory(decoder, base, count)
            guard status == AVIF_RESULT_OK else { return status }
            return avifDecoderParse(decoder)
        }

        /// The size the container declares, read with libavif's own limits (parsing decodes no pixels).
        private static func declaredSize(_ base: UnsafePointer<UInt8>, _ count: Int) -> (Int, Int)? {
            guard let decoder = avifDecoderCreate() else { return nil }
            defer { avifDecoderDestroy(decoder) }
            guard parse(decoder, base, count) == AVIF_RESULT_OK, let image = decoder.pointee.image else { return nil }
            return (Int(image.pointee.width), Int(image.pointee.height))
        }
    }
#endif
