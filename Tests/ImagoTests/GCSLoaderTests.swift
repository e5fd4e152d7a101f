import Foundation
import Imago
import Testing

@testable import Imago

/// `gs://` sources through the pipeline from gcp-storage-emulator, behind a front whose token
/// endpoint verifies the service account's JWT and which serves only requests with its token.
@Suite(
    "GCS: the loader against gcp-storage-emulator", .enabled(if: ObjectStorePeer.isInstalled, "needs the peers' venv: make test installs it"),
    .timeLimit(.minutes(6)))
struct GCSLoaderTests {
    static let photo = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg")
    static let png = Corpus.root.appendingPathComponent("png/basn6a08.png")

    static func pipeline(_ configuration: GCSConfiguration) -> ImagePipeline {
        var pipelineConfiguration = ImagePipeline.Configuration()
        pipelineConfiguration.addressPolicy = .publicOnly
        pipelineConfiguration.memoryCache = nil
        let loaders = LoaderRegistry.standard()
        loaders.register(GCSDataLoader(configuration))
        return ImagePipeline(configuration: pipelineConfiguration, loaders: loaders)
    }

    static func configuration(_ peer: ObjectStorePeer.GCS, key: String? = nil, buckets: BucketRule = BucketRule()) throws -> GCSConfiguration {
        let account = try #require(GCSServiceAccount(json: Data((key ?? peer.key).utf8)))
        return GCSConfiguration(endpoint: peer.endpoint, account: account, buckets: buckets)
    }

    @Test("eight loads at once share one token, asked for with the account's signed JWT; each object read whole, a name with a slash and a space included")
    func readsWithOneToken() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let nested = folder.appendingPathComponent("a b.png")
        try FileManager.default.copyItem(at: Self.png, to: nested)
        try await withGCSPeer(["photos": [Self.photo, nested]]) { peer in
            let pipeline = Self.pipeline(try Self.configuration(peer))
            let photo = try Data(contentsOf: Self.photo)
            try await withThrowingTaskGroup(of: Data.self) { group in
                for index in 0..<8 {
                    // Different URLs, so the pipeline does not coalesce them into one transfer.
                    group.addTask { try await pipeline.data(for: ImageRequest(url: URL(string: "gs://photos/video-001.jpeg#\(index)")!)).data }
                }
                for try await data in group { #expect(data == photo) }
            }
            let tokenRequests = try String(contentsOf: URL(string: "http://127.0.0.1:\(peer.port)/_peer/token-requests")!, encoding: .utf8)
            #expect(tokenRequests == "1")
            let image = try await pipeline.image(for: URL(string: "gs://photos/a%20b.png")!)
            #expect(image.width == 32)
        }
    }

    @Test("?generation and ?generation=N ask GCS for that generation (the emulator ignores it: the URL sent is checked); other queries are invalid")
    func generations() async throws {
        try await withGCSPeer(["photos": [Self.photo]]) { peer in
            let pipeline = Self.pipeline(try Self.configuration(peer))
            let generation = try #require(peer.generations["photos/video-001.jpeg"] ?? nil)
            for query in [generation, "generation=\(generation)"] {
                #expect(try await pipeline.data(for: ImageRequest(url: URL(string: "gs://photos/video-001.jpeg?\(query)")!)).data.count == 21459)
            }
            let loader = GCSDataLoader(GCSConfiguration(endpoint: URL(string: "http://127.0.0.1:9023/storage/v1/")!))
            let parts = try GCSDataLoader.parts(of: URL(string: "gs://photos/a/b%20c.jpeg?12345")!)
            #expect(parts.bucket == "photos" && parts.object == "a/b c.jpeg" && parts.generation == "12345")
            #expect(
                loader.mediaURL(bucket: parts.bucket, object: parts.object, generation: parts.generation).absoluteString
                    == "http://127.0.0.1:9023/storage/v1/b/photos/o/a%2Fb%20c.jpeg?alt=media&generation=12345")
            #expect(await loadError(pipeline, ImageRequest(url: URL(string: "gs://photos/video-001.jpeg?generation=x1")!))?.code == .invalidURL)
        }
    }

    @Test("a missing object is a 404; without a token GCS's 401 names its cause; a key the endpoint does not know is refused; no key in any message")
    func failures() async throws {
        try await withGCSPeer(["photos": [Self.photo]]) { peer in
            let pipeline = Self.pipeline(try Self.configuration(peer))
            #expect(await loadError(pipeline, ImageRequest(url: URL(string: "gs://photos/none.jpeg")!))?.code == .httpStatus(404))

            let anonymous = Self.pipeline(GCSConfiguration(endpoint: peer.endpoint))
            let unauthorised = try #require(await loadError(anonymous, ImageRequest(url: URL(string: "gs://photos/video-001.jpeg")!)))
            #expect(unauthorised.code == .httpStatus(401) && unauthorised.reason == "GCS 401: Invalid Credentials", "\(unauthorised)")

            let impostor = Self.pipeline(try Self.configuration(peer, key: peer.wrongKey))
            let refused = try #require(await loadError(impostor, ImageRequest(url: URL(string: "gs://photos/video-001.jpeg")!)))
            #expect(refused.code == .httpStatus(400) && refused.reason?.contains("token endpoint refused") == true, "\(refused)")
            #expect(!"\(refused) \(unauthorised)".contains("PRIVATE KEY") && !"\(refused)".contains("assertion"))
            #expect(!"\(try #require(GCSServiceAccount(json: Data(peer.key.utf8))))".contains("PRIVATE"))
        }
    }

    @Test("buckets outside the allowed list, or denied, are refused before any request")
    func bucketRules() async throws {
        try await withGCSPeer(["photos": [Self.photo], "private": [Self.photo]]) { peer in
            let pipeline = Self.pipeline(try Self.configuration(peer, buckets: BucketRule(allowed: ["photos"], denied: ["photos-old"])))
            #expect(try await pipeline.data(for: ImageRequest(url: URL(string: "gs://photos/video-001.jpeg")!)).data.count == 21459)
            let refused = await loadError(pipeline, ImageRequest(url: URL(string: "gs://private/video-001.jpeg")!))
            #expect(refused?.code == .sourceRefused("access to the GCS bucket private is denied"))
        }
    }

    @Test("GCS's and S3's error documents as their documentation shows them: code and message only, cut and cleaned")
    func errorDocuments() {
        let gcs = Data(#"{"error": {"code": 404, "message": "No such object: photos/none.jpeg", "errors": [{"reason": "notFound"}]}}"#.utf8)
        #expect(ObjectStoreErrorDocument.gcs(status: 404, body: gcs) == "GCS 404: No such object: photos/none.jpeg")
        #expect(ObjectStoreErrorDocument.gcs(status: 500, body: Data("<html>".utf8)) == nil)
        let s3 = Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match &amp; so on</Message>
            <StringToSign>AWS4-HMAC-SHA256 secret-ish</StringToSign><SignatureProvided>abcdef</SignatureProvided></Error>
            """.utf8)
        let text = ObjectStoreErrorDocument.s3(status: 403, body: s3)
        #expect(text == "S3 SignatureDoesNotMatch: The request signature we calculated does not match & so on")
        let long = Data(("<Error><Code>X</Code><Message>" + String(repeating: "a\u{1}\n", count: 500) + "</Message></Error>").utf8)
        #expect((ObjectStoreErrorDocument.s3(status: 500, body: long)?.count ?? 0) <= 210)
    }
}
