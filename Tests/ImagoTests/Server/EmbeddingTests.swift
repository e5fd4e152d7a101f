import AsyncHTTPClient
import Foundation
import Hummingbird
import Imago
import ImagoServer
import ImagoTestSupport
import Logging
import ServiceLifecycle
import Testing

/// The image service mounted on an application's own router, as `Examples/EmbeddedServer` does.
@Suite("imago serve embedded in a Hummingbird app")
struct EmbeddingTests {
    @Test("the app's own routes answer beside the mounted service, which sees paths after its prefix and keeps its own metrics")
    func mounted() async throws {
        let origin = try await TestOrigin.start()
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        var settings = ServerConfiguration()
        settings.allowsPrivateAddresses = true
        settings.presets["thumb"] = ["rs:fill:24:16"]
        let metrics = ServerMetrics()
        let service = try ImageService(configuration: settings, metrics: metrics)
        let router = Router()
        router.get("/") { _, _ in "my app\n" }
        ImageServer.mount(service, on: router, at: "/images/")
        var logger = Logger(label: "embedding-test")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func get(_ path: String) async throws -> (Int, Data, String?) {
            let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(30))
            return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 24)), response.headers.first(name: "Content-Type"))
        }
        let home = try await get("/")
        #expect(home.0 == 200 && String(decoding: home.1, as: UTF8.self) == "my app\n")
        let encoded = photo.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let thumb = try await get("/images/_/pr:thumb/plain/" + encoded + "@png")
        #expect(thumb.0 == 200 && thumb.2 == "image/png")
        let image = try DecoderRegistry.standard().decode(thumb.1)
        #expect((image.width, image.height) == (24, 16))
        #expect(try await get("/images/_/zz:1/plain/" + encoded).0 == 400)
        #expect(metrics.exposition().contains("imago_serve_images_total"))
        try await client.shutdown()
        await group.triggerGracefulShutdown()
        try await running.value
        try await origin.shutdown()
    }
}
