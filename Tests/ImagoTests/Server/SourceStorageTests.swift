import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// `--source-storage`: nodes that share a store of originals fetch each source from its origin
/// once for the whole fleet (a lease, as for made variants), keep its validators, honour
/// `no-store`, and never use a stored original that does not validate. A folder store here; moto's
/// S3 in ``ResultStorageS3Tests``.
@Suite("source storage: originals shared by a fleet's nodes", .timeLimit(.minutes(6)))
struct SourceStorageTests {
    typealias Node = ResultStorageTests

    /// A node over the shared stores: memory only, no disk of its own.
    static func node(results: SharedStorageSettings?, sources: SharedStorageSettings) throws -> ImageService {
        var configuration = ServerConfiguration()
        configuration.allowsPrivateAddresses = true
        configuration.resultStorage = results
        configuration.sourceStorage = sources
        return try ImageService(configuration: configuration)
    }

    /// A route serving `body` with `headers` and, when given, an ETag that answers 304.
    static func route(_ body: Data, headers: [(name: String, value: String)], etag: String? = nil) -> TestOrigin.Route {
        var route = TestOrigin.Route(body: body)
        route.headers = headers
        route.etag = etag
        return route
    }

    static func sourceOutcome(_ service: ImageService, _ outcome: String) -> Int {
        Node.count(service, "imago_serve_source_storage_total{outcome=\"\(outcome)\"}")
    }

    static func encodes(_ nodes: [ImageService]) -> Int {
        nodes.map { Node.count($0, "imago_serve_encodes_total") }.reduce(0, +)
    }

    /// `paths` answered by `nodes` in turn (request `i` by node `i % 3`, as round-robin does), at
    /// most `width` at once.
    static func answers(_ paths: [String], by nodes: [ImageService], width: Int = 9) async -> [ResultStorageTests.Answer] {
        await withTaskGroup(of: (Int, ResultStorageTests.Answer).self) { group in
            var answers = [ResultStorageTests.Answer?](repeating: nil, count: paths.count)
            var next = 0
            func add() {
                guard next < paths.count else { return }
                let (index, node) = (next, nodes[next % nodes.count])
                group.addTask { (index, await Node.get(node, paths[index])) }
                next += 1
            }
            for _ in 0..<width { add() }
            for await (index, answer) in group {
                answers[index] = answer
                add()
            }
            return answers.compactMap { $0 }
        }
    }

    static func untilWritten(_ nodes: [ImageService]) async {
        for node in nodes {
            await node.resultStorage?.untilWritten()
            await node.sourceStorage?.storage.untilWritten()
        }
    }

