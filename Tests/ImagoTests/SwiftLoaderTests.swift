import Foundation
import Glibc
import Imago
import ImagoServer
import ImagoTestSupport
import Testing

@testable import Imago

/// `swift://` sources through the pipeline from a real OpenStack Swift (Debian's swift-proxy with
/// TempAuth, its storage servers and memcached), signed in with v1 auth.
@Suite(
    "Swift: the loader against OpenStack Swift",
    .enabled(if: ObjectStorePeer.isInstalled && ObjectStorePeer.isSwiftInstalled, "needs the peers' venv and Debian's swift-proxy: make test installs them"),
    .serialized, .timeLimit(.minutes(6)))
// Serialized: each test starts a Swift of five Python servers and memcached; four at once took the
// two cores for long enough that network tests beside them passed their 60 s limits.
struct SwiftLoaderTests {
    static let photo = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg")
    static let png = Corpus.root.appendingPathComponent("png/basn6a08.png")

    static func pipeline(_ configuration: SwiftConfiguration, diskCache: (any DiskCaching)? = nil) -> ImagePipeline {
        var pipelineConfiguration = ImagePipeline.Configuration()
        pipelineConfiguration.addressPolicy = .publicOnly
        pipelineConfiguration.memoryCache = nil
        pipelineConfiguration.diskCache = diskCache
        let loaders = LoaderRegistry.standard()
        loaders.register(SwiftDataLoader(configuration))
        return ImagePipeline(configuration: pipelineConfiguration, loaders: loaders)
    }

    static func configuration(_ peer: ObjectStorePeer.Swift, key: String? = nil, containers: BucketRule = BucketRule()) -> SwiftConfiguration {
        SwiftConfiguration(authURL: peer.authURL, user: peer.user, key: key ?? peer.key, containers: containers)
    }

