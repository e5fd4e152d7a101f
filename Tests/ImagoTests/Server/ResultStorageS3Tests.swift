import AsyncHTTPClient
import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// `--result-storage s3://…` against moto (signatures checked), and the settings that name a
/// store: Imago's URL, imgproxy 4's cache variables, thumbor's `RESULT_STORAGE` with thumbor-aws's.
@Suite(
    "result storage: an S3 store and the settings that name one", .enabled(if: ObjectStorePeer.isInstalled, "needs the peers' venv: make test installs it"),
    .timeLimit(.minutes(6)))
struct ResultStorageS3Tests {
    static func store(_ peer: ObjectStorePeer.S3, secret: String? = nil) -> SharedStorageSettings {
        var store = SharedStorageSettings(url: "s3://results/fleet")!
        store.s3 = S3Configuration(
            region: "us-east-1", endpoint: peer.endpoint,
            credentials: AWSCredentials(accessKeyID: peer.accessKeyID, secretAccessKey: secret ?? peer.secretAccessKey))
        // Slow under the whole suite: a read that timed out would be a miss, and the test's counts wrong.
        store.readTimeout = .seconds(60)
        return store
    }

    @Test(
        "two nodes over moto's S3: the second makes and fetches nothing; a flipped object is made anew and replaced; a conditional PUT writes once; a wrong key is a miss"
    )
    func sharedBucket() async throws {
        let origin = try await TestOrigin.start()
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:64:64/plain/" + photo.absoluteString
        try await withS3Peer(["results": []]) { peer in
            let store = Self.store(peer)
            let first = try ResultStorageTests.node(store)
            let made = await ResultStorageTests.get(first, path, accept: "image/webp")
            #expect(made.status == 200 && made.type == "image/webp")
            await first.resultStorage?.untilWritten()
            #expect(ResultStorageTests.storeOutcome(first, "written") == 1)
            let fetched = origin.log.requests.count

            let second = try ResultStorageTests.node(store)
            #expect(await ResultStorageTests.get(second, path, accept: "image/webp") == made)
            #expect(ResultStorageTests.storeOutcome(second, "hit") == 1 && origin.log.requests.count == fetched)
            #expect(ResultStorageTests.count(second, "imago_serve_encodes_total") == 0)

            // The object as the store holds it, read and rewritten with a byte flipped.
            let s3 = S3DataLoader(store.s3!)
            let call = ObjectStoreCall()
            let storage = try #require(first.resultStorage)
            let listed = try #require(try await Self.onlyObject(s3, call, peer))
            var bytes = try #require(try await s3.object(bucket: "results", key: listed, maxBytes: 1 << 24, call))
            #expect(listed.hasPrefix("fleet/") && storage.object(for: "x").name.hasPrefix("fleet/"))
            bytes[bytes.count - 1] ^= 0x40
            try await s3.putObject(bucket: "results", key: listed, data: bytes, call)
            let third = try ResultStorageTests.node(store)
            #expect(await ResultStorageTests.get(third, path, accept: "image/webp") == made)
            #expect(ResultStorageTests.storeOutcome(third, "invalid") == 1)
            await third.resultStorage?.untilWritten()
            let fourth = try ResultStorageTests.node(store)
            #expect(await ResultStorageTests.get(fourth, path, accept: "image/webp") == made)
            #expect(ResultStorageTests.storeOutcome(fourth, "hit") == 1)

            // S3's conditional PUT, which a lease will take: the first writes, the second is told no.
            #expect(try await s3.putObject(bucket: "results", key: "leases/one", data: Data("a".utf8), onlyIfAbsent: true, call))
            #expect(try await !s3.putObject(bucket: "results", key: "leases/one", data: Data("b".utf8), onlyIfAbsent: true, call))
            #expect(try await s3.object(bucket: "results", key: "leases/one", maxBytes: 16, call) == Data("a".utf8))
            try await s3.deleteObject(bucket: "results", key: "leases/one", call)
            #expect(try await s3.object(bucket: "results", key: "leases/one", maxBytes: 16, call) == nil)

            // A key S3 refuses: a read error, and the variant is made.
            let wrong = try ResultStorageTests.node(Self.store(peer, secret: "wrong-secret-0123456789"))
            #expect(await ResultStorageTests.get(wrong, path, accept: "image/webp").status == 200)
            #expect(ResultStorageTests.storeOutcome(wrong, "error") == 1)
            await wrong.resultStorage?.untilWritten()
            #expect(ResultStorageTests.storeOutcome(wrong, "write_error") == 1)
        }
        try await origin.shutdown()
    }

