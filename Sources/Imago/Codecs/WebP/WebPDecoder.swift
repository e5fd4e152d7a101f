import CWebP
import Foundation

/// Decodes WebP with libwebp: lossy, lossless, alpha, scaled decode for stills, and animations
/// (every frame composited on the canvas by `WebPAnimDecoder`, with durations and loop count); the
/// `ICCP` profile honoured.
public struct WebPDecoder: ImageDecoding {
    public let format = ImageFormat.webp

    /// Makes a WebP decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        data.count >= 12 && data.starts(with: Array("RIFF".utf8)) && data.dropFirst(8).starts(with: Array("WEBP".utf8))
    }

    /// A still: its output. An animation: libwebp's two canvases and a copy of every frame.
    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        data.withUnsafeBytes { bytes -> DecodeEstimate in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return DecodeEstimate(width: 0, height: 0, bytes: 0) }
            var features = WebPBitstreamFeatures()
            guard WebPGetFeatures(base, bytes.count, &features) == VP8_STATUS_OK else { return DecodeEstimate(width: 0, height: 0, bytes: 0) }
            let width = Int(features.width), height = Int(features.height)
            guard features.has_animation != 0 else {
                // libwebp decodes lossy rows into a few rows of cache and scales them as they come;
                // a lossless image, and an alpha plane, are decoded whole at full size first.
                let output = Self.outputSize(width: width, height: height, options: options)
                var estimate = DecodeEstimate.buffers(1, width: output.width, height: output.height, options: options)
                guard estimate.bytes > 0 else { return DecodeEstimate(width: width, height: height, bytes: 0) }
                (estimate.width, estimate.height) = (width, height)
                if output.width != width || output.height != height { estimate.decodedSize = output }
                estimate.bytes += features.format == 2 ? width * height * 4 : width * 64
                if features.has_alpha != 0 { estimate.bytes += width * height }
                return estimate
            }
            var data = WebPData(bytes: base, size: bytes.count)
            guard let demux = WebPDemux(&data) else { return DecodeEstimate(width: width, height: height, bytes: 0) }
            defer { WebPDemuxDelete(demux) }
            let frames = Int(WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT))
            return .buffers(frames + 2, width: width, height: height, options: options)
        }
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(ImagoError) in try decode(bytes, options: options) }
        }
        return try result.get()
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImagoError) -> Image {
        guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { throw ImagoError.invalid(.webp, "no data") }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw ImagoError.invalid(.webp, "cannot read the header (status \(status.rawValue))") }
        try options.check(width: Int(features.width), height: Int(features.height))
        if features.has_animation != 0 {
            // WebPAnimDecoderNew allocates its two canvases at once: check them first.
            try options.checkMemory(2, width: Int(features.width), height: Int(features.height))
            return try decodeAnimation(base, count: bytes.count, options: options)
        }

        let width = Int(features.width), height = Int(features.height)
        let output = Self.outputSize(width: width, height: height, options: options)
        let (outWidth, outHeight) = (output.width, output.height)
        try options.checkMemory(1, width: outWidth, height: outHeight)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw ImagoError.invalid(.webp, "libwebp version mismatch") }
        if (outWidth, outHeight) != (width, height) {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(outWidth)
            config.options.scaled_height = Int32(outHeight)
        }
        let color = DecodeColor(stated: Self.iccProfile(base, count: bytes.count), pixels: .rgb, options: options)
        var pixels = try makePixelBuffer(count: outWidth * outHeight * 4) { out in
            config.output.colorspace = MODE_RGBA
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = out.baseAddress
            config.output.u.RGBA.stride = Int32(outWidth * 4)
            config.output.u.RGBA.size = out.count
            defer { WebPFreeDecBuffer(&config.output) }
            let decoded = WebPDecode(base, bytes.count, &config)
            return decoded == VP8_STATUS_OK ? .success(()) : .failure(ImagoError.invalid(.webp, "decoding failed (status \(decoded.rawValue))"))
        }
        color.apply(&pixels, width: outWidth, height: outHeight)
        var metadata = ImageMetadata(format: .webp, originalWidth: width, originalHeight: height, hasAlpha: features.has_alpha != 0)
        color.record(in: &metadata)
        metadata.bitsPerSample = 8
        Self.keepMetadata(base, count: bytes.count, options: options, in: &metadata)
        return Image(width: outWidth, height: outHeight, frames: [Image.Frame(pixels: pixels)], metadata: metadata)
    }

    /// The size a still image is decoded at: the smallest with its aspect ratio that still covers
    /// what the options require, else its own.
    private static func outputSize(width: Int, height: Int, options: DecodingOptions) -> PixelSize {
        guard let target = options.requiredSize(width: width, height: height) else { return PixelSize(width: width, height: height) }
        let scale = max(Double(target.width) / Double(width), Double(target.height) / Double(height))
        return PixelSize(
            width: max(1, min(width, Int((Double(width) * scale).rounded(.up)))), height: max(1, min(height, Int((Double(height) * scale).rounded(.up)))))
    }

    /// The `ICCP` chunk of an extended (VP8X) file.
    static func iccProfile(_ base: UnsafePointer<UInt8>, count: Int) -> ColorProfile? {
        chunk("ICCP", base, count: count).flatMap(ColorProfile.init(iccData:))
    }

    /// The `EXIF` and `XMP ` chunks, kept as the options say.
    private static func keepMetadata(_ base: UnsafePointer<UInt8>, count: Int, options: DecodingOptions, in metadata: inout ImageMetadata) {
        guard options.metadataHandling != .strip else { return }
        (metadata.exif, metadata.xmp) = options.keptMetadata(exif: chunk("EXIF", base, count: count), xmp: chunk("XMP ", base, count: count), turned: false)
    }

    /// A chunk of an extended file, through libwebp's demuxer; a simple (VP8 or VP8L) file has
    /// none, so it is not demuxed.
    private static func chunk(_ fourCC: String, _ base: UnsafePointer<UInt8>, count: Int) -> Data? {
        guard count >= 16, UnsafeBufferPointer(start: base + 12, count: 4).elementsEqual("VP8X".utf8) else { return nil }
        var data = WebPData(bytes: base, size: count)
        // Partial, so a preview of the bytes so far finds the chunks before the image data.
        var state = WEBP_DEMUX_PARSING_HEADER
        guard let demux = WebPDemuxPartial(&data, &state) else { return nil }
        defer { WebPDemuxDelete(demux) }
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demux, fourCC, 1, &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let bytes = iterator.chunk.bytes, iterator.chunk.size > 0 else { return nil }
        return Data(bytes: bytes, count: iterator.chunk.size)
    }

    /// The rows of a still WebP decodable from the bytes so far (the rest transparent), for previews,
    /// through libwebp's incremental decoder; nil when the header is incomplete or over the limits.
    /// A still WebP's rows decodable from the bytes so far (the rest transparent); `reached` counts rows.
    public func preview(of data: Data, after shown: Int, options: DecodingOptions) -> PartialImage? {
        partialImage(data, options: options).flatMap { $0.reached > shown ? $0 : nil }
    }

    func partialImage(_ data: Data, options: DecodingOptions) -> PartialImage? {
        data.withUnsafeBytes { bytes -> PartialImage? in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var features = WebPBitstreamFeatures()
            guard WebPGetFeatures(base, bytes.count, &features) == VP8_STATUS_OK, features.has_animation == 0,
                (try? options.check(width: Int(features.width), height: Int(features.height))) != nil,
                let decoder = WebPINewRGB(MODE_RGBA, nil, 0, 0)
            else { return nil }
            defer { WebPIDelete(decoder) }
            let status = WebPIUpdate(decoder, base, bytes.count)
            guard status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED else { return nil }
            var lastRow: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
            guard let rgba = WebPIDecGetRGB(decoder, &lastRow, &width, &height, &stride), lastRow > 0 else { return nil }
            var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 4)
            for row in 0..<Int(lastRow) {
                pixels.withUnsafeMutableBytes { out in
                    (out.baseAddress! + row * Int(width) * 4).copyMemory(from: rgba + row * Int(stride), byteCount: Int(width) * 4)
                }
            }
            // In the colour the whole image will have: an ICCP chunk comes before the image data.
            let color = DecodeColor(stated: Self.iccProfile(base, count: bytes.count), pixels: .rgb, options: options)
            color.apply(&pixels, width: Int(width), height: Int(height))
            var metadata = ImageMetadata(format: .webp, originalWidth: Int(width), originalHeight: Int(height), hasAlpha: true)
            color.record(in: &metadata)
            return PartialImage(
                image: Image(width: Int(width), height: Int(height), frames: [Image.Frame(pixels: pixels)], metadata: metadata), reached: Int(lastRow))
        }
    }

    private func decodeAnimation(_ base: UnsafePointer<UInt8>, count: Int, options: DecodingOptions) throws(ImagoError) -> Image {
        var data = WebPData(bytes: base, size: count)
        var animationOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&animationOptions) != 0 else { throw ImagoError.invalid(.webp, "libwebp version mismatch") }
        animationOptions.color_mode = MODE_RGBA
        guard let decoder = WebPAnimDecoderNew(&data, &animationOptions) else { throw ImagoError.invalid(.webp, "cannot read the animation") }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw ImagoError.invalid(.webp, "cannot read the animation") }
        let width = Int(info.canvas_width), height = Int(info.canvas_height)
        try options.check(width: width, height: height)
        let frameCount = Int(info.frame_count)
        try options.checkFrames(frameCount, width: width, height: height)
        // WebPAnimDecoder keeps a canvas and the previous one; Imago keeps a copy of every frame.
        try options.checkMemory(frameCount + 2, width: width, height: height)
        var frames: [Image.Frame] = []
        var previous: Int32 = 0
        while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
            var buffer: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard frames.count < frameCount, WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
                throw ImagoError.invalid(.webp, "frame \(frames.count + 1) is corrupt")
            }
            let pixels = [UInt8](UnsafeBufferPointer(start: buffer, count: width * height * 4))
            frames.append(Image.Frame(pixels: pixels, duration: .milliseconds(Self.duration(from: previous, to: timestamp))))
            previous = timestamp
        }
        guard !frames.isEmpty else { throw ImagoError.invalid(.webp, "animation without frames") }
        let hasAlpha = frames.contains { $0.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element != 255 } }
        let color = DecodeColor(stated: Self.iccProfile(base, count: count), pixels: .rgb, options: options)
        for index in frames.indices { color.apply(&frames[index].pixels, width: width, height: height) }
        var metadata = ImageMetadata(format: .webp, originalWidth: width, originalHeight: height, hasAlpha: hasAlpha)
        color.record(in: &metadata)
        metadata.bitsPerSample = 8
        Self.keepMetadata(base, count: count, options: options, in: &metadata)
        return Image(width: width, height: height, frames: frames, loopCount: Int(info.loop_count), metadata: metadata)
    }

    /// A frame's duration from libwebp's running timestamps. Each frame's duration is a 24-bit
    /// field, but their running sum is a C `int` that wraps after 2^31 ms (about 25 days of
    /// animation); the difference taken modulo 2^32 is the frame's own duration either way.
    static func duration(from previous: Int32, to timestamp: Int32) -> Int {
        min(Int(UInt32(bitPattern: timestamp &- previous)), 0xFF_FFFF)
    }

}
