import Foundation
import ImagoTestSupport
import Testing

@testable import Imago

@Suite("Resumable downloads", .timeLimit(.minutes(6)))
struct ResumableDownloadTests {
    static func retrying(_ configuration: inout ImagePipeline.Configuration) {
        configuration.retryPolicy = RetryPolicy(initialDelay: .milliseconds(1))
    }

    /// Serves `body` at `path` with an ETag, cutting the first response after `cut` bytes.
    static func serveCut(_ body: Data, at path: String, cut: Int, on origin: TestOrigin, etag: String? = "\"v1\"") -> URL {
        let url = origin.serve(body, at: path)
        origin.updateRoute(path) {
            $0.etag = etag
            $0.truncateAfter = cut
            $0.cutFirst = 1
        }
        return url
    }

    @Test("a retry after a body cut short asks only for the rest (Range with If-Range) and joins it into the whole body")
    func retryResumes() async throws {
        try await withOrigin(configure: Self.retrying) { origin, pipeline in
            let body = payload(300_000)
            let url = Self.serveCut(body, at: "/cut.jpg", cut: 100_000, on: origin)
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(response.statusCode == 200)
            let requests = origin.log.requests(to: "/cut.jpg")
            #expect(requests.count == 2)
            #expect(requests.first?.header("range") == nil)
            #expect(requests.last?.header("range") == "bytes=100000-")
            #expect(requests.last?.header("if-range") == "\"v1\"")
            #expect(origin.log.responses.map(\.status) == [200, 206])
            #expect(origin.log.responses.last?.bodyBytes == 200_000)
            #expect(pipeline.statistics.resumed == 1)
            #expect(pipeline.statistics.retries == 1)
        }
    }