    @Test("one make for the fleet over moto's S3: the lease is a conditional PUT; 50 concurrent requests over three nodes make the variant once")
    func leaseInS3() async throws {
        let origin = try await TestOrigin.start()
        try await withS3Peer(["results": []]) { peer in
            try await ResultStorageTests.oneMakeForTheFleet(Self.store(peer), origin: origin, gate: "s3")
        }
        try await origin.shutdown()
    }

    @Test(
        "the fleet over moto's S3: 300 requests over 100 variants on three nodes make each once and fetch each source once; replaced nodes make and fetch nothing"
    )
    func fleetInS3() async throws {
        let origin = try await TestOrigin.start()
        try await withS3Peer(["results": []]) { peer in
            var sources = Self.store(peer)
            sources.prefix = "sources"
            try await SourceStorageTests.fleet(results: Self.store(peer), sources: sources, origin: origin)
        }
        try await origin.shutdown()
    }

    /// The one variant object in the bucket (leases aside): found by asking for each name the
    /// listing gives; moto lists with `GET /results?list-type=2`.
    static func onlyObject(_ s3: S3DataLoader, _ call: ObjectStoreCall, _ peer: ObjectStorePeer.S3) async throws -> String? {
        let url = URL(string: "http://127.0.0.1:\(peer.port)/results?list-type=2")!
        let credentials = AWSCredentials(accessKeyID: peer.accessKeyID, secretAccessKey: peer.secretAccessKey)
        var headers = AWSSignatureV4(credentials: credentials, region: "us-east-1").headers(url: url, date: Date())
        headers.remove("Host")
        var request = HTTPClientRequest(url: url.absoluteString)
        for field in headers { request.headers.add(name: field.name, value: field.value) }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        try await client.shutdown()
        #expect(response.status.code == 200)
        return AWSServiceCall.element("Key", in: String(buffer: body))
    }

    @Test("the settings: a URL, imgproxy 4's cache variables, thumbor's RESULT_STORAGE with thumbor-aws's, and each bad one stopping the server naming it")
    func settings() throws {
        func storage(_ values: [String: String]) throws -> SharedStorageSettings? {
            try ServerSettings.configuration(values).configuration.resultStorage
        }
        let s3 = try #require(
            try storage([
                "IMAGO_RESULT_STORAGE": "s3://results/fleet/", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "eu-west-1",
                "IMAGO_RESULT_STORAGE_TTL": "3600", "IMAGO_RESULT_STORAGE_TIMEOUT": "0.25",
            ]))
        #expect(s3.location == .s3(bucket: "results") && s3.prefix == "fleet" && s3.s3?.credentials?.accessKeyID == "AKID")
        #expect(s3.s3?.region == "eu-west-1" && s3.timeToLive == .seconds(3600) && s3.readTimeout == .milliseconds(250))

