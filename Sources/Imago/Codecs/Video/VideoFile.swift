#if Video
    import CVideo
    import Foundation

    /// One video opened through FFmpeg (Sources/CVideo) over bytes in memory: what it declares,
    /// and its frames. Not shared between threads; closed when released.
    final class VideoFile {
        private let video: OpaquePointer
        private let reader: Reader
        /// What the file declares.
        let info: VideoInfo

        /// Bytes FFmpeg reads through the C read function, in memory or by range requests
        /// (``DecodingOptions/rangedSource``, then `data` is the first of them); held by the file.
        private final class Reader {
            let data: Data
            let ranged: RangedSource?
            /// When a range read stops waiting: the decode's deadline.
            var deadline: ContinuousClock.Instant?
            init(_ data: Data, ranged: RangedSource?, options: DecodingOptions) {
                self.data = data
                self.ranged = ranged
                deadline = options.maxDecodeDuration.map { .now + $0 }
            }
            var length: Int64 { ranged?.length ?? Int64(data.count) }
        }

        /// Opens `data` as `container`, within `options`' pixel limit and decode time, or throws.
        init(_ data: Data, container: VideoContainer, options: DecodingOptions) throws(ImagoError) {
            try CodecLibrary.avformat.load()
            try CodecLibrary.swscale.load()
            let reader = Reader(data, ranged: options.rangedSource, options: options)
            self.reader = reader
            var limits = imago_video_limits()
            limits.size = reader.length
            limits.max_pixels = Int64(options.maxPixels)
            limits.max_packets = Int64(options.videoFrame.maxPackets)
            limits.probe_size = Int64(options.videoProbeBytes ?? 0)
            limits.max_analyze_duration = options.videoMaxAnalyzeDuration.map { Int64($0 / .microseconds(1)) } ?? 0
            limits.deadline_ns = CLibraryCall.deadline(after: options.maxDecodeDuration)
            var opened: OpaquePointer?
            var message = [CChar](repeating: 0, count: 256)
            let status = container.demuxer.withCString { demuxer in
                limits.demuxer = demuxer
                return imago_video_open(&opened, Self.read, Unmanaged.passUnretained(reader).toOpaque(), &limits, &message, message.count)
            }
            guard status == 0, let opened else { throw Self.error(status, message, format: container.format, reader: reader) }
            video = opened
            var described = imago_video_info()
            imago_video_describe(opened, &described)
            info = VideoInfo(described, format: container.format)
            try options.check(width: info.width, height: info.height)
        }

        deinit { imago_video_close(video) }

        /// Gives FFmpeg `options`' deadline from now: a file the estimate opened, used by the decode.
        func restartDeadline(_ options: DecodingOptions) {
            imago_video_set_deadline(video, CLibraryCall.deadline(after: options.maxDecodeDuration))
            reader.deadline = options.maxDecodeDuration.map { .now + $0 }
        }

        /// The frame shown at `selection`'s second (or its keyframe), scaled to `size` RGBA, and
        /// the second it is shown at.
        func frame(_ selection: VideoFrameSelection, size: PixelSize, options: DecodingOptions) throws(ImagoError) -> (pixels: [UInt8], second: Double) {
            var second = 0.0
            var message = [CChar](repeating: 0, count: 256)
            var status: Int32 = 0
            var pixels = try makePixelBuffer(count: size.width * size.height * 4) { out in
                status = imago_video_frame(
                    video, selection.second, selection.keyframesOnly ? 1 : 0, out.baseAddress, Int32(size.width), Int32(size.height),
                    Int32(size.width * 4), &second, &message, message.count)
                return status == 0 ? .success(()) : .failure(Self.error(status, message, format: info.format, reader: reader))
            }
            color(options).apply(&pixels, width: size.width, height: size.height)
            return (pixels, second)
        }

        /// What is done with the frames' colour: a wide gamut (BT.2020, P3) or an HDR transfer (PQ,
        /// HLG) converted to sRGB by Little CMS through the profile its code points describe, PQ and
        /// HLG tone-mapped as the still decoders map AVIF's and HEIC's; BT.709 and BT.601 frames
        /// are shown as sRGB, as browsers show them.
        func color(_ options: DecodingOptions) -> DecodeColor {
            let wide = [9, 11, 12].contains(info.colorPrimaries) || [16, 18].contains(info.colorTransfer)
            let stated = wide ? ColorProfile.cicp(primaries: info.colorPrimaries, transfer: info.colorTransfer) : nil
            return DecodeColor(stated: stated, pixels: .rgb, options: options)
        }

        /// The C read function: bytes of the reader's data at an offset.
        private static let read: imago_video_read_function = { context, buffer, size, offset in
            guard let context, let buffer, size > 0, offset >= 0 else { return -1 }
            let reader = Unmanaged<Reader>.fromOpaque(context).takeUnretainedValue()
            if let ranged = reader.ranged {
                return ranged.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)), at: offset, until: reader.deadline).map(Int32.init)
                    ?? -1
            }
            let data = reader.data
            guard offset < Int64(data.count) else { return 0 }
            let start = data.startIndex + Int(offset)
            let count = min(Int(size), data.endIndex - start)
            data.copyBytes(to: buffer, from: start..<(start + count))
            return Int32(count)
        }

        private static func error(_ status: Int32, _ message: [CChar], format: ImageFormat, reader: Reader) -> ImagoError {
            // A range the file needed could not be had: that is why FFmpeg failed.
            if let failure = reader.ranged?.failure { return failure }
            let text = CLibraryCall.message(message)
            switch Int(status) {
            case Int(IMAGO_VIDEO_TIMED_OUT):
                return ImagoError(.timedOut, url: nil, stage: .decoding)
            default:
                return ImagoError.invalid(format, text.isEmpty ? "FFmpeg failed (\(status))" : text)
            }
        }
    }
#endif

#if Video
    import CVideo

    extension VideoInfo {
        /// What FFmpeg read, in Imago's terms.
        init(_ info: imago_video_info, format: ImageFormat) {
            func text<T>(_ field: T) -> String {
                withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            }
            let audio = text(info.audio_codec)
            self.init(
                format: format, width: Int(info.width), height: Int(info.height),
                sampleAspectRatio: "\(info.sample_aspect_numerator):\(info.sample_aspect_denominator)", rotation: Int(info.rotation),
                duration: info.duration >= 0 ? info.duration : nil, frameRate: info.frame_rate > 0 ? info.frame_rate : nil,
                frameCount: info.frame_count > 0 ? Int(info.frame_count) : nil, bitRate: info.bit_rate > 0 ? Int(info.bit_rate) : nil,
                codec: text(info.codec), pixelFormat: text(info.pixel_format), bitsPerSample: Int(info.bits_per_sample), hasAlpha: info.has_alpha != 0,
                colorPrimaries: Int(info.color_primaries), colorTransfer: Int(info.color_transfer), colorMatrix: Int(info.color_space),
                fullRange: info.color_range == 2, streamCount: Int(info.stream_count), audioCodec: audio.isEmpty ? nil : audio)
            keyframeInterval = info.keyframe_interval > 0 && info.keyframe_interval.isFinite ? info.keyframe_interval : nil
        }
    }
#endif