    @Test("a transfer that failed keeps its bytes; the next request for the URL resumes them")
    func laterRequestResumes() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(200_000)
            let url = Self.serveCut(body, at: "/later.jpg", cut: 150_000, on: origin)
            await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: url)) }
            #expect(pipeline.resumables.bytes == 150_000)
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/later.jpg").last?.header("range") == "bytes=150000-")
            #expect(origin.log.responses.last?.bodyBytes == 50_000)
            #expect(pipeline.resumables.bytes == 0, "the joined transfer took the kept bytes")
        }
    }

    @Test("a Last-Modified date serves as the validator when there is no strong ETag")
    func lastModified() async throws {
        try await withOrigin(configure: Self.retrying) { origin, pipeline in
            let body = payload(120_000)
            let url = Self.serveCut(body, at: "/dated.jpg", cut: 60_000, on: origin, etag: nil)
            origin.updateRoute("/dated.jpg") { $0.lastModified = Date(timeIntervalSince1970: 1_700_000_000) }
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/dated.jpg").last?.header("if-range") == "Tue, 14 Nov 2023 22:13:20 GMT")
            #expect(pipeline.statistics.resumed == 1)
        }
    }

    @Test("an image changed in between is fetched whole: If-Range fails, the 200 replaces the kept bytes, nothing mixed")
    func changedVersion() async throws {
        try await withOrigin { origin, pipeline in
            let first = payload(200_000, seed: 1)
            let url = Self.serveCut(first, at: "/changing.jpg", cut: 120_000, on: origin)
            await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: url)) }
            let second = payload(180_000, seed: 2)
            origin.updateRoute("/changing.jpg") {
                $0.body = second
                $0.etag = "\"v2\""
            }
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == second)
            #expect(origin.log.requests(to: "/changing.jpg").last?.header("if-range") == "\"v1\"")
            #expect(origin.log.responses.last?.status == 200)
            #expect(pipeline.statistics.resumed == 0)
        }
    }

    @Test(
        "nothing is kept of a response that cannot be resumed: no Accept-Ranges, a weak ETag alone, no-store, gzip",
        arguments: ["no-ranges", "weak-etag", "no-store", "gzip"])
    func notResumable(case name: String) async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(100_000)
            let url = Self.serveCut(body, at: "/\(name).jpg", cut: 50_000, on: origin)
            origin.updateRoute("/\(name).jpg") { route in
                switch name {
                case "no-ranges": route.acceptsRanges = false
                case "weak-etag": route.etag = "W/\"v1\""
                case "no-store": route.headers.append(("Cache-Control", "no-store"))
                default: route.headers.append(("Content-Encoding", "gzip"))
                }
            }
            await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: url)) }
            #expect(pipeline.resumables.bytes == 0)
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/\(name).jpg").last?.header("range") == nil)
        }
    }

    @Test("a 206 that is not the rest of the kept bytes is refused and the transfer starts again from byte 0")
    func wrongContinuation() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(100_000)
            let url = Self.serveCut(body, at: "/liar.jpg", cut: 40_000, on: origin)
            await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: url)) }
            // The server now answers every request with a 206 that claims to start elsewhere.
            origin.updateRoute("/liar.jpg") {
                $0.status = 206
                $0.headers.append(("Content-Range", "bytes 0-99999/100000"))
            }
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body, "the whole body of the fresh attempt, not the kept bytes with it")
            let requests = origin.log.requests(to: "/liar.jpg")
            #expect(requests.count == 3)
            #expect(requests[1].header("range") == "bytes=40000-")
            #expect(requests[2].header("range") == nil)
            #expect(pipeline.statistics.resumed == 0)
        }
    }

    @Test("a 416 to the range drops the kept bytes: one attempt from byte 0, the error it gets, nothing kept after")
    func rangeNotSatisfiable() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(100_000)
            let url = Self.serveCut(body, at: "/gone.jpg", cut: 40_000, on: origin)
            await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: url)) }
            origin.updateRoute("/gone.jpg") { $0.status = 416 }
            let error = await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: url)) }
            #expect(error?.code == .httpStatus(416))
            #expect(pipeline.resumables.bytes == 0)
            origin.updateRoute("/gone.jpg") { $0.status = 200 }
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/gone.jpg").map { $0.header("range") } == [nil, "bytes=40000-", nil, nil])
        }
    }

    @Test("a cancelled transfer keeps what it received; the next request resumes it")
    func cancelledKeeps() async throws {
        try await withOrigin { origin, pipeline in
            let body = payload(200_000)
            let url = origin.serve(body, at: "/cancel.jpg")
            origin.updateRoute("/cancel.jpg") {
                $0.etag = "\"c\""
                $0.pauseAfter = (70_000, "never")
            }
            let received = Countdown(1)
            let task = pipeline.dataTask(with: ImageRequest(url: url)) { _ in
            } progress: { count, _, _ in
                if count >= 70_000 { received.signal() }
            }
            await received.wait()
            task.cancel()
            await pipeline.waitUntilIdle()
            origin.updateRoute("/cancel.jpg") { $0.pauseAfter = nil }
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/cancel.jpg").last?.header("range") == "bytes=70000-")
            origin.release("never")
        }
    }

    @Test("a resumed progressive JPEG still gives previews: the kept scans and the first bytes of the rest make one")
    func previewsOnResume() async throws {
        let photo = try PNGDecoder().decode(Corpus.data("webp/blue-purple-pink-large.png"), options: DecodingOptions())
        let data = try JPEGEncoder(quality: 90, progressive: true).encode(photo)
        try await withOrigin(configure: { $0.previewInterval = .zero }) { origin, pipeline in
            let url = Self.serveCut(data, at: "/progressive.jpg", cut: data.count * 2 / 5, on: origin)
            await #expect(throws: ImagoError.self) { try await pipeline.image(for: ImageRequest(url: url)) }
            // The rest waits after its first kilobyte until a preview has come: no timing involved.
            origin.updateRoute("/progressive.jpg") { $0.pauseAfter = (1024, "previewed") }
            let previews = Recorder<ImageResponse>()
            let task = pipeline.imageTask(
                with: ImageRequest(url: url, options: .previews),
                preview: {
                    previews.append($0)
                    origin.release("previewed")
                })
            let final = try await task.response
            #expect(origin.log.responses.last?.status == 206)
            #expect(previews.all.count >= 1)
            #expect(previews.all.allSatisfy { $0.isPreview && $0.image.width == final.image.width })
            let whole = try JPEGDecoder().decode(data, options: DecodingOptions())
            #expect(Corpus.samePixels(final.image.pixels, whole.pixels))
        }
    }

    #if DiskCache
        @Test("kept bytes go beside the disk cache's entries: another pipeline on the same directory resumes them, then they are gone")
        func diskResume() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-resume-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let origin = try await TestOrigin.start()
            // An image: the disk cache stores only bytes that sniff as one.
            let body = try Corpus.data("jpeg/video-001.jpeg")
            let url = Self.serveCut(body, at: "/disk.jpg", cut: 10_000, on: origin)
            let request = ImageRequest(url: url)
            do {
                var configuration = ImagePipeline.Configuration()
                configuration.diskCache = try DiskCache(configuration: .init(directory: directory))
                let pipeline = ImagePipeline(configuration: configuration)
                await #expect(throws: ImagoError.self) { try await pipeline.data(for: request) }
                await pipeline.waitUntilIdle()
                configuration.diskCache?.flush()
            }
            var configuration = ImagePipeline.Configuration()
            let disk = try DiskCache(configuration: .init(directory: directory))
            configuration.diskCache = disk
            #expect(disk.entry(for: ResumableDataStore.diskKey(for: request.diskCacheKey))?.data == body.prefix(10_000))
            #expect(disk.entry(for: request.diskCacheKey) == nil, "no entry for the image itself")
            let pipeline = ImagePipeline(configuration: configuration)
            let response = try await pipeline.data(for: request)
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/disk.jpg").last?.header("range") == "bytes=10000-")
            await pipeline.waitUntilIdle()
            disk.flush()
            #expect(disk.entry(for: ResumableDataStore.diskKey(for: request.diskCacheKey)) == nil)
            #expect(disk.entry(for: request.diskCacheKey)?.data == body)
            try await origin.shutdown()
        }
    #endif

    @Test("resumableDataLimit 0 never resumes")
    func turnedOff() async throws {
        try await withOrigin(configure: {
            $0.resumableDataLimit = 0
            $0.retryPolicy = RetryPolicy(initialDelay: .milliseconds(1))
        }) { origin, pipeline in
            let body = payload(100_000)
            let url = Self.serveCut(body, at: "/off.jpg", cut: 50_000, on: origin)
            let response = try await pipeline.data(for: ImageRequest(url: url))
            #expect(response.data == body)
            #expect(origin.log.requests(to: "/off.jpg").map { $0.header("range") } == [nil, nil])
        }
    }
}

