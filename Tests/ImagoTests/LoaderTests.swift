import Foundation
import Imago
import ImagoTestSupport
import Testing

/// A loader for a made-up scheme, as an app would register one.
private struct MemoryLoader: DataLoading {
    let loaderPriority: Int
    let tag: String
    func canLoad(_ url: URL) -> Bool { url.scheme == "memory" }
    func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
        let bytes = Data("\(tag):\(request.url.host ?? "")".utf8)
        try sink.receive(ResponseHead(url: request.url, expectedContentLength: Int64(bytes.count)))
        try sink.receive(bytes)
    }
}

@Suite("Loaders", .timeLimit(.minutes(6)))
struct LoaderTests {
    @Test("file:// is streamed in chunks with progress, and decodes")
    func file() async throws {
        let body = try Corpus.data("webp/blue-purple-pink-large.png")
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-\(UUID().uuidString).jpg")
        try body.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let pipeline = ImagePipeline()
        let steps = Recorder<Int64>()
        let done = Countdown(1)
        let task = pipeline.imageTask(with: ImageRequest(url: url)) { _ in
            done.signal()
        } progress: { received, expected, _ in
            #expect(expected == Int64(body.count))
            steps.append(received)
        }
        await done.wait()
        let response = try await task.response
        #expect(response.data == body)
        #expect(response.image.metadata.format == .png)
        #expect(steps.all.count == 1 + body.count / (256 * 1024))  // 256 KiB chunks
        #expect(steps.all.last == Int64(body.count))
    }

    @Test("a missing file is fileNotFound; a file above the maximum is tooLarge")
    func fileErrors() async throws {
        let pipeline = ImagePipeline()
        let missing = URL(fileURLWithPath: "/nonexistent/imago/\(UUID().uuidString).png")
        #expect(await loadError(pipeline, ImageRequest(url: missing))?.code == .fileNotFound)

        var configuration = ImagePipeline.Configuration()
        configuration.maxResponseSize = 100
        let small = ImagePipeline(configuration: configuration)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imago-\(UUID().uuidString).png")
        try payload(1000).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(await loadError(small, ImageRequest(url: url))?.code == .tooLarge(limit: 100))
    }

    @Test("data: URIs, base64 and percent-encoded")
    func dataURI() async throws {
        let pipeline = ImagePipeline()
        let bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x10])
        let base64 = URL(string: "data:image/png;base64,\(bytes.base64EncodedString())")!
        let loadedBase64 = try await pipeline.data(for: ImageRequest(url: base64)).data
        #expect(loadedBase64 == bytes)
        let percent = URL(string: "data:image/png,%89PNG%00%FF%10")!
        let loadedPercent = try await pipeline.data(for: ImageRequest(url: percent)).data
        #expect(loadedPercent == bytes)
        let plain = URL(string: "data:,hello%20world")!
        let loadedPlain = try await pipeline.data(for: ImageRequest(url: plain)).data
        #expect(loadedPlain == Data("hello world".utf8))
        let broken = URL(string: "data:image/png;base64,@@@@")!
        #expect(await loadError(pipeline, ImageRequest(url: broken))?.code == .invalidURL)
    }

    @Test("an unknown scheme is noLoader; a registered loader makes it work")
    func customScheme() async throws {
        let pipeline = ImagePipeline()
        let url = URL(string: "memory://cat")!
        let error = await loadError(pipeline, ImageRequest(url: url))
        #expect(error?.code == .noLoader)
        #expect(error?.description.contains("memory") == true)
        pipeline.loaders.register(MemoryLoader(loaderPriority: 0, tag: "first"))
        let loaded = try await pipeline.data(for: ImageRequest(url: url)).data
        #expect(loaded == Data("first:cat".utf8))
    }

    @Test("the highest loaderPriority wins; among equals the last registered")
    func registryPriority() {
        let registry = LoaderRegistry([MemoryLoader(loaderPriority: 5, tag: "high"), MemoryLoader(loaderPriority: 1, tag: "low")])
        let url = URL(string: "memory://x")!
        #expect((registry.loader(for: url) as? MemoryLoader)?.tag == "high")
        registry.register(MemoryLoader(loaderPriority: 5, tag: "newer"))
        #expect((registry.loader(for: url) as? MemoryLoader)?.tag == "newer")
        #expect(registry.loader(for: URL(string: "gopher://x")!) == nil)
        #expect(LoaderRegistry.standard().loader(for: URL(string: "https://x/a.png")!) is HTTPDataLoader)
    }

    @Test("the URLSession loader, registered above AsyncHTTPClient, loads from the origin with the same rules")
    func urlSession() async throws {
        let loader = URLSessionDataLoader(loaderPriority: 10)
        defer { loader.invalidate() }
        try await withOrigin { origin, pipeline in
            pipeline.loaders.register(loader)
            let body = payload(300_000)
            let url = origin.serve(body, at: "/us.jpg")
            let response = try await pipeline.data(for: ImageRequest(url: url, headers: ["X-Via": "urlsession"]))
            #expect(response.data == body)
            #expect(response.statusCode == 200)
            #expect(origin.log.requests.first?.header("x-via") == "urlsession")
            #expect(origin.log.requests.first?.header("accept")?.contains("image/webp") == true)

            #expect(await loadError(pipeline, ImageRequest(url: origin.url("/us.jpg?status=404")))?.code == .httpStatus(404))
            let hops = try await pipeline.data(for: ImageRequest(url: origin.url("/us.jpg?redirects=2"))).data
            #expect(hops == body)
        }
    }
}
