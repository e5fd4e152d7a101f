#if JXL
    import CJXL
    import Foundation

    /// Decodes JPEG XL with libjxl: stills and animations (with durations and loop count), alpha,
    /// any bit depth to 8-bit RGBA, the codestream's orientation applied, colour from the encoding libjxl
    /// reports. The basic header is read and
    /// checked against the limits before any pixel buffer is handed to libjxl, and every further frame
    /// is checked before it is decoded.
    public struct JXLDecoder: ImageDecoding {
        public let format = ImageFormat.jxl

        /// Makes a JPEG XL decoder.
        public init() {}

        /// A bare codestream (`FF 0A`) or the container's signature box.
        public func canDecode(_ data: Data) -> Bool {
            let head = [UInt8](data.prefix(12))
            if head.count >= 2, head[0] == 0xFF, head[1] == 0x0A { return true }
            return head == [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]
        }

        /// One frame's output (an animation's further frames are checked as they come), and 16-bit
        /// output for samples over 8 bits, which may be converted from it.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            guard let info = try? Self.decode(data, options: options, headerOnly: true, keepOrientation: !options.appliesOrientation).info else { return nil }
            let buffers = (info.have_animation != 0 ? 2 : 1) + (info.bits_per_sample > 8 ? 2 : 0)
            return .buffers(buffers, width: Int(info.xsize), height: Int(info.ysize), options: options)
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            // libjxl reports the orientation it applies as none, so the stored one is read first (a
            // few header bytes).
            let stored = try Self.decode(data, options: options, headerOnly: true, keepOrientation: true).info
            let (info, frames, decodedColor) = try Self.decode(data, options: options, headerOnly: false, keepOrientation: !options.appliesOrientation)
            guard !frames.isEmpty, let color = decodedColor else { throw ImagoError.invalid(.jxl, "no frame") }
            let orientation = options.appliesOrientation ? ImageOrientation(rawValue: Int(stored.orientation.rawValue)) ?? .up : .up
            var metadata = ImageMetadata(
                format: .jxl, originalWidth: Int(stored.xsize), originalHeight: Int(stored.ysize), orientationApplied: orientation,
                hasAlpha: info.alpha_bits != 0)
            color.record(in: &metadata)
            metadata.bitsPerSample = Int(info.bits_per_sample)
            return Image(width: Int(info.xsize), height: Int(info.ysize), frames: frames, loopCount: Int(info.animation.num_loops), metadata: metadata)
        }

        /// Runs libjxl's event loop over `data`: the basic header, then (unless `headerOnly`) every
        /// frame into a buffer of its own, each checked against `options` first and converted as its
        /// colour is decided (from 16 bits when the file has more than 8 and is converted). Unless
        /// `keepOrientation`, libjxl turns the image upright and reports the turned size.
        private static func decode(
            _ data: Data, options: DecodingOptions, headerOnly: Bool, keepOrientation: Bool
        ) throws(ImagoError) -> (info: JxlBasicInfo, frames: [Image.Frame], color: DecodeColor?) {
            try CodecLibrary.jxl.load()
            let result = data.withUnsafeBytes { bytes -> Result<(JxlBasicInfo, [Image.Frame], DecodeColor?), ImagoError> in
                Result { () throws(ImagoError) -> (JxlBasicInfo, [Image.Frame], DecodeColor?) in
                    guard let base = bytes.bindMemory(to: UInt8.self).baseAddress, let decoder = JxlDecoderCreate(nil) else {
                        throw ImagoError.invalid(.jxl, "no data")
                    }
                    defer { JxlDecoderDestroy(decoder) }
                    let events = Int32(
                        JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FRAME.rawValue | JXL_DEC_FULL_IMAGE.rawValue)
                    guard JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS,
                        JxlDecoderSetInput(decoder, base, bytes.count) == JXL_DEC_SUCCESS
                    else { throw ImagoError.invalid(.jxl, "libjxl refused the input") }
                    JxlDecoderCloseInput(decoder)
                    guard JxlDecoderSetKeepOrientation(decoder, keepOrientation ? 1 : 0) == JXL_DEC_SUCCESS else {
                        throw ImagoError.invalid(.jxl, "libjxl refused the options")
                    }
                    var format = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
                    var info = JxlBasicInfo()
                    var frames: [Image.Frame] = []
                    var color: DecodeColor?
                    var wide = false
                    // libjxl writes a frame into this between two events, so it is memory of our own
                    // rather than an array's, whose address is only lent for a closure's length.
                    var output: UnsafeMutableRawBufferPointer?
                    defer { output?.deallocate() }
                    var duration = Duration.zero
                    while true {
                        switch JxlDecoderProcessInput(decoder) {
                        case JXL_DEC_BASIC_INFO:
                            guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else { throw ImagoError.invalid(.jxl, "unreadable header") }
                            // An estimate reports a size over the limits rather than failing.
                            if headerOnly { return (info, [], nil) }
                            try options.check(width: Int(info.xsize), height: Int(info.ysize))
                        case JXL_DEC_COLOR_ENCODING:
                            // The space the pixels come out in, as ICC (libjxl writes one for an
                            // encoded colour space too); a profile over the limit is not read.
                            var size = 0
                            var profile: ColorProfile?
                            let target = JXL_COLOR_PROFILE_TARGET_DATA
                            if JxlDecoderGetICCProfileSize(decoder, nil, target, &size) == JXL_DEC_SUCCESS, size > 0, size <= options.maxColorProfileSize {
                                var bytes = [UInt8](repeating: 0, count: size)
                                if JxlDecoderGetColorAsICCProfile(decoder, nil, target, &bytes, size) == JXL_DEC_SUCCESS {
                                    profile = ColorProfile(iccData: Data(bytes))
                                }
                            }
                            let decided = DecodeColor(
                                stated: profile, pixels: info.num_color_channels == 1 ? .gray : .rgb, bitsPerSample: Int(info.bits_per_sample), options: options
                            )
                            wide = info.bits_per_sample > 8 && decided.wantsSixteenBits
                            if wide { format.data_type = JXL_TYPE_UINT16 }
                            color = decided
                        case JXL_DEC_FRAME:
                            var header = JxlFrameHeader()
                            guard JxlDecoderGetFrameHeader(decoder, &header) == JXL_DEC_SUCCESS else {
                                throw ImagoError.invalid(.jxl, "unreadable frame header")
                            }
                            let (width, height) = (Int(info.xsize), Int(info.ysize))
                            try options.checkFrames(frames.count + 1, width: width, height: height)
                            // The frames so far, this one's output (twice as large at 16 bits) and its copy.
                            try options.checkMemory(frames.count + (wide ? 3 : 2), width: width, height: height)
                            duration = frameDuration(ticks: header.duration, info: info)
                        case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                            var size = 0
                            let (width, height) = (Int(info.xsize), Int(info.ysize))
                            guard JxlDecoderImageOutBufferSize(decoder, &format, &size) == JXL_DEC_SUCCESS, size == width * height * (wide ? 8 : 4) else {
                                throw ImagoError.invalid(.jxl, "unexpected output size")
                            }
                            output?.deallocate()
                            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
                            output = buffer
                            guard JxlDecoderSetImageOutBuffer(decoder, &format, buffer.baseAddress, size) == JXL_DEC_SUCCESS else {
                                throw ImagoError.invalid(.jxl, "output buffer refused")
                            }
                        case JXL_DEC_FULL_IMAGE:
                            guard let buffer = output, let color else { throw ImagoError.invalid(.jxl, "a frame without output") }
                            let (width, height) = (Int(info.xsize), Int(info.ysize))
                            var pixels: [UInt8]
                            if wide {
                                pixels = try color.apply(rgba16: UnsafeBufferPointer(buffer.bindMemory(to: UInt16.self)), width: width, height: height)
                            } else {
                                pixels = [UInt8](buffer)
                                color.apply(&pixels, width: width, height: height)
                            }
                            frames.append(Image.Frame(pixels: pixels, duration: duration))
                            buffer.deallocate()
                            output = nil
                        case JXL_DEC_SUCCESS:
                            return (info, frames, color)
                        case JXL_DEC_NEED_MORE_INPUT:
                            throw ImagoError.invalid(.jxl, "data cut short")
                        default:
                            throw ImagoError.invalid(.jxl, "undecodable data")
                        }
                    }
                }
            }
            return try result.get()
        }

        /// A frame's duration from its ticks and the animation's ticks per second; zero for stills.
        private static func frameDuration(ticks: UInt32, info: JxlBasicInfo) -> Duration {
            guard info.have_animation != 0, info.animation.tps_numerator > 0 else { return .zero }
            // ticks × denominator × 1000 / numerator ms: the first product fits in 64 bits (both are
            // below 2^32), the second may not, and a day is the longest frame kept anyway.
            let (scaled, overflow) = (UInt64(ticks) * UInt64(info.animation.tps_denominator)).multipliedReportingOverflow(by: 1000)
            let milliseconds = overflow ? UInt64.max : scaled / UInt64(info.animation.tps_numerator)
            return .milliseconds(Int(min(milliseconds, 86_400_000)))
        }
    }
#endif
