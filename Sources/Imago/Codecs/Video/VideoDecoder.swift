import Foundation

/// Decodes one frame of a video through FFmpeg (Debian's libavformat, libavcodec and libswscale,
/// opened on first use): the frame at ``DecodingOptions/videoFrame``'s second, scaled by FFmpeg's
/// scaler straight to the size the plan needs, its sample aspect ratio and display rotation
/// applied, converted from the stream's matrix and range. One decoder per container; none is in
/// ``DecoderRegistry/standard(families:)`` unless ``ImageFormatInfo/Family/video`` is asked for,
/// as imgproxy reads videos only when told to.
public struct VideoDecoder: ImageDecoding {
    public let format: ImageFormat
    let container: VideoContainer

    /// A decoder of `format`'s container (``ImageFormat/mp4``, ``ImageFormat/mov``,
    /// ``ImageFormat/webm``, ``ImageFormat/mkv`` or ``ImageFormat/avi``); nil for any other format.
    public init?(format: ImageFormat) {
        guard let container = VideoContainer.allCases.first(where: { $0.format == format }) else { return nil }
        self.format = format
        self.container = container
    }

    public func canDecode(_ data: Data) -> Bool { VideoContainer.sniff(data) == container }

    #if Video
        /// The frame at its output size, a turned copy, and the frames FFmpeg's decoder holds
        /// (its references and the one decoded), from what the file declares.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            guard let file = try? VideoFile(data, container: container, options: options) else { return DecodeEstimate(width: 0, height: 0, bytes: 0) }
            let info = file.info, shown = Self.shownSize(info, options: options), output = Self.outputSize(shown, options: options)
            if let sequence = options.videoFrame.sequence {
                // Every frame's cell and, for a sprite, the canvas they are drawn on (the most a sequence holds).
                let cell = SequenceGeometry(shown: shown, sequence: sequence).cell
                let size: PixelSize
                switch sequence.layout {
                case .sprite(let columns, let rows): size = PixelSize(width: columns * cell.width, height: rows * cell.height)
                case .animation: size = cell
                }
                var estimate = DecodeEstimate.buffers(sequence.count + 2, width: size.width, height: size.height, options: options)
                estimate.bytes += Self.decoderFrames * Self.frameBytes(info)
                return estimate
            }
            var estimate = DecodeEstimate.buffers(
                info.orientation == .up || !options.appliesOrientation ? 1 : 2, width: output.width, height: output.height, options: options)
            (estimate.width, estimate.height) = (shown.width, shown.height)
            if output != shown { estimate.decodedSize = output }
            estimate.bytes += Self.decoderFrames * Self.frameBytes(info)
            return estimate
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            let file = try VideoFile(data, container: container, options: options)
            if let sequence = options.videoFrame.sequence { return try decodeSequence(file, sequence, options: options) }
            let info = file.info
            let orientation = options.appliesOrientation ? info.orientation : .up
            let shown = Self.shownSize(info, options: options), output = Self.outputSize(shown, options: options)
            let stored = orientation.swapsDimensions ? output.turned : output
            try options.checkMemory(orientation == .up ? 1 : 2, width: output.width, height: output.height)
            let frame = try file.frame(options.videoFrame, size: stored, options: options)
            let upright = orientation.apply(to: frame.pixels, width: stored.width, height: stored.height)
            var metadata = ImageMetadata(
                format: format, originalWidth: shown.width, originalHeight: shown.height, orientationApplied: orientation, hasAlpha: info.hasAlpha,
                bitsPerSample: info.bitsPerSample)
            metadata.video = info
            return Image(width: upright.width, height: upright.height, frames: [Image.Frame(pixels: upright.pixels)], metadata: metadata)
        }
    #else
        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            throw ImagoError(.codecUnavailable("video is not available: Imago was built without its Video trait"), url: nil, stage: .decoding)
        }
    #endif

    /// Frames FFmpeg's decoder may hold at once with one thread: H.264's and HEVC's largest
    /// reference buffer at the frame sizes that matter, and the frame being made.
    static let decoderFrames = 8

    /// The picture as shown (sample aspect and, when applied, rotation), in pixels.
    static func shownSize(_ info: VideoInfo, options: DecodingOptions) -> PixelSize {
        options.appliesOrientation || !info.isTurned ? info.displaySize : info.displaySize.turned
    }

    /// The smallest size with the picture's aspect that covers what the options require, else its own.
    static func outputSize(_ shown: PixelSize, options: DecodingOptions) -> PixelSize {
        guard let target = options.requiredSize(width: shown.width, height: shown.height) else { return shown }
        let scale = max(Double(target.width) / Double(shown.width), Double(target.height) / Double(shown.height))
        return PixelSize(
            width: max(1, min(shown.width, Int((Double(shown.width) * scale).rounded(.up)))),
            height: max(1, min(shown.height, Int((Double(shown.height) * scale).rounded(.up)))))
    }

    /// Bytes of one decoded frame in the stream's own pixel format.
    static func frameBytes(_ info: VideoInfo) -> Int {
        let sample = info.bitsPerSample > 8 ? 2 : 1
        let planes: Double = info.pixelFormat.contains("420") ? 1.5 : info.pixelFormat.contains("422") ? 2 : info.hasAlpha ? 4 : 3
        return Int(Double(info.width * info.height * sample) * planes)
    }
}