    @Test("objects are read whole with the token v1 auth gave (the address policy does not apply to the operator's store); a name with a slash and a space too")
    func reads() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let nested = folder.appendingPathComponent("a b.png")
        try FileManager.default.copyItem(at: Self.png, to: nested)
        try await withSwiftPeer(["photos": [Self.photo, nested]]) { peer in
            let pipeline = Self.pipeline(Self.configuration(peer))
            let photo = try Data(contentsOf: Self.photo)
            try await withThrowingTaskGroup(of: Data.self) { group in
                for index in 0..<4 {
                    group.addTask { try await pipeline.data(for: ImageRequest(url: URL(string: "swift://photos/video-001.jpeg#\(index)")!)).data }
                }
                for try await data in group { #expect(data == photo) }
            }
            let image = try await pipeline.image(for: URL(string: "swift://photos/a%20b.png")!)
            #expect(image.width == 32)
            #expect(
                SwiftDataLoader.objectURL(storage: peer.storageURL, container: "photos", object: "a/b c.png").absoluteString
                    == peer.storageURL.absoluteString + "/photos/a/b%20c.png")
        }
    }

    @Test("a disk-cache entry is revalidated with Swift's ETag: If-None-Match, a 304, the kept bytes served")
    func revalidates() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withSwiftPeer(["photos": [Self.photo]]) { peer in
            let disk = try DiskCache(configuration: .init(directory: folder))
            var request = ImageRequest(url: URL(string: "swift://photos/video-001.jpeg")!)
            let first = try await Self.pipeline(Self.configuration(peer), diskCache: disk).data(for: request)
            #expect(first.headers["ETag"] == peer.etags["photos/video-001.jpeg"])
            #expect(first.source == .network)
            request.cachePolicy = .refreshCached
            let second = try await Self.pipeline(Self.configuration(peer), diskCache: disk).data(for: request)
            #expect(second.source == .revalidated && second.statusCode == 304)
            #expect(second.data == first.data)
        }
    }

    @Test("a wrong key is refused at sign-in, a missing object is Swift's 404 page, no key or token in any message")
    func failures() async throws {
        try await withSwiftPeer(["photos": [Self.photo]]) { peer in
            let wrong = "WRONG-key-never-shown-0123456789"
            let impostor = Self.pipeline(Self.configuration(peer, key: wrong))
            let refused = try #require(await loadError(impostor, ImageRequest(url: URL(string: "swift://photos/video-001.jpeg")!)))
            #expect(refused.code == .httpStatus(401) && refused.reason == "Swift: the auth URL refused the user and key (401)", "\(refused)")

            let pipeline = Self.pipeline(Self.configuration(peer))
            let missing = try #require(await loadError(pipeline, ImageRequest(url: URL(string: "swift://photos/none.jpeg")!)))
            #expect(missing.code == .httpStatus(404) && missing.reason == "Swift 404: Not Found: The resource could not be found.", "\(missing)")
            #expect(!"\(refused) \(missing)".contains(wrong) && !"\(refused) \(missing)".contains(peer.key) && !"\(missing)".contains("AUTH_tk"))
            #expect(await loadError(pipeline, ImageRequest(url: URL(string: "swift://photos")!))?.code == .invalidURL)
        }
    }

    @Test("containers outside the allowed list, or denied, are refused before any request; no auth URL is a clear error")
    func containerRules() async throws {
        try await withSwiftPeer(["photos": [Self.photo], "private": [Self.photo]]) { peer in
            let pipeline = Self.pipeline(Self.configuration(peer, containers: BucketRule(allowed: ["photos"], denied: ["photos-old"])))
            let allowed = try await pipeline.data(for: ImageRequest(url: URL(string: "swift://photos/video-001.jpeg")!))
            #expect(allowed.data.count == 21459)
            let refused = await loadError(pipeline, ImageRequest(url: URL(string: "swift://private/video-001.jpeg")!))
            #expect(refused?.code == .sourceRefused("access to the Swift bucket private is denied"))
        }
        let unconfigured = Self.pipeline(SwiftConfiguration())
        let error = await loadError(unconfigured, ImageRequest(url: URL(string: "swift://photos/video-001.jpeg")!))
        #expect(error?.code == .loaderFailed && error?.reason == "Swift: no auth URL is configured", "\(String(describing: error))")
    }

    @Test("Swift's HTML error page as the proxy sends it: title and text, cleaned; anything else is not read")
    func errorPage() {
        let page = Data(
            "<html><h1>Unauthorized</h1><p>This server could not verify that you are authorized to access the document you requested.</p></html>".utf8)
        #expect(
            ObjectStoreErrorDocument.swift(status: 401, body: page)
                == "Swift 401: Unauthorized: This server could not verify that you are authorized to access the document you requested.")
        #expect(ObjectStoreErrorDocument.swift(status: 500, body: Data("{}".utf8)) == nil)
    }

    @Test("IMGPROXY_SWIFT_TIMEOUT_SECONDS: a Swift that sends nothing fails the load after its timeout, not the pipeline's ten minutes")
    func silentStore() async throws {
        let origin = try await TestOrigin.start()
        origin.serve(Data("ok".utf8), at: "/auth/v1.0")
        var configuration = SwiftConfiguration(authURL: origin.url("/auth/v1.0?gate=never"), user: "test:tester", key: "testing")
        configuration.timeout = .seconds(1)
        configuration.connectTimeout = .seconds(2)
        var pipelineConfiguration = ImagePipeline.Configuration()
        pipelineConfiguration.memoryCache = nil
        pipelineConfiguration.diskCache = nil
        pipelineConfiguration.timeoutWithoutBytes = .seconds(600)
        pipelineConfiguration.deadline = nil
        let loaders = LoaderRegistry.standard()
        loaders.register(SwiftDataLoader(configuration))
        let pipeline = ImagePipeline(configuration: pipelineConfiguration, loaders: loaders)
        await #expect(throws: ImagoError.self) { try await pipeline.data(for: ImageRequest(url: URL(string: "swift://photos/video-001.jpeg")!)) }
        origin.release("never")
        try await origin.shutdown()

        // IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS: a listener whose queue is full (backlog 0, one
        // connection waiting, never accepted) drops the next SYN, so connecting never completes.
        let (port, listener) = try refusingPort()
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer {
            close(listener)
            close(filler)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        try #require(listen(listener, 0) == 0)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        try #require(connected)
        var unreachable = SwiftConfiguration(
            authURL: URL(string: "http://127.0.0.1:\(port)/auth/v1.0")!, user: "test:tester", key: "testing")
        unreachable.timeout = .seconds(600)
        unreachable.connectTimeout = .seconds(1)
        let stuck = LoaderRegistry.standard()
        stuck.register(SwiftDataLoader(unreachable))
        // Its own error, before the pipeline's 5 s deadline (which ends a load without one).
        var bounded = pipelineConfiguration
        bounded.deadline = .seconds(5)
        let connecting = ImagePipeline(configuration: bounded, loaders: stuck)
        do {
            _ = try await connecting.data(for: ImageRequest(url: URL(string: "swift://photos/video-001.jpeg")!))
            Issue.record("a connection nothing accepts was made")
        } catch {
            #expect(
                error.code == .timedOut && String(describing: error.underlying).contains("Connect timeout (1 s)"),
                "\(error) \(String(describing: error.underlying))")
        }
        #expect(
            try ServerSettings.configuration(["IMGPROXY_SWIFT_TIMEOUT_SECONDS": "7", "IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS": "3"]).configuration.swift.timeout
                == .seconds(7))
    }
}