    /// The fleet: three nodes over `results` and `sources`, 300 requests over 100
    /// variants of 20 sources spread round-robin. Each variant is made once and each source
    /// fetched from the origin once; every answer decodes. Three new nodes (empty memory, no
    /// disk) then answer the same 300 requests making and fetching nothing, and make new variants
    /// of the same sources without going to the origin.
    static func fleet(results: SharedStorageSettings, sources: SharedStorageSettings, origin: TestOrigin) async throws {
        // A read that timed out on a busy machine (the whole suite at once) would be a miss
        // without a lease, and the counts wrong.
        var (results, sources) = (results, sources)
        (results.readTimeout, sources.readTimeout) = (.seconds(60), .seconds(60))
        let photo = try Corpus.data("jpeg/video-001.jpeg")
        var urls: [URL] = []
        for index in 0..<20 {
            let path = "/fleet/\(index).jpg"
            origin.setRoute(path, Self.route(photo, headers: [("Cache-Control", "max-age=3600")], etag: "\"v\(index)\""))
            urls.append(origin.url(path))
        }
        let variants = urls.flatMap { url in [24, 32, 40, 48, 56].map { "/insecure/rs:fit:\($0):\($0)/plain/\(url.absoluteString)@png" } }
        let requests = variants + variants + variants
        let fetched = origin.log.requests.count

        let first = try (0..<3).map { _ in try Self.node(results: results, sources: sources) }
        let answers = await Self.answers(requests, by: first)
        #expect(answers.count == 300 && answers.allSatisfy { $0.status == 200 && $0.type == "image/png" }, "\(Set(answers.map(\.status)))")
        for answer in answers.prefix(100) { _ = try DecoderRegistry.standard().decode(answer.body) }
        #expect(Self.encodes(first) == 100, "each variant made once across the fleet")
        let sourcesFetched = urls.map { origin.log.requests(to: $0.path).count }
        let outcomes = first.map { node in
            ["error", "lease_error", "lease_taken", "lease_wait", "lease_waited", "lease_expired", "lease_wait_ended", "hit", "miss"].map {
                "\($0)=\(Self.sourceOutcome(node, $0))"
            }.joined(separator: " ")
        }
        #expect(sourcesFetched == Array(repeating: 1, count: 20), "each source fetched from the origin once; the stores did: \(outcomes)")
        #expect(origin.log.requests.count == fetched + 20)
        await Self.untilWritten(first)
        #expect(first.map { Self.sourceOutcome($0, "written") }.reduce(0, +) == 20)

        // Every node killed and replaced by one with nothing of its own.
        let replaced = try (0..<3).map { _ in try Self.node(results: results, sources: sources) }
        let again = await Self.answers(requests, by: replaced)
        #expect(again.count == 300 && again.allSatisfy { $0.status == 200 })
        #expect(Self.encodes(replaced) == 0, "the replaced fleet made a variant")
        #expect(origin.log.requests.count == fetched + 20, "the replaced fleet went to the origin")
        // New variants of the same sources: made from the stored originals.
        let new = urls.map { "/insecure/rs:fit:64:64/plain/\($0.absoluteString)@webp" }
        let made = await Self.answers(new, by: replaced)
        #expect(made.count == 20 && made.allSatisfy { $0.status == 200 && $0.type == "image/webp" })
        #expect(Self.encodes(replaced) == 20)
        #expect(origin.log.requests.count == fetched + 20, "a stored original was fetched again")
        #expect(replaced.map { Self.sourceOutcome($0, "hit") + Self.sourceOutcome($0, "lease_waited") }.reduce(0, +) >= 20)
        await Self.untilWritten(replaced)
    }

    static func stores() throws -> (URL, results: SharedStorageSettings, sources: SharedStorageSettings) {
        let root = try temporaryDirectory()
        return (
            root, SharedStorageSettings(location: .folder(root), prefix: "variants"),
            SharedStorageSettings(location: .folder(root), prefix: "sources")
        )
    }

    @Test("a fleet of three over a folder: 300 requests over 100 variants make each once and fetch each source once; replaced nodes make and fetch nothing")
    func fleetOverAFolder() async throws {
        let origin = try await TestOrigin.start()
        let (root, results, sources) = try Self.stores()
        defer { try? FileManager.default.removeItem(at: root) }
        try await Self.fleet(results: results, sources: sources, origin: origin)
        // No lease is left once every original and variant is written.
        for prefix in ["variants", "sources"] {
            let leases = root.appendingPathComponent("\(prefix)/leases").path
            #expect((try? FileManager.default.contentsOfDirectory(atPath: leases))?.isEmpty ?? true, "\(prefix)")
        }
        try await origin.shutdown()
    }

    @Test(
        "an original sent with Cache-Control: no-store, or private (not for shared caches), is never stored: each node fetches it, and no lease is left behind",
        arguments: ["no-store", "private, max-age=3600"])
    func notShared(cacheControl: String) async throws {
        let origin = try await TestOrigin.start()
        let (root, _, sources) = try Self.stores()
        defer { try? FileManager.default.removeItem(at: root) }
        origin.setRoute("/private.jpg", Self.route(try Corpus.data("jpeg/video-001.jpeg"), headers: [("Cache-Control", cacheControl)]))
        let url = origin.url("/private.jpg").absoluteString
        for (index, size) in [32, 40].enumerated() {
            let node = try Self.node(results: nil, sources: sources)
            #expect(await Node.get(node, "/insecure/rs:fit:\(size):\(size)/plain/\(url)@png").status == 200)
            await node.sourceStorage?.storage.untilWritten()
            #expect(origin.log.requests(to: "/private.jpg").count == index + 1)
            #expect(Self.sourceOutcome(node, "written") == 0 && Self.sourceOutcome(node, "lease_taken") == 1)
        }
        #expect(try Node.objects(root).isEmpty, "a \(cacheControl) original was stored")
        let leases = root.appendingPathComponent("sources/leases").path
        #expect((try? FileManager.default.contentsOfDirectory(atPath: leases))?.isEmpty ?? true)
        try await origin.shutdown()
    }

