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

        /// FFmpeg's own frame at `second` (input seeking, as its documentation shows), as PNG, decoded.
        static func reference(_ file: URL, second: Double, extra: [String] = [], in directory: URL) async throws -> Image {
            let png = directory.appendingPathComponent("reference-\(UUID().uuidString).png")
            try await runTool(ffmpeg, ["-v", "error", "-y"] + extra + ["-ss", "\(second)", "-i", file.path, "-frames:v", "1", png.path])
            return try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions())
        }

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
                // FFmpeg's tool converts with swscale's default flags; Imago interpolates chroma in full and rounds exactly.
                let difference = Corpus.meanDifference(image, expected), toNext = Corpus.meanDifference(image, next)
                #expect(difference <= 3, "\(name) at \(second): \(difference) from ffmpeg's frame")
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

            let wide = try await Self.make("wide.mp4", Self.kinds[0].1, in: directory, filter: ["-vf", "setsar=2"])
            let widened = try Self.frame(try Data(contentsOf: wide), second: 1)
            let reference = try await Self.reference(wide, second: 1, extra: [], in: directory)
            #expect((widened.width, widened.height) == (640, 240))
            #expect((reference.width, reference.height) == (320, 240))
            let scaled = directory.appendingPathComponent("scaled.png")
            try await runTool(
                Self.ffmpeg, ["-v", "error", "-y", "-ss", "1", "-i", wide.path, "-frames:v", "1", "-vf", "scale=640:240:flags=bicubic", scaled.path])
            #expect(Corpus.meanDifference(widened, try PNGDecoder().decode(try Data(contentsOf: scaled), options: DecodingOptions())) <= 2)
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
