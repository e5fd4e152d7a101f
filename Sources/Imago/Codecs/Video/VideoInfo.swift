import Foundation

/// What a video file declares: what `imago info` and the server's `/info` report of a video source
/// (imgproxy Pro's video fields), in ``ImageMetadata/video``.
public struct VideoInfo: Sendable, Hashable, Encodable {
    /// The container (``ImageFormat/mp4``, ``ImageFormat/webm``, …).
    public var format: ImageFormat
    /// The video stream's coded width in pixels, before its sample aspect ratio and rotation.
    public var width: Int
    /// Its coded height in pixels.
    public var height: Int
    /// Its sample aspect ratio as `numerator:denominator` (1:1 for square pixels).
    public var sampleAspectRatio: String
    /// Clockwise degrees the picture is shown turned by (0, 90, 180 or 270), from the display matrix.
    public var rotation: Int
    /// Seconds, nil when the file does not say.
    public var duration: Double?
    /// Frames a second, nil when unknown.
    public var frameRate: Double?
    /// Frames the stream declares, nil when it does not.
    public var frameCount: Int?
    /// Bits a second of the whole file, nil when unknown.
    public var bitRate: Int?
    /// The video codec, by FFmpeg's name (`h264`, `hevc`, `vp9`, `av1`).
    public var codec: String
    /// The pixel format, by FFmpeg's name (`yuv420p`, `yuv420p10le`).
    public var pixelFormat: String
    /// Bits per sample of the video.
    public var bitsPerSample: Int
    /// Whether its frames carry alpha (a pixel format with an alpha plane).
    public var hasAlpha: Bool
    /// The colour primaries, transfer and matrix, by their ITU-T H.273 numbers (1 is BT.709, 9 and
    /// 16 BT.2020 and PQ, 2 unspecified).
    public var colorPrimaries: Int
    /// The transfer characteristics (H.273).
    public var colorTransfer: Int
    /// The matrix coefficients (H.273).
    public var colorMatrix: Int
    /// Whether samples use the full range rather than the studio (16–235) one.
    public var fullRange: Bool
    /// Streams in the file, of every kind.
    public var streamCount: Int
    /// The first audio stream's codec, nil when there is no audio.
    public var audioCodec: String?
    /// Mean seconds between the video stream's keyframes as the file's index lists them (MP4's
    /// sync samples, Matroska's cues); nil when the index does not say.
    public var keyframeInterval: Double?

    /// Whether the picture is shown turned by a quarter, so its sides swap.
    var isTurned: Bool { rotation == 90 || rotation == 270 }

    /// The picture's size as shown: the sample aspect ratio applied to the width, then the rotation.
    public var displaySize: PixelSize {
        let (numerator, denominator) = aspect
        let width = max(1, Int((Double(self.width) * Double(numerator) / Double(denominator)).rounded()))
        let size = PixelSize(width: width, height: height)
        return isTurned ? size.turned : size
    }

    /// The orientation that turns a decoded frame upright.
    var orientation: ImageOrientation {
        switch rotation {
        case 90: .right
        case 180: .down
        case 270: .left
        default: .up
        }
    }

    private var aspect: (Int, Int) {
        let parts = sampleAspectRatio.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0, parts[0] <= 100 * parts[1], parts[1] <= 100 * parts[0] else { return (1, 1) }
        return (parts[0], parts[1])
    }

    private enum CodingKeys: String, CodingKey {
        case format, width, height, displayWidth, displayHeight, sampleAspectRatio, rotation, duration, frameRate, frameCount, bitRate, codec,
            pixelFormat, bitsPerSample, hasAlpha, colorPrimaries, colorTransfer, colorMatrix, fullRange, streamCount, audioCodec, keyframeInterval
    }

    /// Writes every field, the format by its name, and the size as shown (``displaySize``).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format.rawValue, forKey: .format)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(displaySize.width, forKey: .displayWidth)
        try container.encode(displaySize.height, forKey: .displayHeight)
        try container.encode(sampleAspectRatio, forKey: .sampleAspectRatio)
        try container.encode(rotation, forKey: .rotation)
        try container.encodeIfPresent(duration, forKey: .duration)
        try container.encodeIfPresent(frameRate, forKey: .frameRate)
        try container.encodeIfPresent(frameCount, forKey: .frameCount)
        try container.encodeIfPresent(bitRate, forKey: .bitRate)
        try container.encode(codec, forKey: .codec)
        try container.encode(pixelFormat, forKey: .pixelFormat)
        try container.encode(bitsPerSample, forKey: .bitsPerSample)
        try container.encode(hasAlpha, forKey: .hasAlpha)
        try container.encode(colorPrimaries, forKey: .colorPrimaries)
        try container.encode(colorTransfer, forKey: .colorTransfer)
        try container.encode(colorMatrix, forKey: .colorMatrix)
        try container.encode(fullRange, forKey: .fullRange)
        try container.encode(streamCount, forKey: .streamCount)
        try container.encodeIfPresent(audioCodec, forKey: .audioCodec)
        try container.encodeIfPresent(keyframeInterval, forKey: .keyframeInterval)
    }

    /// One line for people: `H.264 320×240, 4.00 s at 25 fps, turned 90°, audio aac`.
    public var summary: String {
        var parts = ["\(codec) \(width)×\(height)"]
        if let duration { parts.append(String(format: "%.2f s", duration) + (frameRate.map { String(format: " at %.4g fps", $0) } ?? "")) }
        if rotation != 0 { parts.append("turned \(rotation)°") }
        if sampleAspectRatio != "1:1" { parts.append("pixels \(sampleAspectRatio)") }
        parts.append(audioCodec.map { "audio \($0)" } ?? "no audio")
        return parts.joined(separator: ", ")
    }
}