    @Test("a stored original gone stale is revalidated with its stored ETag: a 304 makes the variant from the stored bytes and renews the object")
    func staleIsRevalidated() async throws {
        let origin = try await TestOrigin.start()
        let (root, _, sources) = try Self.stores()
        defer { try? FileManager.default.removeItem(at: root) }
        origin.setRoute("/stale.jpg", Self.route(try Corpus.data("jpeg/video-001.jpeg"), headers: [("Cache-Control", "max-age=0")], etag: "\"one\""))
        let url = origin.url("/stale.jpg").absoluteString
        let first = try Self.node(results: nil, sources: sources)
        #expect(await Node.get(first, "/insecure/rs:fit:32:32/plain/\(url)@png").status == 200)
        await first.sourceStorage?.storage.untilWritten()
        #expect(Self.sourceOutcome(first, "written") == 1)

        let second = try Self.node(results: nil, sources: sources)
        let answer = await Node.get(second, "/insecure/rs:fit:40:40/plain/\(url)@png")
        #expect(answer.status == 200 && answer.type == "image/png")
        let asked = origin.log.requests(to: "/stale.jpg")
        #expect(asked.count == 2 && asked[1].header("If-None-Match") == "\"one\"", "the stale original was not revalidated with its ETag")
        #expect(origin.log.responses.last { $0.path == "/stale.jpg" }?.status == 304)
        await second.sourceStorage?.storage.untilWritten()
        #expect(Self.sourceOutcome(second, "hit") == 1 && Self.sourceOutcome(second, "written") == 1)
        try await origin.shutdown()
    }

