import CJPEGDC
import CTurboJPEG
import Foundation

/// Decodes JPEG with libjpeg-turbo's TurboJPEG API: baseline and progressive, gray, every chroma
/// subsampling, RGB, CMYK/YCCK through its ICC profile (or the default CMYK one);
/// an embedded ICC profile honoured (``DecodingOptions/colorProfileHandling``); EXIF orientation applied; DCT-scaled decode when a target
/// size allows (at 1/8, Imago's own DC-only decoder, several times faster); progressive scans limited
/// (TJFLAG_LIMITSCANS) against the progressive-JPEG DoS.
/// A truncated stream yields what it has, as browsers show it: libjpeg's warning is not an error.
/// Chroma is upsampled by replication (TJFLAG_FASTUPSAMPLE), which is faster and is how the corpus
/// references were made, unless ``DecodingOptions/smoothsChroma`` asks for libjpeg's smooth filter.
public struct JPEGDecoder: ImageDecoding {
    public let format = ImageFormat.jpeg

    /// Makes a JPEG decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        data.starts(with: [0xFF, 0xD8, 0xFF])
    }

    /// What the decode will hold at the scale it will use (the smallest DCT scale that covers
    /// what the options require): the output, a turned copy for EXIF orientation, and the gain
    /// map decoded at the same scale; a progressive file adds libjpeg's coefficient buffers, at
    /// full size whatever the scale, 2 bytes for each sample of each component (rounded up to
    /// whole blocks: a row of them more), except at 1/8 where Imago's DC decoder reads it with a
    /// DC value per block. Should that decoder refuse the file (damaged data), libjpeg-turbo is
    /// used only when what was reserved covers its buffers (``DecodingOptions/reservedBytes``).
    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        let markers = data.withUnsafeBytes { JPEGMarkers($0) }
        let (width, height) = (markers.width, markers.height)
        guard (try? options.check(width: width, height: height)) != nil else { return DecodeEstimate(width: width, height: height, bytes: 0) }
        let orientation = options.appliesOrientation ? markers.orientation : .up
        let factor = Self.scalingFactor(width: width, height: height, orientation: orientation, options: options)
        let scaled = Self.scaled(width, height, by: factor)
        var estimate = DecodeEstimate.buffers(orientation == .up ? 1 : 2, width: scaled.width, height: scaled.height, options: options)
        (estimate.width, estimate.height) = (width, height)
        if scaled.width != width || scaled.height != height { estimate.decodedSize = scaled }
        if factor.num == 1, factor.denom == 8, markers.decodesDCAtEighth {
            estimate.bytes += Self.dcBytes(markers)
        } else {
            estimate.bytes += markers.coefficientBytes
        }
        if options.gainMapHandling == .keep,
            let gainMap = data.withUnsafeBytes({ UltraHDRContainer.locate($0, markers: markers) }), gainMap.width <= width, gainMap.height <= height
        {
            estimate.bytes += gainMap.width * gainMap.height * 4 * 2 * scaled.width * scaled.height / max(1, width * height) + 4096
        }
        return estimate
    }

    /// What Imago's DC decoder holds besides its output: a DC value per block per component and a
    /// row of pixels.
    private static func dcBytes(_ markers: JPEGMarkers) -> Int {
        (markers.width / 8 + 2) * (markers.height / 8 + 2) * 2 * max(1, markers.components) + markers.width * 3
    }

    /// `width × height` at TurboJPEG's scale `factor`, rounded up as it rounds.
    private static func scaled(_ width: Int, _ height: Int, by factor: tjscalingfactor) -> PixelSize {
        PixelSize(
            width: (width * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom),
            height: (height * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom))
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        guard let handle = tjInitDecompress() else { throw ImagoError.invalid(.jpeg, "cannot create a TurboJPEG decompressor") }
        defer { tjDestroy(handle) }
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(ImagoError) in try decode(bytes, handle: handle, options: options) }
        }
        return try result.get()
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, handle: tjhandle, options: DecodingOptions) throws(ImagoError) -> Image {
        guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw ImagoError.invalid(.jpeg, "no data") }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        if tjDecompressHeader3(handle, base, UInt(bytes.count), &width, &height, &subsampling, &colorspace) != 0 {
            // TurboJPEG 2.1 refuses to name unusual subsamplings (4:1:0) here, after filling in the
            // size and colorspace; decompression itself handles them.
            let message = String(cString: tjGetErrorStr2(handle))
            guard message.contains("subsampling type"), width > 0, height > 0 else { throw ImagoError.invalid(.jpeg, message) }
        }
        try options.check(width: Int(width), height: Int(height))
        let markers = JPEGMarkers(bytes)
        let orientation = options.appliesOrientation ? markers.orientation : .up
        let factor = Self.scalingFactor(width: Int(width), height: Int(height), orientation: orientation, options: options)
        let scaled = Self.scaled(Int(width), Int(height), by: factor)
        let (scaledWidth, scaledHeight) = (scaled.width, scaled.height)
        // The output, and a turned copy when the orientation is applied.
        try options.checkMemory(orientation == .up ? 1 : 2, width: scaledWidth, height: scaledHeight)

        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let isGray = colorspace == Int32(TJCS_GRAY.rawValue)
        let color = DecodeColor(
            stated: markers.iccProfile(bytes), pixels: isCMYK ? .cmyk : isGray ? .gray : .rgb, cmykInverted: markers.hasAdobeMarker, options: options)
        let pixelFormat = isCMYK ? TJPF_CMYK : TJPF_RGBA
        // At 1/8 a pixel is a block's DC coefficient: Imago's DC decoder skips the AC coefficients
        // that libjpeg-turbo decodes and throws away. Anything it does not take (RGB-coded or CMYK
        // files, arithmetic coding, damaged data) goes to libjpeg-turbo as before.
        let decodesDCOnly =
            factor.num == 1 && factor.denom == 8
            && (colorspace == Int32(TJCS_YCbCr.rawValue) || isGray)
        var pixels = try makePixelBuffer(count: scaledWidth * scaledHeight * 4) { out in
            if decodesDCOnly, imago_jpeg_decode_dc(base, bytes.count, width, height, out.baseAddress) == IMAGO_JPEG_DC_OK {
                return .success(())
            }
            // libjpeg-turbo holds a progressive file's every coefficient: only within what was reserved.
            let needed = markers.coefficientBytes + scaledWidth * scaledHeight * 4 * (orientation == .up ? 1 : 2)
            if let reserved = options.reservedBytes, markers.isProgressive, needed > reserved {
                let limit =
                    needed > options.maxDecodedBytes ? DecodingLimit.decodedBytes(options.maxDecodedBytes) : .reservedBytes(reserved: reserved, needed: needed)
                return .failure(ImagoError(.imageTooLarge(width: Int(width), height: Int(height), limit: limit), url: nil, stage: .decoding))
            }
            let status = tjDecompress2(
                handle, base, UInt(bytes.count), out.baseAddress, Int32(scaledWidth), 0, Int32(scaledHeight),
                Int32(pixelFormat.rawValue), TJFLAG_LIMITSCANS | (options.smoothsChroma ? 0 : TJFLAG_FASTUPSAMPLE))
            // A warning (a truncated stream, damaged entropy data) still fills every row: accepted,
            // as browsers show such files. A fatal error is refused, even after a warning.
            if status != 0 {
                let message = String(cString: tjGetErrorStr2(handle))
                guard tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue), Self.isWarning(message) else {
                    return .failure(ImagoError.invalid(.jpeg, message))
                }
            }
            return .success(())
        }
        // CMYK goes through its profile (the file's, else the default CMYK one); its inversion is
        // the Adobe marker's (Photoshop stores 255 = no ink); RGB and gray as DecodeColor decided.
        color.apply(&pixels, width: scaledWidth, height: scaledHeight)
        let upright = orientation.apply(to: pixels, width: scaledWidth, height: scaledHeight)
        var metadata = ImageMetadata(format: .jpeg, originalWidth: Int(width), originalHeight: Int(height), orientationApplied: orientation, hasAlpha: false)
        color.record(in: &metadata)
        metadata.bitsPerSample = markers.precision
        if factor.num != factor.denom,
            scaledWidth * Int(factor.denom) != Int(width) * Int(factor.num) || scaledHeight * Int(factor.denom) != Int(height) * Int(factor.num)
        {
            metadata.decodeScale = Double(factor.num) / Double(factor.denom)
        }
        (metadata.exif, metadata.xmp) = options.keptMetadata(exif: markers.exif(bytes), xmp: markers.xmp(bytes), turned: orientation != .up)
        let gainMapLocation = UltraHDRContainer.locate(bytes, markers: markers)
        metadata.sourceGainMap = gainMapLocation?.stored
        var image = Image(width: upright.width, height: upright.height, frames: [Image.Frame(pixels: upright.pixels)], metadata: metadata)
        if options.gainMapHandling == .keep, let location = gainMapLocation {
            image.gainMap = Self.gainMap(
                bytes, at: location, stored: PixelSize(width: Int(width), height: Int(height)), scaled: PixelSize(width: scaledWidth, height: scaledHeight),
                orientation: orientation, options: options)
        }
        return image
    }

    /// The gain map at `location`, decoded at the scale the base was (the smallest DCT scale that
    /// still covers it), turned as the base was; nil (the SDR base alone) when it is larger than the
    /// base, over the decode limits or does not decode. Its colours are values, never converted.
    private static func gainMap(
        _ bytes: UnsafeRawBufferPointer, at location: UltraHDRContainer.GainMapLocation, stored: PixelSize, scaled: PixelSize, orientation: ImageOrientation,
        options: DecodingOptions
    ) -> GainMap? {
        guard location.width <= stored.width, location.height <= stored.height, let base = bytes.baseAddress else { return nil }
        var gainOptions = DecodingOptions()
        gainOptions.maxPixels = options.maxPixels
        gainOptions.maxSide = options.maxSide
        gainOptions.maxDecodedBytes = options.maxDecodedBytes
        gainOptions.appliesOrientation = false
        gainOptions.colorProfileHandling = .keep
        let target = PixelSize(
            width: max(1, (location.width * scaled.width + stored.width - 1) / stored.width),
            height: max(1, (location.height * scaled.height + stored.height - 1) / stored.height))
        if target.width < location.width || target.height < location.height { gainOptions.targetSize = target }
        let data = Data(bytes: base + location.range.lowerBound, count: location.range.count)
        guard let decoded = try? JPEGDecoder().decode(data, options: gainOptions) else { return nil }
        let map = GainMap(width: decoded.width, height: decoded.height, pixels: decoded.pixels, channelCount: location.components, metadata: location.metadata)
        return map.applying(.orient(orientation), base: stored, newBase: scaled)
    }

    /// Whether TurboJPEG's last message is one of libjpeg's warnings (its JWRN_ messages), after
    /// which every row has been written. TurboJPEG's error code alone cannot tell: once a warning
    /// has been issued it reports TJERR_WARNING even when a fatal error followed (an unknown
    /// marker in the scan after "premature end of data segment"), with rows left unwritten.
    static func isWarning(_ message: String) -> Bool {
        [
            "Corrupt JPEG data", "Premature end of JPEG file", "Warning:", "Inconsistent progression sequence",
            "Invalid SOS parameters for sequential JPEG", "Unknown Adobe color transform code", "Application transferred too many scanlines",
        ]
        .contains { message.hasPrefix($0) }
    }

    /// The smallest TurboJPEG scale whose output still covers `target` (given in upright terms).
    private static func scalingFactor(width: Int, height: Int, orientation: ImageOrientation, options: DecodingOptions) -> tjscalingfactor {
        let full = tjscalingfactor(num: 1, denom: 1)
        // The requirement is upright; the stored pixels may be turned.
        let swaps = orientation.swapsDimensions
        guard let target = swaps ? options.requiredSize(width: height, height: width) : options.requiredSize(width: width, height: height) else { return full }
        let (targetWidth, targetHeight) = swaps ? (target.height, target.width) : (target.width, target.height)
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return full }
        var best = full
        var bestArea = width * height
        for factor in UnsafeBufferPointer(start: factors, count: Int(count)) where factor.num <= factor.denom {
            let w = (width * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)
            let h = (height * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)
            if w >= targetWidth, h >= targetHeight, w * h < bestArea {
                best = factor
                bestArea = w * h
            }
        }
        return best
    }

}