@Suite("Resumable data: what may be kept, and what continues it")
struct ResumableDataTests {
    static let url = URL(string: "https://example.com/a.jpg")!

    static func head(_ status: Int, _ headers: HeaderFields, length: Int64? = nil) -> ResponseHead {
        ResponseHead(url: url, statusCode: status, headers: headers, expectedContentLength: length)
    }

    @Test("Content-Range: the forms RFC 9110 allows, and hostile ones refused")
    func contentRange() {
        #expect(ContentRange("bytes 10-19/20").map { [$0.first, $0.last, $0.total] } == [10, 19, 20])
        #expect(ContentRange("bytes 0-0/*")?.total == nil)
        for bad in [
            "bytes 10-5/20", "bytes 0-20/20", "bytes -1-5/20", "bytes 0-5/", "items 0-5/20", "bytes 0-5", "bytes 0 -5/20", "bytes +1-5/20",
            "bytes 0-99999999999999999999/999999999999999999999", "bytes 0-5/20/30", "",
        ] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test("a 206 joins only when it is exactly the rest of the same version")
    func joins() throws {
        let kept = try #require(ResumableData(data: Data(count: 10), validator: "\"v1\""))
        let joined = try kept.joined(with: Self.head(206, ["Content-Range": "bytes 10-29/30", "ETag": "\"v1\""], length: 20))
        #expect(joined.statusCode == 200 && joined.expectedContentLength == 30 && joined.headers["Content-Length"] == "30")
        #expect(joined.headers["Content-Range"] == nil && joined.headers["Accept-Ranges"] == "bytes")
        for refused: HeaderFields in [
            ["Content-Range": "bytes 9-29/30"], ["Content-Range": "bytes 10-28/30"], ["Content-Range": "bytes 10-29/*"],
            ["Content-Range": "bytes 10-29/30", "ETag": "\"v2\""], [:],
        ] {
            #expect(throws: ImagoError.self, "\(refused)") { try kept.joined(with: Self.head(206, refused)) }
        }
        #expect(throws: ImagoError.self, "a length that is not the range's") {
            try kept.joined(with: Self.head(206, ["Content-Range": "bytes 10-29/30"], length: 25))
        }
    }

    @Test("validators that would break a header are never kept")
    func validators() {
        #expect(ResumableData(data: Data([1]), validator: "\"a\"\r\nX-Injected: 1") == nil)
        #expect(ResumableData(data: Data([1]), validator: String(repeating: "a", count: 600)) == nil)
        #expect(ResumableData(data: Data([1]), validator: "") == nil)
        #expect(ResumableData(data: Data(), validator: "\"a\"") == nil)
        let head = Self.head(200, ["Accept-Ranges": "none", "ETag": "\"a\""], length: 10)
        #expect(ResumableData(response: head, data: Data([1])) == nil)
        let whole = Self.head(200, ["Accept-Ranges": "bytes", "ETag": "\"a\""], length: 1)
        #expect(ResumableData(response: whole, data: Data([1])) == nil, "nothing left to resume")
    }