    @Test("a stored original with a byte flipped, or another source's, is not used: the node fetches it from the origin and replaces the object")
    func corruptedOriginal() async throws {
        let origin = try await TestOrigin.start()
        let (root, _, sources) = try Self.stores()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:32:32/plain/\(photo.absoluteString)@png"
        let first = try Self.node(results: nil, sources: sources)
        let made = await Node.get(first, path)
        await first.sourceStorage?.storage.untilWritten()
        let file = try #require(try Node.objects(root).first.map { root.appendingPathComponent($0) })
        let stored = try Data(contentsOf: file)
        var flipped = stored
        flipped[flipped.count - 100] ^= 0x01
        try flipped.write(to: file)
        let second = try Self.node(results: nil, sources: sources)
        #expect(await Node.get(second, path) == made)
        #expect(Self.sourceOutcome(second, "invalid") == 1 && origin.log.requests(to: "/photo.jpg").count == 2)
        await second.sourceStorage?.storage.untilWritten()
        let digest = file.lastPathComponent
        #expect(
            StoredObject(decoding: try Data(contentsOf: file), kind: .source, keyDigest: digest)?.body
                == StoredObject(decoding: stored, kind: .source, keyDigest: digest)?.body)
        #expect(StoredObject(decoding: try Data(contentsOf: file), kind: .source, keyDigest: digest) != nil, "the bad object was not replaced")
        try await origin.shutdown()
    }

    @Test("chaos: both stores answering 500s, or slower than their timeout: every request is still answered by fetching and making, each failure counted")
    func chaos() async throws {
        let origin = try await TestOrigin.start()
        let store = try await TestOrigin.start()
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        var failing = TestOrigin.Route(body: Data("<Error><Code>InternalError</Code></Error>".utf8))
        failing.status = 500
        var slow = TestOrigin.Route(body: Data())
        slow.latency = .seconds(10)
        for (index, (what, route)) in [("500s", failing), ("slow", slow)].enumerated() {
            store.setRouteForAnyPath(route)
            var results = SharedStorageSettings(location: .s3(bucket: "fleet"), prefix: "variants")
            results.s3 = S3Configuration(
                region: "us-east-1", endpoint: store.baseURL, credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "never-logged"))
            results.readTimeout = .milliseconds(300)
            var sources = results
            sources.prefix = "sources"
            let node = try Self.node(results: results, sources: sources)
            let size = 30 + index
            let answer = await Node.get(node, "/insecure/rs:fit:\(size):\(size)/plain/\(photo.absoluteString)@png")
            #expect(answer.status == 200 && answer.type == "image/png", "\(what)")
            _ = try DecoderRegistry.standard().decode(answer.body)
            #expect(origin.log.requests(to: "/photo.jpg").count == index + 1, "\(what)")
            #expect(Node.storeOutcome(node, "error") == 1 && Self.sourceOutcome(node, "error") == 1, "\(what)")
            await Self.untilWritten([node])
            #expect(Node.storeOutcome(node, "write_error") == 1 && Self.sourceOutcome(node, "write_error") == 1, "\(what)")
        }
        try await store.shutdown()
        try await origin.shutdown()
    }

    @Test("thumbor's STORAGE names the source store with thumbor-aws's settings; a store Imago cannot be stops the server naming it")
    func settings() throws {
        func storage(_ values: [String: String]) throws -> SharedStorageSettings? {
            try ServerSettings.configuration(values).configuration.sourceStorage
        }
        let aws = try #require(
            try storage([
                "thumbor.conf:STORAGE": "thumbor_aws.storage", "thumbor.conf:AWS_STORAGE_BUCKET_NAME": "originals", "AWS_ACCESS_KEY_ID": "AKID",
                "AWS_SECRET_ACCESS_KEY": "secret",
                "thumbor.conf:AWS_STORAGE_S3_ENDPOINT_URL": "http://127.0.0.1:9000", "thumbor.conf:STORAGE_EXPIRATION_SECONDS": "86400",
            ]))
        #expect(aws.location == .s3(bucket: "originals") && aws.prefix == "st" && aws.timeToLive == .seconds(86400))
        #expect(aws.s3?.endpoint?.absoluteString == "http://127.0.0.1:9000")
        let compatible = try #require(
            try storage([
                "thumbor.conf:STORAGE": "tc_aws.storages.s3_storage", "thumbor.conf:TC_AWS_STORAGE_BUCKET": "tc", "AWS_ACCESS_KEY_ID": "AKID",
                "AWS_SECRET_ACCESS_KEY": "secret",
            ]))
        #expect(compatible.location == .s3(bucket: "tc") && compatible.prefix == "st")
        let file = try #require(try storage(["thumbor.conf:STORAGE": "thumbor.storages.file_storage"]))
        #expect(file.location == .folder(URL(fileURLWithPath: "/tmp/thumbor/storage")))
        #expect(try storage(["thumbor.conf:STORAGE": "thumbor.storages.no_storage"]) == nil)
        let url = try #require(try storage(["IMAGO_SOURCE_STORAGE": "swift://originals/fleet"]))
        #expect(url.location == .swift(container: "originals") && url.prefix == "fleet")
        #expect(try storage([:]) == nil)

        func refusal(_ values: [String: String]) -> String {
            do {
                _ = try ServerSettings.configuration(values)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(refusal(["thumbor.conf:STORAGE": "thumbor.storages.mixed_storage"]).contains("mixed_storage"))
        #expect(refusal(["IMAGO_SOURCE_STORAGE": "abs://bucket"]).contains("--source-storage (IMAGO_SOURCE_STORAGE) is not"))
        #expect(refusal(["IMAGO_SOURCE_STORAGE_TTL": "60"]).contains("--source-storage-ttl (IMAGO_SOURCE_STORAGE_TTL) is set without --source-storage"))
        #expect(refusal(["IMAGO_SOURCE_STORAGE": "file:///srv/o", "IMAGO_SOURCE_STORAGE_TIMEOUT": "-1"]).contains("--source-storage-timeout"))
    }
}
