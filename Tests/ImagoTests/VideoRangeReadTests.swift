#if Video
    import Foundation
    @testable import Imago
    import ImagoTestSupport
    import Testing

    /// Large videos over HTTP read by range requests (``RangedSource``): made here by Debian's
    /// ffmpeg, a short 4K H.264 clip looped with `-stream_loop … -c copy` (its index, the `moov`
    /// box, at the end, as ffmpeg writes MP4 by default), served by the test origin, which counts
    /// the body bytes it really sent. Frames are compared with ffmpeg's own from the local file.
    @Suite("Video sources read by ranges", .serialized, .timeLimit(.minutes(6)))
    struct VideoRangeReadTests {
        static let families: Set<ImageFormatInfo.Family> = [.still, .video]

        /// A 4-second 3840×2160 25 fps clip (SMPTE bars with a moving 256×144 pattern, keyframes
        /// every 2 s), looped `loops` times without re-encoding.
        static func looped(_ loops: Int, in directory: URL) async throws -> URL {
            let clip = directory.appendingPathComponent("clip.mp4"), file = directory.appendingPathComponent("looped-\(loops).mp4")
            if !FileManager.default.fileExists(atPath: clip.path) {
                try await runTool(
                    VideoDecoderTests.ffmpeg,
                    [
                        "-v", "error", "-y", "-f", "lavfi", "-i",
                        "smptehdbars=size=3840x2160:rate=25:duration=4[bg];testsrc=size=256x144:rate=25:duration=4[fg];[bg][fg]overlay=x='t*800':y=800",
                        "-c:v", "libx264", "-preset", "ultrafast", "-crf", "30", "-g", "50", "-pix_fmt", "yuv420p", clip.path,
                    ])
            }
            try await runTool(VideoDecoderTests.ffmpeg, ["-v", "error", "-y", "-stream_loop", "\(loops - 1)", "-i", clip.path, "-c", "copy", file.path])
            return file
        }

        /// Whether `image` is ffmpeg's frame at `second` of the local `file`, scaled to its width by
        /// ffmpeg's scaler with Imago's flags (mean difference at most 2).
        static func isFrame(_ image: Image, of file: URL, at second: Double, in directory: URL) async throws -> Bool {
            let expected = try await VideoDecoderTests.reference(file, second: second, filter: VideoDecoderTests.scaled("\(image.width):-1"), in: directory)
            return (image.width, image.height) == (expected.width, expected.height) && Corpus.meanDifference(image, expected) <= 2
        }

        /// A test origin serving `body` at `path`, its route as `change` makes it (validators, ranges).
        static func served(_ body: Data, at path: String, _ change: (inout TestOrigin.Route) -> Void) async throws -> TestOrigin {
            let origin = try await TestOrigin.start()
            var route = TestOrigin.Route(body: body)
            change(&route)
            origin.setRoute(path, route)
            return origin
        }

        /// Where MP4's top-level box `type` starts.
        static func boxOffset(_ type: String, in data: Data) -> Int? {
            var offset = 0
            while offset + 8 <= data.count {
                let size = data[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
                var length = size
                if size == 1 { length = data[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) } }
                if String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self) == type { return offset }
                guard length >= 8 else { return nil }
                offset += length
            }
            return nil
        }

        static func pipeline(_ change: (inout ImagePipeline.Configuration) -> Void = { _ in }) -> ImagePipeline {
            var configuration = ImagePipeline.Configuration()
            change(&configuration)
            return ImagePipeline(configuration: configuration, decoders: .standard(families: families))
        }

        static func posterRequest(_ url: URL, second: Double, maxPackets: Int = 1_000) -> ImageRequest {
            var request = ImageRequest(url: url, thumbnail: ImageRequest.Thumbnail(maxPixelSize: 320))
            request.videoFrame = VideoFrameSelection(second: second, maxPackets: maxPackets)
            return request
        }

        @Test("a 1-hour 4K H.264 file over HTTP: the poster at second 1800 from a small fraction of it, one GOP decoded, ffmpeg's frame")
        func hourLongPoster() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.looped(900, in: directory)
            let body = try Data(contentsOf: file, options: .alwaysMapped)
            let moov = try #require(Self.boxOffset("moov", in: body))
            #expect(moov > body.count / 2, "the index is at the end: it must be read by a range")
            let origin = try await Self.served(body, at: "/hour.mp4") { $0.etag = "\"hour\"" }
            let pipeline = Self.pipeline()
            // One GOP is 50 frames: a decode that read more packets than one GOP and a few would fail.
            let response = try await pipeline.response(for: Self.posterRequest(origin.url("/hour.mp4"), second: 1800, maxPackets: 60))
            let video = try #require(response.image.metadata.video)
            #expect(abs((video.duration ?? 0) - 3600) < 1)
            #expect((video.width, video.height) == (3840, 2160))
            #expect(try await Self.isFrame(response.image, of: file, at: 1800, in: directory))

            let log = origin.log
            let sent = log.bodyBytesWritten
            // What the origin sent includes what the loopback's socket buffers took of the first
            // response before the client closed it (2.5–4.5 MB here); the client read far less.
            #expect(sent < body.count / 10, "the origin sent \(sent) of \(body.count) bytes")
            let requests = log.requests(to: "/hour.mp4")
            #expect(requests.count >= 2)
            #expect(requests.first?.header("range") == nil)
            for request in requests.dropFirst() {
                #expect(request.header("range")?.hasPrefix("bytes=") == true)
                #expect(request.header("if-range") == "\"hour\"")
            }
            #expect(log.responses.dropFirst().allSatisfy { $0.status == 206 })
            let ranged = try #require(response.rangeReadBytes)
            #expect(ranged > 0 && ranged + Int64(response.data.count) < Int64(body.count / 50))
            #expect(response.data.count < body.count / 100, "only the first bytes are held")
            try await origin.shutdown()
        }

        @Test("a source read by ranges is never kept as the source; a data request for it gets the whole file")
        func notKeptWhole() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.looped(60, in: directory)
            let body = try Data(contentsOf: file)
            let origin = try await Self.served(body, at: "/four-minutes.mp4") { $0.lastModified = Date(timeIntervalSince1970: 1_700_000_000) }
            let url = origin.url("/four-minutes.mp4")
            let cache = directory.appendingPathComponent("cache")
            let disk = try DiskCache(configuration: .init(directory: cache))
            let pipeline = Self.pipeline {
                $0.rangeReadMinimumSize = 1 << 20
                $0.diskCache = disk
            }
            let request = Self.posterRequest(url, second: 130)
            let response = try await pipeline.response(for: request)
            #expect(response.rangeReadBytes != nil)
            #expect(try await Self.isFrame(response.image, of: file, at: 130, in: directory))
            await pipeline.waitUntilIdle()
            disk.flush()
            #expect(disk.entry(for: request.diskCacheKey) == nil, "the first bytes are not stored as the source")
            // Dated only (no ETag): the ranges name the date.
            #expect(origin.log.requests(to: "/four-minutes.mp4").last?.header("if-range") == "Tue, 14 Nov 2023 22:13:20 GMT")

            origin.clearRequests()
            let whole = try await pipeline.data(for: ImageRequest(url: url, options: [.disableDiskCacheReads]))
            #expect(whole.data == body)
            #expect(origin.log.requests(to: "/four-minutes.mp4").allSatisfy { $0.header("range") == nil })
            await pipeline.waitUntilIdle()
            disk.flush()
            try await origin.shutdown()
        }

        @Test("the source replaced while it is read: invalidResponse, nothing of two versions mixed, nothing kept")
        func replacedWhileRead() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let body = try Data(contentsOf: try await Self.looped(60, in: directory))
            let origin = try await Self.served(body, at: "/replaced.mp4") {
                $0.etag = "\"one\""
                $0.etagAfterFirstResponse = "\"two\""
            }
            let pipeline = Self.pipeline { $0.rangeReadMinimumSize = 1 << 20 }
            let request = Self.posterRequest(origin.url("/replaced.mp4"), second: 130)
            let error = await #expect(throws: ImagoError.self) { try await pipeline.response(for: request) }
            #expect(error?.code == .invalidResponse)
            // The range asked for the first version; the origin answered its new one whole (200),
            // which the client refused on its length, larger than the range asked.
            let log = origin.log
            #expect(log.requests(to: "/replaced.mp4").dropFirst().first?.header("if-range") == "\"one\"")
            #expect(log.responses.dropFirst().first?.status == 200)
            let memory = try #require(pipeline.configuration.memoryCache)
            #expect(memory.value(forKey: request.cacheKey) == nil)
            try await origin.shutdown()
        }

        @Test("from S3 (moto): the object store's loader reads the video by signed range requests", .enabled(if: ObjectStorePeer.isInstalled))
        func fromS3() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.looped(60, in: directory)
            try await withS3Peer(["videos": [file]]) { peer in
                var configuration = ImagePipeline.Configuration()
                configuration.rangeReadMinimumSize = 1 << 20
                let loaders = LoaderRegistry.standard()
                loaders.register(S3DataLoader(S3LoaderTests.configuration(peer)))
                let pipeline = ImagePipeline(configuration: configuration, loaders: loaders, decoders: .standard(families: Self.families))
                let url = URL(string: "s3://videos/\(file.lastPathComponent)")!
                let response = try await pipeline.response(for: Self.posterRequest(url, second: 130))
                let ranged = try #require(response.rangeReadBytes)
                #expect(ranged + Int64(response.data.count) < Int64(try Data(contentsOf: file).count / 4))
                #expect(try await Self.isFrame(response.image, of: file, at: 130, in: directory))
            }
        }

        @Test("a local file: the file loader answers ranges (206, If-Range by its date), so a large video is read by them too")
        func localFile() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.looped(60, in: directory)
            let body = try Data(contentsOf: file)
            let pipeline = Self.pipeline { $0.rangeReadMinimumSize = 1 << 20 }
            let response = try await pipeline.response(for: Self.posterRequest(file, second: 130))
            let ranged = try #require(response.rangeReadBytes)
            #expect(ranged + Int64(response.data.count) < Int64(body.count / 4))
            #expect(try await Self.isFrame(response.image, of: file, at: 130, in: directory))

            // The loader itself: a range is a 206 of those bytes; another date in If-Range, the whole file.
            let date = try #require(response.headers["Last-Modified"])
            let range = try await pipeline.data(
                for: ImageRequest(url: file, headers: ["Range": "bytes=100-199", "If-Range": date], options: [.disableDiskCacheReads]))
            #expect(range.statusCode == 206 && range.data == body[100..<200] && range.headers["Content-Range"] == "bytes 100-199/\(body.count)")
            let whole = try await pipeline.data(
                for: ImageRequest(url: file, headers: ["Range": "bytes=100-199", "If-Range": "Thu, 01 Jan 1970 00:00:00 GMT"]))
            #expect(whole.statusCode == nil && whole.data == body)
        }

        @Test("an origin without ranges: the file is downloaded whole, within the size limit, and the frame is the same")
        func withoutRanges() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = try await Self.looped(60, in: directory)
            let body = try Data(contentsOf: file)
            let origin = try await Self.served(body, at: "/plain.mp4") {
                $0.etag = "\"plain\""
                $0.acceptsRanges = false
            }
            let pipeline = Self.pipeline { $0.rangeReadMinimumSize = 1 << 20 }
            let response = try await pipeline.response(for: Self.posterRequest(origin.url("/plain.mp4"), second: 130))
            #expect(response.rangeReadBytes == nil)
            #expect(response.data == body)
            #expect(try await Self.isFrame(response.image, of: file, at: 130, in: directory))
            #expect(origin.log.requests(to: "/plain.mp4").count == 1)

            // Past the size limit it is refused, as any source, before its body is read.
            let small = Self.pipeline {
                $0.rangeReadMinimumSize = 1 << 20
                $0.maxResponseSize = Int64(body.count / 2)
            }
            let error = await #expect(throws: ImagoError.self) {
                try await small.response(for: Self.posterRequest(origin.url("/plain.mp4"), second: 1))
            }
            #expect(error?.code.kind == .tooLarge)
            try await origin.shutdown()
        }
    }
#endif
