import Foundation

/// Decodes a camera RAW file through LibRaw (Debian's libraw, opened on first use): the preview
/// the camera embedded when it covers the size the plan needs, else the sensor data demosaiced at
/// half size when that covers it, else at full size; developed with the camera's white balance to
/// sRGB and turned upright by the file's orientation. One decoder per format; none is in
/// ``DecoderRegistry/standard(families:)`` unless ``ImageFormatInfo/Family/raw`` is asked for, as
/// imgproxy reads RAW files only when told to (`IMGPROXY_ENABLE_RAW_FORMATS`).
public struct RAWDecoder: ImageDecoding {
    public let format: ImageFormat
    let kind: RAWKind

    /// A decoder of `format` (``ImageFormat/dng``, ``ImageFormat/cr2``, ``ImageFormat/cr3``,
    /// ``ImageFormat/nef``, ``ImageFormat/arw``, ``ImageFormat/orf``, ``ImageFormat/raf``,
    /// ``ImageFormat/rw2``, ``ImageFormat/pef`` or ``ImageFormat/srw``); nil for any other format.
    public init?(format: ImageFormat) {
        guard let kind = RAWKind.allCases.first(where: { $0.format == format }) else { return nil }
        self.format = format
        self.kind = kind
    }

    public func canDecode(_ data: Data) -> Bool { RAWKind.sniff(data) == kind }

    /// How long LibRaw may work on one file when ``DecodingOptions/maxDecodeDuration`` sets no
    /// deadline: LibRaw 0.20 has parsers that loop on a damaged file (`make fuzz` found a CR3 box
    /// that never ends), and its reads check this deadline.
    public static let defaultMaxDuration: Duration = .seconds(60)

    #if RAW
        /// What the chosen picture holds: the preview decoded and turned, or LibRaw's development
        /// (its sensor buffer, working image and result) and the RGBA copy.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            let result = try? RAWFile.open(data, kind: kind, options: options) { file throws(ImagoError) -> DecodeEstimate in
                let shown = Self.shownSize(file.declared, options: options)
                var estimate: DecodeEstimate
                let development = Self.development(file.declared, options: options)
                switch development {
                case .preview:
                    // A JPEG preview decodes at most at its declared size, plus a turned copy.
                    estimate = DecodeEstimate.buffers(2, width: Int(file.declared.preview_width), height: Int(file.declared.preview_height), options: options)
                case .half, .full:
                    let half = development == .half
                    let size = Self.developedSize(file.declared, half: half)
                    estimate = DecodeEstimate.buffers(1, width: size.width, height: size.height, options: options)
                    estimate.bytes += file.developBytes(half: half)
                }
                (estimate.width, estimate.height) = (shown.width, shown.height)
                return estimate
            }
            return result ?? DecodeEstimate(width: 0, height: 0, bytes: 0)
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            try RAWFile.open(data, kind: kind, options: options) { file throws(ImagoError) -> Image in
                let declared = file.declared
                let shown = Self.shownSize(declared, options: options)
                let orientation = options.appliesOrientation ? Self.orientation(declared.flip) : .up
                var development = Self.development(declared, options: options)
                var picture: (pixels: [UInt8], width: Int, height: Int)?
                if development == .preview {
                    picture = try Self.preview(file, orientation: orientation, shown: shown, options: options)
                    if picture == nil { development = Self.developmentWithoutPreview(declared, options: options) }
                }
                let upright: (pixels: [UInt8], width: Int, height: Int)
                if let picture {
                    upright = picture
                } else {
                    upright = try file.develop(half: development == .half, turn: options.appliesOrientation, options: options)
                }
                // The original's sides as stored (before turning), as every decoder gives them.
                var metadata = ImageMetadata(
                    format: format, originalWidth: Int(declared.width), originalHeight: Int(declared.height), orientationApplied: orientation,
                    hasAlpha: false)
                metadata.raw = RAWInfo(declared, format: format, developed: development)
                return Image(width: upright.width, height: upright.height, frames: [Image.Frame(pixels: upright.pixels)], metadata: metadata)
            }
        }

        /// The embedded preview decoded (a JPEG at the smallest scale that covers what is
        /// needed) and turned upright, or nil when it cannot serve.
        private static func preview(
            _ file: RAWFile, orientation: ImageOrientation, shown: PixelSize, options: DecodingOptions
        ) throws(ImagoError) -> (pixels: [UInt8], width: Int, height: Int)? {
            switch try file.preview(options: options) {
            case nil:
                return nil
            case .jpeg(let bytes):
                var jpegOptions = options
                jpegOptions.appliesOrientation = false
                jpegOptions.sizeRequirement = nil
                jpegOptions.scaleDownPixelLimit = nil
                jpegOptions.targetMode = .fill
                jpegOptions.targetSize = options.requiredSize(width: shown.width, height: shown.height).map { orientation.swapsDimensions ? $0.turned : $0 }
                guard JPEGDecoder().canDecode(bytes), let decoded = try? JPEGDecoder().decode(bytes, options: jpegOptions) else { return nil }
                return orientation.apply(to: decoded.pixels, width: decoded.width, height: decoded.height)
            case .bitmap(let pixels, let width, let height):
                return orientation.apply(to: pixels, width: width, height: height)
            }
        }
    #else
        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            throw ImagoError(.codecUnavailable("camera RAW is not available: Imago was built without its RAW trait"), url: nil, stage: .decoding)
        }
    #endif
}