        let fs = try #require(
            try storage([
                "IMGPROXY_CACHE_USE": "fs", "IMGPROXY_CACHE_FS_ROOT": "/var/cache/imgproxy", "IMGPROXY_CACHE_BUCKET": "b",
                "IMGPROXY_CACHE_PATH_PREFIX": "/p/q/",
            ]))
        #expect(fs.location == .folder(URL(fileURLWithPath: "/var/cache/imgproxy/b")) && fs.prefix == "p/q" && fs.timeToLive == nil)

        let imgproxyS3 = try #require(
            try storage([
                "IMGPROXY_CACHE_USE": "s3", "IMGPROXY_CACHE_BUCKET": "cache", "IMGPROXY_CACHE_S3_ENDPOINT": "127.0.0.1:9000",
                "IMGPROXY_CACHE_S3_REGION": "us-east-2",
            ]))
        #expect(imgproxyS3.location == .s3(bucket: "cache") && imgproxyS3.s3?.endpoint?.absoluteString == "http://127.0.0.1:9000")
        #expect(imgproxyS3.s3?.region == "us-east-2")

        let swift = try #require(
            try storage([
                "IMGPROXY_CACHE_USE": "swift", "IMGPROXY_CACHE_BUCKET": "results", "ST_AUTH": "http://127.0.0.1:8080/auth/v1.0", "ST_USER": "a:u",
                "ST_KEY": "k",
            ]))
        #expect(swift.location == .swift(container: "results") && swift.swift?.authURL?.absoluteString == "http://127.0.0.1:8080/auth/v1.0")
        #expect(try storage(["IMAGO_RESULT_STORAGE": "swift://results/a/b"])?.prefix == "a/b")

        let thumbor = try #require(
            try storage([
                "thumbor.conf:RESULT_STORAGE": "thumbor_aws.result_storage", "thumbor.conf:AWS_RESULT_STORAGE_BUCKET_NAME": "thumbs",
                "thumbor.conf:AWS_RESULT_STORAGE_ROOT_PATH": "/rs", "thumbor.conf:AWS_RESULT_STORAGE_S3_ENDPOINT_URL": "http://127.0.0.1:4566",
                "thumbor.conf:RESULT_STORAGE_EXPIRATION_SECONDS": "86400",
            ]))
        #expect(thumbor.location == .s3(bucket: "thumbs") && thumbor.prefix == "rs" && thumbor.timeToLive == .seconds(86400))
        let thumborDefaults = try #require(
            try storage(["thumbor.conf:RESULT_STORAGE": "thumbor_aws.result_storage", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"]))
        #expect(thumborDefaults.location == .s3(bucket: "thumbor") && thumborDefaults.prefix == "rs")
        let thumborFile = try #require(
            try storage([
                "thumbor.conf:RESULT_STORAGE": "thumbor.result_storages.file_storage", "thumbor.conf:RESULT_STORAGE_FILE_STORAGE_ROOT_PATH": "/srv/rs",
            ]))
        #expect(thumborFile.location == .folder(URL(fileURLWithPath: "/srv/rs")))
        #expect(try storage(["thumbor.conf:RESULT_STORAGE": "thumbor.result_storages.no_storage"]) == nil)
        #expect(try storage([:]) == nil)

        func refusal(_ values: [String: String]) -> String {
            do {
                _ = try ServerSettings.configuration(values)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(
            refusal(["IMAGO_RESULT_STORAGE": "abs://bucket/x"]).contains(
                "--result-storage (IMAGO_RESULT_STORAGE) is not a file:///path, s3://bucket/prefix, gs://bucket/prefix or swift://container/prefix URL"))
        #expect(refusal(["IMAGO_RESULT_STORAGE": "s3://bad..bucket/x"]).contains("--result-storage"))
        // Amazon S3 itself without a key: stopped at start, naming what is missing (no secret in it).
        #expect(
            refusal(["IMAGO_RESULT_STORAGE": "s3://results/x"]).contains(
                "--result-storage (IMAGO_RESULT_STORAGE) s3://results/x needs a key to write with: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"))
        #expect(refusal(["IMAGO_RESULT_STORAGE": "file://relative"]).contains("--result-storage"))
        #expect(refusal(["IMGPROXY_CACHE_USE": "abs"]).contains("IMGPROXY_CACHE_USE"))
        #expect(refusal(["IMGPROXY_CACHE_USE": "gcs"]).contains("--result-storage-bucket, a GCS bucket name"))
        #expect(refusal(["IMGPROXY_CACHE_USE": "fs"]).contains("IMGPROXY_CACHE_FS_ROOT"))
        #expect(refusal(["IMGPROXY_CACHE_USE": "s3"]).contains("--result-storage-bucket"))
        #expect(refusal(["IMGPROXY_CACHE_USE": "swift"]).contains("a Swift container"))
        #expect(refusal(["thumbor.conf:RESULT_STORAGE": "tc_redis.result_storages.redis"]).contains("thumbor.conf:RESULT_STORAGE"))
        #expect(refusal(["IMAGO_RESULT_STORAGE_BUCKET": "b"]).contains("--result-storage-bucket (IMAGO_RESULT_STORAGE_BUCKET) is set without --result-storage"))
        #expect(refusal(["IMAGO_RESULT_STORAGE": "file:///x", "IMAGO_RESULT_STORAGE_TTL": "-1"]).contains("--result-storage-ttl"))
        #expect(refusal(["IMAGO_RESULT_STORAGE": "file:///x", "IMAGO_RESULT_STORAGE_TIMEOUT": "0"]).contains("--result-storage-timeout"))
    }
}
