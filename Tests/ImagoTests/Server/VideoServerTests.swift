#if Video
    import Foundation
    import Imago
    import ImagoTestSupport
    import Testing

    @testable import ImagoServer

    /// Video sources through `imago serve` (imgproxy Pro's video thumbnails): off by default, then a
    /// frame at the server's or the URL's second, processed as any image, beside ffmpeg's own frame
    /// scaled alike; `/info` reports the streams.
    @Suite("imago serve: video sources", .timeLimit(.minutes(6)))
    struct VideoServerTests {
        /// A 4-second 320×240 H.264 clip in `root`.
        static func clip(in root: URL) async throws -> URL {
            let file = root.appendingPathComponent("clip.mp4")
            try await runTool(
                VideoDecoderTests.ffmpeg,
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-c:v", "libx264", "-g", "50", "-pix_fmt", "yuv420p",
                    file.path,
                ])
            return file
        }

        /// ffmpeg's frame at `second`, scaled to 160×120 by its own scaler with Imago's flags.
        static func reference(_ file: URL, second: Double, in root: URL) async throws -> Image {
            try await VideoDecoderTests.reference(file, second: second, filter: VideoDecoderTests.scaled("160:120"), in: root)
        }

        @Test("off by default: 422; on: the frame at the server's second, and at the URL's vts, fitted as any image")
        func frames() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let clip = try await Self.clip(in: root)
            let path = ServerHarness.path("local:///clip.mp4", ["rs:fit:160:0"], extension: "png")
            try await withServer({ $0.localRoot = root }) { server in
                let refused = try await server.get(path)
                #expect(refused.status == 422, "\(String(decoding: refused.body.prefix(200), as: UTF8.self))")
            }
            try await withServer({
                $0.localRoot = root
                $0.output.video.enabled = true
            }) { server in
                let first = try await server.get(path)
                #expect(first.status == 200)
                let image = try PNGDecoder().decode(first.body, options: DecodingOptions())
                #expect((image.width, image.height) == (160, 120))
                let atOne = try await Self.reference(clip, second: 1, in: root), atLater = try await Self.reference(clip, second: 2.6, in: root)
                #expect(Corpus.meanDifference(image, atOne) <= 2)
                #expect(Corpus.meanDifference(image, atOne) < Corpus.meanDifference(image, atLater))

                let later = try await server.get(ServerHarness.path("local:///clip.mp4", ["rs:fit:160:0", "vts:2.6"], extension: "png"))
                #expect(later.status == 200)
                let laterImage = try PNGDecoder().decode(later.body, options: DecodingOptions())
                #expect(Corpus.meanDifference(laterImage, atLater) <= 2)
                #expect(Corpus.meanDifference(laterImage, atLater) < Corpus.meanDifference(laterImage, atOne))

                // The keyframe before second 3.5 is the one at 2 s.
                let keyframe = try await server.get(ServerHarness.path("local:///clip.mp4", ["rs:fit:160:0", "vts:3.5", "vtk:1"], extension: "png"))
                #expect(keyframe.status == 200)
                let atTwo = try await Self.reference(clip, second: 2, in: root)
                #expect(Corpus.meanDifference(try PNGDecoder().decode(keyframe.body, options: DecodingOptions()), atTwo) <= 2)
            }
            try await withServer({
                $0.localRoot = root
                $0.output.video.enabled = true
                $0.output.video.second = 2.6
            }) { server in
                let answer = try await server.get(path)
                #expect(answer.status == 200)
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect(Corpus.meanDifference(image, try await Self.reference(clip, second: 2.6, in: root)) <= 2)
            }
        }

        @Test("a 1-hour 4K video over HTTP: vts:1800 from a small fraction of it read by ranges; a repeat is the kept variant")
        func hourLongOverHTTP() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let file = try await VideoRangeReadTests.looped(900, in: root)
            let body = try Data(contentsOf: file, options: .alwaysMapped)
            try await withServer({ $0.output.video.enabled = true }) { server in
                var route = TestOrigin.Route(body: body)
                route.etag = "\"hour\""
                server.origin.setRoute("/hour.mp4", route)
                let path = ServerHarness.path(server.origin.url("/hour.mp4").absoluteString, ["rs:fit:320:0", "vts:1800"], extension: "png")
                let answer = try await server.get(path)
                #expect(answer.status == 200, "\(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect(try await VideoRangeReadTests.isFrame(image, of: file, at: 1800, in: root))
                let sent = server.origin.log.bodyBytesWritten
                #expect(sent < body.count / 10, "the origin sent \(sent) of \(body.count) bytes")
                #expect(server.origin.log.requests(to: "/hour.mp4").dropFirst().allSatisfy { $0.header("if-range") == "\"hour\"" })

                let requests = server.origin.log.requests(to: "/hour.mp4").count
                let again = try await server.get(path)
                #expect(again.status == 200 && again.body == answer.body)
                #expect(server.origin.log.requests(to: "/hour.mp4").count == requests, "the kept variant, no new read")
            }
        }

        @Test("thumbor's URLs read a video's frame at the server's second, fitted as thumbor fits")
        func thumborDialect() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            let clip = try await Self.clip(in: root)
            try await withServer({
                $0.dialect = .thumbor
                $0.output.video.enabled = true
                $0.output.video.second = 2.6
            }) { server in
                let url = server.origin.serve(try Data(contentsOf: clip), at: "/clip.mp4")
                let answer = try await server.get("/unsafe/160x120/filters:format(png)/\(url.host!):\(url.port!)/clip.mp4")
                #expect(answer.status == 200, "\(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                let image = try PNGDecoder().decode(answer.body, options: DecodingOptions())
                #expect((image.width, image.height) == (160, 120))
                let atLater = try await Self.reference(clip, second: 2.6, in: root), atOne = try await Self.reference(clip, second: 1, in: root)
                #expect(Corpus.meanDifference(image, atLater) <= 2)
                #expect(Corpus.meanDifference(image, atLater) < Corpus.meanDifference(image, atOne))
            }
        }

        @Test("vtt makes a sprite and vta an animated WebP or AVIF; the other options then process them; bad arguments are a 400")
        func spritesAndAnimations() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            _ = try await Self.clip(in: root)
            try await withServer({
                $0.localRoot = root
                $0.output.video.enabled = true
            }) { server in
                let sprite = try await server.get(ServerHarness.path("local:///clip.mp4", ["vtt:0.5:3:2:80:80"], extension: "png"))
                #expect(sprite.status == 200)
                let spriteImage = try PNGDecoder().decode(sprite.body, options: DecodingOptions())
                #expect((spriteImage.width, spriteImage.height) == (240, 120))
                let halved = try await server.get(ServerHarness.path("local:///clip.mp4", ["vtt:0.5:3:2:80:80", "rs:fit:120:0"], extension: "png"))
                #expect(try PNGDecoder().decode(halved.body, options: DecodingOptions()).width == 120)

                let animation = try await server.get(ServerHarness.path("local:///clip.mp4", ["vts:0", "vta:-1:250:4:160:0"], extension: "webp"))
                #expect(animation.status == 200)
                let frames = try WebPDecoder().decode(animation.body, options: DecodingOptions())
                #expect((frames.width, frames.height, frames.frames.count) == (160, 120, 4))
                #expect(frames.frames.allSatisfy { $0.duration == .milliseconds(250) })
                #if AVIF
                    // As an AVIF image sequence, read by libavif's own avifdec.
                    let avif = try await server.get(ServerHarness.path("local:///clip.mp4", ["vts:0", "vta:-1:250:4:160:0"], extension: "avif"))
                    #expect(avif.status == 200 && avif.header("Content-Type") == "image/avif")
                    let file = root.appendingPathComponent("animation.avif")
                    try avif.body.write(to: file)
                    let described = try await runProcess(URL(fileURLWithPath: "/usr/bin/avifdec"), ["--info", file.path], withStandardError: true)
                    let text = String(decoding: described.output, as: UTF8.self)
                    #expect(text.contains("Resolution     : 160x120") && text.contains("4 frames"), "\(text)")
                    #expect(text.contains("[duration 0.25 (250 timescales)]"), "\(text)")
                #endif

                // Imago's own representative keyframe: one of the clip's two (0 s and 2 s).
                let representative = try await server.get(ServerHarness.path("local:///clip.mp4", ["vtr:1", "rs:fit:160:0"], extension: "png"))
                #expect(representative.status == 200)
                let chosen = try PNGDecoder().decode(representative.body, options: DecodingOptions())
                let root = root
                var closest = Int.max
                for second in [0.0, 2.0] {
                    closest = min(
                        closest, Corpus.meanDifference(chosen, try await Self.reference(root.appendingPathComponent("clip.mp4"), second: second, in: root)))
                }
                #expect(closest <= 2)
                #expect(try await server.get(ServerHarness.path("local:///clip.mp4", ["vtt:1:0:2:80:80"], extension: "png")).status == 400)
                #expect(try await server.get(ServerHarness.path("local:///clip.mp4", ["vta:1:100"], extension: "png")).status == 400)
            }
        }

        @Test("/info reports the video's streams: codec, duration, rate, size")
        func info() async throws {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: root) }
            _ = try await Self.clip(in: root)
            try await withServer({
                $0.localRoot = root
                $0.output.video.enabled = true
            }) { server in
                let answer = try await server.get("/info/_/plain/local:///clip.mp4")
                #expect(answer.status == 200)
                let facts = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
                #expect(facts["format"] as? String == "mp4")
                #expect(facts["width"] as? Int == 320)
                let video = try #require(facts["video_meta"] as? [String: Any])
                #expect(video["codec"] as? String == "h264")
                #expect(abs((video["duration"] as? Double ?? 0) - 4) < 0.1)
                #expect(video["frame_rate"] as? Double == 25)
                #expect(video["display_width"] as? Int == 320)
            }
        }

        @Test("imgproxy's video variables set the video settings; bad values stop the server naming them")
        func settings() throws {
            let configuration = try ServerSettings.configuration([
                "IMGPROXY_ENABLE_VIDEO_THUMBNAILS": "true", "IMGPROXY_VIDEO_THUMBNAIL_SECOND": "5", "IMGPROXY_VIDEO_THUMBNAIL_KEYFRAMES": "1",
                "IMGPROXY_VIDEO_THUMBNAIL_PROBE_SIZE": "1000000", "IMGPROXY_VIDEO_THUMBNAIL_MAX_ANALYZE_DURATION": "2500",
            ]).configuration.output.video
            #expect(configuration.enabled && configuration.keyframesOnly)
            #expect(configuration.second == 5)
            #expect(configuration.probeBytes == 1_000_000)
            #expect(configuration.maxAnalyzeMilliseconds == 2500)
            #expect(try !ServerSettings.configuration([:]).configuration.output.video.enabled)
            #expect {
                _ = try ServerSettings.configuration(["IMGPROXY_VIDEO_THUMBNAIL_SECOND": "-1"])
            } throws: { "\($0)".contains("IMGPROXY_VIDEO_THUMBNAIL_SECOND") }
        }
    }
#endif