#if RAW
    import CRaw

    extension RAWDecoder {
        /// The picture's size as shown: turned by the file's flip when orientation is applied.
        static func shownSize(_ declared: imago_raw_info, options: DecodingOptions) -> PixelSize {
            let size = PixelSize(width: Int(declared.width), height: Int(declared.height))
            return options.appliesOrientation && orientation(declared.flip).swapsDimensions ? size.turned : size
        }

        /// LibRaw's flip as an EXIF orientation.
        static func orientation(_ flip: Int32) -> ImageOrientation {
            switch flip {
            case 3: .down
            case 5: .left
            case 6: .right
            default: .up
            }
        }

        /// The size LibRaw develops at: a mosaic's half size halves each side, rounding up.
        static func developedSize(_ declared: imago_raw_info, half: Bool) -> PixelSize {
            let shrink = half ? 1 : 0
            return PixelSize(width: (Int(declared.width) + shrink) >> shrink, height: (Int(declared.height) + shrink) >> shrink)
        }

        /// Which picture serves: the preview when it covers what is needed (or the caller asks
        /// for embedded thumbnails) and shows the whole picture, else the cheapest development
        /// that covers it.
        static func development(_ declared: imago_raw_info, options: DecodingOptions) -> RAWInfo.Development {
            let shown = shownSize(declared, options: options)
            let required = options.requiredSize(width: shown.width, height: shown.height)
            if declared.has_preview != 0, declared.preview_width > 0, declared.preview_height > 0 {
                // Declared as stored: turned like the picture.
                var preview = PixelSize(width: Int(declared.preview_width), height: Int(declared.preview_height))
                if options.appliesOrientation && orientation(declared.flip).swapsDimensions { preview = preview.turned }
                let sameShape = abs(Double(preview.width) / Double(preview.height) - Double(shown.width) / Double(shown.height)) < 0.02
                let covers = required.map { preview.width >= $0.width && preview.height >= $0.height } ?? false
                if sameShape && (covers || options.usesEmbeddedThumbnail) { return .preview }
            }
            return developmentWithoutPreview(declared, options: options)
        }

        /// Half size when it covers what is needed, else full.
        static func developmentWithoutPreview(_ declared: imago_raw_info, options: DecodingOptions) -> RAWInfo.Development {
            let shown = shownSize(declared, options: options)
            guard let required = options.requiredSize(width: shown.width, height: shown.height) else { return .full }
            var half = developedSize(declared, half: true)
            if options.appliesOrientation && orientation(declared.flip).swapsDimensions { half = half.turned }
            return half.width >= required.width && half.height >= required.height ? .half : .full
        }
    }

    extension RAWInfo {
        /// What LibRaw read, in Imago's terms.
        init(_ declared: imago_raw_info, format: ImageFormat, developed: Development) {
            func text<T>(_ field: T) -> String {
                withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            }
            func known(_ value: Float) -> Double? { value > 0 && value.isFinite ? Double(value) : nil }
            self.init(
                format: format, make: text(declared.make), model: text(declared.model), sensorWidth: Int(declared.raw_width),
                sensorHeight: Int(declared.raw_height),
                previewWidth: declared.has_preview != 0 && declared.preview_width > 0 ? Int(declared.preview_width) : nil,
                previewHeight: declared.has_preview != 0 && declared.preview_height > 0 ? Int(declared.preview_height) : nil, iso: known(declared.iso),
                exposureTime: known(declared.shutter), aperture: known(declared.aperture), focalLength: known(declared.focal_length),
                date: declared.timestamp > 0 ? Date(timeIntervalSince1970: TimeInterval(declared.timestamp)) : nil, developed: developed)
        }
    }
#endif
