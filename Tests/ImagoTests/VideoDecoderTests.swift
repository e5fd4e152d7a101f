#if Video
    import Foundation
    @testable import Imago
    import Testing

    /// Videos made here by Debian's ffmpeg (its `testsrc2` pattern, whose moving parts and frame
    /// counter make every frame different) in each container and codec Debian's FFmpeg writes,
    /// decoded by Imago and compared with `ffmpeg -ss N -i file -frames:v 1` at the same size.
    @Suite("Video decoder")
    struct VideoDecoderTests {
        static let ffmpeg = "/usr/bin/ffmpeg"
        static let videoFamilies: Set<ImageFormatInfo.Family> = [.still, .video]
        /// The scaler flags Imago gives swscale, given to ffmpeg's too, so the two convert alike.
        static let swsFlags = "bicubic+accurate_rnd+full_chroma_int"

        /// (file name, ffmpeg output options, the format Imago should tell).
        static let kinds: [(String, [String], ImageFormat)] = [
            ("h264.mp4", ["-c:v", "libx264", "-g", "50", "-pix_fmt", "yuv420p"], .mp4),
            ("h264.mov", ["-c:v", "libx264", "-g", "50", "-pix_fmt", "yuv420p", "-f", "mov"], .mov),
            ("hevc.mkv", ["-c:v", "libx265", "-g", "50", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p"], .mkv),
            ("vp9.webm", ["-c:v", "libvpx-vp9", "-g", "50", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "400k"], .webm),
            ("vp8.webm", ["-c:v", "libvpx", "-g", "50", "-deadline", "realtime", "-b:v", "400k"], .webm),
            ("av1.mp4", ["-c:v", "libaom-av1", "-g", "50", "-cpu-used", "8", "-b:v", "300k", "-row-mt", "1"], .mp4),
            ("mpeg4.avi", ["-c:v", "mpeg4", "-g", "50", "-q:v", "3"], .avi),
        ]

        /// A 4-second 320×240 25 fps clip (keyframes every 2 s) encoded with `options`.
        static func make(_ name: String, _ options: [String], in directory: URL, size: String = "320x240", filter: [String] = []) async throws -> URL {
            let file = directory.appendingPathComponent(name)
            try await runTool(
                ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25:duration=4"] + filter + options + [file.path])
            return file
        }

        /// FFmpeg's own frame at `second` (input seeking, as its documentation shows), through
        /// `filter` when given (``scaled(_:)``), as PNG, decoded.
        static func reference(_ file: URL, second: Double, extra: [String] = [], filter: String? = nil, in directory: URL) async throws -> Image {
            let png = directory.appendingPathComponent("reference-\(UUID().uuidString).png")
            let scaling = filter.map { ["-vf", $0] } ?? ["-sws_flags", swsFlags]
            try await runTool(ffmpeg, ["-v", "error", "-y"] + extra + ["-ss", "\(second)", "-i", file.path, "-frames:v", "1"] + scaling + [png.path])
            return try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
        }

        /// FFmpeg's scale filter to `size` (`W:H`, `-1` keeping the shape) with Imago's scaler flags.
        static func scaled(_ size: String) -> String { "scale=\(size):flags=\(swsFlags)" }

        static func frame(_ data: Data, second: Double, keyframesOnly: Bool = false, options base: DecodingOptions = DecodingOptions()) throws -> Image {
            var options = base
            options.videoFrame = VideoFrameSelection(second: second, keyframesOnly: keyframesOnly)
            return try DecoderRegistry.standard(families: videoFamilies).decode(data, options: options)
        }

        @Test("each container and codec: the frame at second N is ffmpeg's, not its neighbour", arguments: kinds.indices)
        func frameAtSecond(index: Int) async throws {
            let (name, options, format) = Self.kinds[index]
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make(name, options, in: directory)
            let data = try Data(contentsOf: file)
            #expect(DecoderRegistry.standard(families: Self.videoFamilies).decoder(for: data)?.format == format)
            for second in [0.0, 1.0, 2.6] {
                let image = try Self.frame(data, second: second)
                let expected = try await Self.reference(file, second: second, in: directory)
                let next = try await Self.reference(file, second: second + 0.04, in: directory)
                #expect((image.width, image.height) == (320, 240))
                #expect((expected.width, expected.height) == (320, 240))
                let difference = Corpus.meanDifference(image, expected), toNext = Corpus.meanDifference(image, next)
                #expect(difference <= 2, "\(name) at \(second): \(difference) from ffmpeg's frame")
                #expect(difference < toNext, "\(name) at \(second): \(difference) from ffmpeg's frame, \(toNext) from the next")
                if second > 0 {
                    let previous = try await Self.reference(file, second: second - 0.04, in: directory)
                    #expect(difference < Corpus.meanDifference(image, previous), "\(name) at \(second): the previous frame is as close")
                }
            }
            let info = try #require(try Self.frame(data, second: 1).metadata.video)
            #expect(info.format == format)
            #expect((info.width, info.height) == (320, 240))
            #expect(abs((info.duration ?? 0) - 4) < 0.1)
            #expect(abs((info.frameRate ?? 0) - 25) < 0.01)
        }

        @Test("keyframes only: the keyframe at or before the second; past the end: the last frame")
        func keyframesAndEnd() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make("a.mp4", Self.kinds[0].1, in: directory)
            let data = try Data(contentsOf: file)
            let keyframe = try Self.frame(data, second: 3.5, keyframesOnly: true)
            #expect(Corpus.meanDifference(keyframe, try await Self.reference(file, second: 2, in: directory)) <= 2)
            #expect(Corpus.meanDifference(keyframe, try await Self.reference(file, second: 3.5, in: directory)) > 2)
            let last = try Self.frame(data, second: 60)
            #expect(Corpus.meanDifference(last, try await Self.reference(file, second: 3.96, in: directory)) <= 2)
        }

        @Test("the display matrix turns the frame and the sample aspect ratio widens it, as ffmpeg shows them")
        func rotationAndAspect() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let plain = try await Self.make("plain.mp4", Self.kinds[0].1, in: directory)
            let turned = directory.appendingPathComponent("turned.mp4")
            try await runTool(Self.ffmpeg, ["-v", "error", "-y", "-i", plain.path, "-c", "copy", "-metadata:s:v:0", "rotate=90", turned.path])
            let image = try Self.frame(try Data(contentsOf: turned), second: 1)
            let expected = try await Self.reference(turned, second: 1, in: directory)
            #expect((image.width, image.height) == (240, 320))
            #expect((expected.width, expected.height) == (240, 320))
            #expect(Corpus.meanDifference(image, expected) <= 2)
            #expect(image.metadata.orientationApplied == .left || image.metadata.orientationApplied == .right)
            // The original as stored, so a resize after the decode keeps the turned picture's shape.
            #expect((image.metadata.originalWidth, image.metadata.originalHeight) == (320, 240))
            #expect(image.metadata.uprightOriginalSize == PixelSize(width: 240, height: 320))

            let wide = try await Self.make("wide.mp4", Self.kinds[0].1, in: directory, filter: ["-vf", "setsar=2"])
            let widened = try Self.frame(try Data(contentsOf: wide), second: 1)
            let reference = try await Self.reference(wide, second: 1, extra: [], in: directory)
            #expect((widened.width, widened.height) == (640, 240))
            #expect((reference.width, reference.height) == (320, 240))
            #expect(Corpus.meanDifference(widened, try await Self.reference(wide, second: 1, filter: Self.scaled("640:240"), in: directory)) <= 2)
        }

        @Test("a target size: the frame is scaled by FFmpeg to the smallest size that covers it, and the estimate says so")
        func reducedFrame() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make("a.mp4", Self.kinds[0].1, in: directory))
            var options = DecodingOptions()
            options.targetSize = PixelSize(width: 100, height: 100)
            options.targetMode = .fit
            let decoder = try #require(DecoderRegistry.standard(families: Self.videoFamilies).decoder(for: data))
            let estimate = try #require(decoder.estimate(data, options: options))
            let image = try Self.frame(data, second: 1, options: options)
            #expect((image.width, image.height) == (100, 75))
            #expect(estimate.decodedSize == PixelSize(width: 100, height: 75))
            #expect((estimate.width, estimate.height) == (320, 240))
            #expect(estimate.bytes >= 100 * 75 * 4 + 8 * 320 * 240 * 3 / 2)
        }

        /// Cell `index` (`width × height`) of a sprite or frame, as an image.
        static func cell(_ image: Image, frame: Int = 0, index: Int, columns: Int, width: Int, height: Int) -> Image {
            var pixels: [UInt8] = []
            let (x, y) = ((index % columns) * width, (index / columns) * height)
            let source = image.frames[frame].pixels
            for row in 0..<height {
                let start = ((y + row) * image.width + x) * 4
                pixels += source[start..<(start + width * 4)]
            }
            return Image(width: width, height: height, frames: [.init(pixels: pixels)], metadata: image.metadata)
        }

        @Test("a sprite (vtt): each tile is ffmpeg's frame at its second, fitted, extended or filled; trim leaves out what the video's end leaves unused")
        func sprite() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make("a.mp4", Self.kinds[0].1, in: directory)
            let data = try Data(contentsOf: file)
            var sequence = VideoFrameSequence(layout: .sprite(columns: 3, rows: 2), step: 0.5, frameSize: PixelSize(width: 80, height: 80))
            var options = DecodingOptions()
            options.videoFrame = VideoFrameSelection(second: 1, sequence: sequence)
            let sprite = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            // Fitted inside 80×80: 80×60 tiles.
            #expect((sprite.width, sprite.height) == (240, 120))
            for index in 0..<6 {
                let second = 1 + Double(index) * 0.5
                let expected = try await Self.reference(file, second: second, filter: Self.scaled("80:60"), in: directory)
                let tile = Self.cell(sprite, index: index, columns: 3, width: 80, height: 60)
                #expect(Corpus.meanDifference(tile, expected) <= 2, "tile \(index) at \(second) s")
                if index > 0 {
                    #expect(
                        Corpus.meanDifference(tile, expected)
                            < Corpus.meanDifference(Self.cell(sprite, index: index - 1, columns: 3, width: 80, height: 60), expected))
                }
            }
            // Extended: 80×80 cells, the frame centred on opaque black.
            sequence.extends = true
            options.videoFrame.sequence = sequence
            let extended = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            #expect((extended.width, extended.height) == (240, 160))
            #expect(Array(extended.frames[0].pixels[0..<4]) == [0, 0, 0, 255])
            // Trimmed from second 3 at 0.5 s steps: 3 and 3.5 are inside the 4 s video, so one row of two.
            sequence.extends = false
            sequence.trims = true
            options.videoFrame = VideoFrameSelection(second: 3, sequence: sequence)
            let trimmed = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            #expect((trimmed.width, trimmed.height) == (160, 60))
            // Filled: 80×80 cells covered, cropped about the focus.
            sequence.trims = false
            sequence.fills = true
            options.videoFrame = VideoFrameSelection(second: 1, sequence: sequence)
            let filled = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            #expect((filled.width, filled.height) == (240, 160))
            let expected = try await Self.reference(file, second: 1, filter: Self.scaled("107:80") + ",crop=80:80:14:0", in: directory)
            #expect(Corpus.meanDifference(Self.cell(filled, index: 0, columns: 3, width: 80, height: 80), expected) <= 2)
        }

        @Test("auto keyframes: a sprite whose step passes the keyframe interval takes each tile's keyframe; a shorter step stays exact")
        func spriteAutoKeyframes() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make("a.mp4", Self.kinds[0].1, in: directory)
            let data = try Data(contentsOf: file)
            let info = try #require(try Self.frame(data, second: 0).metadata.video)
            #expect(abs((info.keyframeInterval ?? 0) - 2) < 0.05, "keyframes every 2 s: \(String(describing: info.keyframeInterval))")
            func tile(_ second: Double) async throws -> Image {
                try await Self.reference(file, second: second, filter: Self.scaled("80:60"), in: directory)
            }
            for (step, shown) in [(2.5, [0.0, 2.0]), (1.0, [0.5, 1.5])] {
                var sequence = VideoFrameSequence(layout: .sprite(columns: 2, rows: 1), step: step, frameSize: PixelSize(width: 80, height: 60))
                sequence.autoKeyframes = true
                var options = DecodingOptions()
                options.videoFrame = VideoFrameSelection(second: 0.5, sequence: sequence)
                let sprite = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
                for (index, second) in shown.enumerated() {
                    let cell = Self.cell(sprite, index: index, columns: 2, width: 80, height: 60)
                    let asked = 0.5 + Double(index) * step
                    #expect(Corpus.meanDifference(cell, try await tile(second)) <= 2, "step \(step): tile \(index) is the frame at \(second) s")
                    if second != asked {
                        #expect(Corpus.meanDifference(cell, try await tile(second)) < Corpus.meanDifference(cell, try await tile(asked)))
                    }
                }
            }
        }

        @Test("BT.2020 with PQ or HLG: the frame converted to sRGB and tone-mapped through the profile its code points describe, as the still path maps AVIF")
        func hdrFrames() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            for (name, transfer, code) in [("pq.mkv", "smpte2084", 16), ("hlg.mkv", "arib-std-b67", 18)] {
                let file = try await Self.make(
                    name,
                    [
                        "-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", transfer,
                        "-colorspace", "bt2020nc",
                    ], in: directory)
                let image = try Self.frame(try Data(contentsOf: file), second: 1)
                #expect(image.metadata.video?.colorTransfer == code && image.metadata.video?.colorPrimaries == 9)
                let stated = try #require(image.metadata.sourceColorProfile)
                #expect(stated.description.contains("BT.2020"), "\(stated.description)")
                #expect(image.metadata.colorProfile == nil, "delivered in sRGB")
                // ffmpeg's frame as stored (BT.2020 matrix undone, no colour conversion), then the
                // still path's conversion of those pixels through the same code points' profile.
                let stored = try await Self.reference(file, second: 1, in: directory)
                var expected = stored.pixels
                DecodeColor(stated: ColorProfile.cicp(primaries: 9, transfer: code), pixels: .rgb, options: DecodingOptions())
                    .apply(&expected, width: stored.width, height: stored.height)
                let converted = Image(width: stored.width, height: stored.height, frames: [.init(pixels: expected)], metadata: stored.metadata)
                #expect(Corpus.meanDifference(image, converted) <= 1, "\(name)")
                #expect(Corpus.meanDifference(image, stored) >= 3, "\(name): converted, not shown as stored")
            }
        }

        @Test("an animation (vta): frames spread over the video with a negative step, each shown for the delay; trim drops frames past the end")
        func animation() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.make("a.mp4", Self.kinds[0].1, in: directory)
            let data = try Data(contentsOf: file)
            var sequence = VideoFrameSequence(layout: .animation(frames: 4, delay: .milliseconds(250)), step: -1, frameSize: PixelSize(width: 160, height: 0))
            var options = DecodingOptions()
            options.videoFrame = VideoFrameSelection(second: 0, sequence: sequence)
            let animation = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            #expect((animation.width, animation.height, animation.frames.count) == (160, 120, 4))
            #expect(animation.frames.allSatisfy { $0.duration == .milliseconds(250) })
            // A 4 s video over 4 frames: seconds 0, 1, 2 and 3.
            for index in 0..<4 {
                let expected = try await Self.reference(file, second: Double(index), filter: Self.scaled("160:120"), in: directory)
                #expect(
                    Corpus.meanDifference(Self.cell(animation, frame: index, index: 0, columns: 1, width: 160, height: 120), expected) <= 2, "frame \(index)")
            }
            // As an animated WebP, every frame kept.
            let webp = try WebPEncoder(quality: 80).encode(animation)
            #expect(try WebPDecoder().decode(webp, options: DecodingOptions()).frames.count == 4)
            sequence.step = 1
            sequence.trims = true
            options.videoFrame = VideoFrameSelection(second: 2, sequence: sequence)
            #expect(try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options).frames.count == 2)
        }

        @Test("a representative frame: past the black opening, the keyframe of the pattern")
        func representative() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("opening.mp4")
            // 6 s of black, then 4 s of the pattern; keyframes every second.
            try await runTool(
                Self.ffmpeg,
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "color=black:size=320x240:rate=25:duration=6", "-f", "lavfi", "-i",
                    "testsrc2=size=320x240:rate=25:duration=4", "-filter_complex", "[0:v][1:v]concat=n=2:v=1", "-c:v", "libx264", "-g", "25",
                    "-pix_fmt", "yuv420p", file.path,
                ])
            let data = try Data(contentsOf: file)
            var options = DecodingOptions()
            options.videoFrame = VideoFrameSelection(second: 1)
            let plain = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            #expect(VideoDecoder.interest(plain.pixels) == 0, "second 1 is black")
            options.videoFrame.representative = true
            let chosen = try DecoderRegistry.standard(families: Self.videoFamilies).decode(data, options: options)
            #expect(VideoDecoder.interest(chosen.pixels) > 20)
            // It is one of the pattern's keyframes (seconds 6 to 9), as ffmpeg shows them.
            var closest = Int.max
            for second in 6...9 { closest = min(closest, Corpus.meanDifference(chosen, try await Self.reference(file, second: Double(second), in: directory))) }
            #expect(closest <= 2)
        }

        @Test("videos are read only when asked for: the standard registry leaves them unsupported")
        func offByDefault() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make("a.mp4", Self.kinds[0].1, in: directory))
            #expect(DecoderRegistry.standard().decoder(for: data) == nil)
            #expect {
                _ = try DecoderRegistry.standard().decode(data)
            } throws: { error in
                (error as? ImagoError)?.code.kind == .unsupportedFormat
            }
        }

        @Test("limits: pixels refused before a frame is decoded, the decode stopped at its deadline, bad bytes an error")
        func limits() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = try Data(contentsOf: try await Self.make("a.mp4", Self.kinds[0].1, in: directory))
            var small = DecodingOptions()
            small.maxPixels = 320 * 239
            #expect {
                _ = try Self.frame(data, second: 1, options: small)
            } throws: { error in
                (error as? ImagoError)?.code == .imageTooLarge(width: 320, height: 240, limit: .pixels(320 * 239))
            }
            var hurried = DecodingOptions()
            hurried.maxDecodeDuration = .zero
            #expect {
                _ = try Self.frame(data, second: 1, options: hurried)
            } throws: { error in
                (error as? ImagoError)?.code == .timedOut
            }
            let decoder = try #require(VideoDecoder(format: .mp4))
            expectCleanFailures(decoder, data, truncatedBelow: 2_000)
        }
    }
#endif