    @Test("the memory store keeps at most its limit, dropping the oldest")
    func storeBound() throws {
        let store = ResumableDataStore(limit: 25)
        for (index, key) in ["a", "b", "c"].enumerated() {
            store.keep(try #require(ResumableData(data: Data(count: 10), validator: "\"\(index)\"")), for: key)
        }
        #expect(store.bytes == 20)
        #expect(store.take("a") == nil)
        #expect(store.take("b")?.validator == "\"1\"")
        store.keep(try #require(ResumableData(data: Data(count: 30), validator: "\"big\"")), for: "d")
        #expect(store.take("d") == nil, "larger than the whole limit")
        #expect(store.bytes == 10)
    }
}

@Suite("Resumable downloads from nginx", .enabled(if: NginxOrigin.isInstalled), .timeLimit(.minutes(6)))
struct NginxResumeTests {
    /// Starts a transfer of `url`, cancels it once `atLeast` bytes have come, and waits until it has ended.
    static func cancelPartWay(_ url: URL, atLeast: Int64, pipeline: ImagePipeline) async {
        let received = Countdown(1)
        let task = pipeline.dataTask(with: ImageRequest(url: url)) { _ in
        } progress: { count, _, _ in
            if count >= atLeast { received.signal() }
        }
        await received.wait()
        task.cancel()
        await pipeline.waitUntilIdle()
    }

    @Test("nginx continues a cancelled transfer with a 206 that Imago joins; after the file changed, its 200 replaces the kept bytes")
    func resumesFromNginx() async throws {
        // 32 KB/s: the rest of a file takes 9 s or more, so a cancel that a loaded machine delays
        // by seconds still lands before the transfer ends.
        try await withNginxOrigin(bytesPerSecond: 32 * 1024) { nginx in
            let pipeline = ImagePipeline()
            let first = payload(400_000, seed: 3)
            try first.write(to: nginx.root.appendingPathComponent("big.bin"))
            await Self.cancelPartWay(nginx.url("big.bin"), atLeast: 64 * 1024, pipeline: pipeline)
            let kept = pipeline.resumables.bytes
            #expect(kept >= 64 * 1024 && kept < first.count)
            let response = try await pipeline.data(for: ImageRequest(url: nginx.url("big.bin")))
            #expect(response.data == first)
            #expect(pipeline.statistics.resumed == 1, "nginx answered the range with the rest, which was joined")

            // Again, and the file changes in between: nginx's ETag changes, its If-Range fails.
            let second = payload(300_000, seed: 4)
            let other = nginx.url("other.bin")
            try first.write(to: nginx.root.appendingPathComponent("other.bin"))
            await Self.cancelPartWay(other, atLeast: 64 * 1024, pipeline: pipeline)
            #expect(pipeline.resumables.bytes > 0)
            try second.write(to: nginx.root.appendingPathComponent("other.bin"))
            let changed = try await pipeline.data(for: ImageRequest(url: other))
            #expect(changed.data == second)
            #expect(pipeline.statistics.resumed == 1, "no second join")
        }
    }
}

@Suite("Resumable data: hostile continuations")
struct ResumableHostileTests {
    /// The fuzz input: its first byte set the harness's switches; then a response head and body.
    @Test("a 206 with more bytes than its Content-Range named is refused, not joined (fuzz-http-response-206-past-its-range)")
    func pastItsRange() throws {
        let input = try HostileFiles.data("fuzz-http-response-206-past-its-range.txt").dropFirst()
        let split = try #require(input.range(of: Data("\r\n\r\n".utf8)))
        let lines = String(decoding: input[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        var headers = HeaderFields()
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers.append(name: String(parts[0]), value: parts[1].trimmingCharacters(in: .whitespaces))
        }
        let body = input[split.upperBound...]
        let url = URL(string: "http://origin.test/a.jpg")!
        let sink = DataSink(url: url, maxSize: 1 << 20)
        sink.resume(from: try #require(ResumableData(data: Data(repeating: 0x4B, count: 100), validator: "\"v1\"")))
        try sink.receive(ResponseHead(url: url, statusCode: 206, headers: headers))
        let error = #expect(throws: ImagoError.self) { try sink.receive(Data(body)) }
        #expect(error?.code == .invalidResponse)
        #expect(sink.progress.received == 100, "nothing of it joined")
    }
}
