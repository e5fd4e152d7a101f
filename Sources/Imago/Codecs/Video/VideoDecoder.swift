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
            // The decode that follows on these bytes takes the opened file instead of probing again.
            defer { VideoFileHandover.park(file, for: data, container: container, options: options) }
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
            let file: VideoFile
            if let opened = VideoFileHandover.take(for: data, container: container, options: options) {
                opened.restartDeadline(options)
                file = opened
            } else {
                file = try VideoFile(data, container: container, options: options)
            }
            if let sequence = options.videoFrame.sequence { return try decodeSequence(file, sequence, options: options) }
            let info = file.info
            let orientation = options.appliesOrientation ? info.orientation : .up
            let shown = Self.shownSize(info, options: options), output = Self.outputSize(shown, options: options)
            let stored = orientation.swapsDimensions ? output.turned : output
            try options.checkMemory(orientation == .up ? 1 : 2, width: output.width, height: output.height)
            var selection = options.videoFrame
            if selection.representative { selection = try Self.representative(file, selection: selection, shown: shown) }
            let frame = try file.frame(selection, size: stored, options: options)
            let upright = orientation.apply(to: frame.pixels, width: stored.width, height: stored.height)
            // The original's sides as stored (before turning), as every decoder gives them.
            let original = orientation.swapsDimensions ? shown.turned : shown
            var metadata = ImageMetadata(
                format: format, originalWidth: original.width, originalHeight: original.height, orientationApplied: orientation, hasAlpha: info.hasAlpha,
                bitsPerSample: info.bitsPerSample)
            metadata.video = info
            file.color(options).record(in: &metadata)
            return Image(width: upright.width, height: upright.height, frames: [Image.Frame(pixels: upright.pixels)], metadata: metadata)
        }
    #else
        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            throw ImagoError(.codecUnavailable("video is not available: Imago was built without its Video trait"), url: nil, stage: .decoding)
        }
    #endif

    #if Video
        /// The keyframe ``VideoFrameSelection/representative`` chooses, as a selection of it.
        static func representative(_ file: VideoFile, selection: VideoFrameSelection, shown: PixelSize) throws(ImagoError) -> VideoFrameSelection {
            guard let duration = file.info.duration, duration > 0 else { return selection }
            let span = min(duration, 300), candidates = 8
            let small = PixelSize(width: 64, height: max(1, 64 * shown.height / max(1, shown.width)))
            let stored = file.info.orientation.swapsDimensions ? small.turned : small
            var best: (score: Double, second: Double)?
            for index in 0..<candidates {
                let probe = VideoFrameSelection(
                    second: span * (Double(index) + 0.5) / Double(candidates), keyframesOnly: true, maxPackets: selection.maxPackets)
                guard let frame = try? file.frame(probe, size: stored, options: DecodingOptions()) else { continue }
                let score = interest(frame.pixels)
                if best == nil || score > best!.score { best = (score, frame.second) }
            }
            guard let best else { return selection }
            return VideoFrameSelection(second: best.second, keyframesOnly: true, maxPackets: selection.maxPackets)
        }

        /// How much a small frame shows: its luma's standard deviation, 0 when it is mostly black or white.
        static func interest(_ pixels: [UInt8]) -> Double {
            var sum = 0.0, squares = 0.0, count = 0.0
            for index in stride(from: 0, to: pixels.count - 3, by: 4) {
                let luma = (2 * Double(pixels[index]) + 5 * Double(pixels[index + 1]) + Double(pixels[index + 2])) / 8
                sum += luma
                squares += luma * luma
                count += 1
            }
            guard count > 0 else { return 0 }
            let mean = sum / count
            guard mean >= 24, mean <= 232 else { return 0 }
            return (max(0, squares / count - mean * mean)).squareRoot()
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
