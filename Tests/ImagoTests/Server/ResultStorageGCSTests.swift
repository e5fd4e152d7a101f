import AsyncHTTPClient
import Foundation
@testable import Imago
import NIOCore
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// `--result-storage gs://…` and `--source-storage gs://…` against gcp-storage-emulator behind
/// a front that checks the service account's OAuth tokens and their scope: the same fleet rules
/// as the folder, S3 and Swift stores.
@Suite(
    "shared storage: a Google Cloud Storage bucket", .enabled(if: ObjectStorePeer.isInstalled, "needs the peers' venv: make test installs it"),
    .timeLimit(.minutes(6)))
struct ResultStorageGCSTests {
    static func store(_ peer: ObjectStorePeer.GCS, key: String? = nil, prefix: String = "fleet") -> SharedStorageSettings {
        var store = SharedStorageSettings(url: "gs://results/\(prefix)")!
        store.gcs = GCSConfiguration(endpoint: peer.endpoint, account: GCSServiceAccount(json: Data((key ?? peer.key).utf8)))
        // Slow under the whole suite: a read that timed out would be a miss, and the test's counts wrong.
        store.readTimeout = .seconds(60)
        return store
    }

    @Test(
        "two nodes over GCS: the second makes and fetches nothing; a flipped object is made anew; 50 concurrent requests over three nodes make once; a key the token endpoint refuses is a miss"
    )
    func sharedBucket() async throws {
        let origin = try await TestOrigin.start()
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:64:64/plain/" + photo.absoluteString + "@png"
        try await withGCSPeer(["results": []]) { peer in
            let store = Self.store(peer)
            let first = try ResultStorageTests.node(store)
            let made = await ResultStorageTests.get(first, path)
            #expect(made.status == 200 && made.type == "image/png")
            await first.resultStorage?.untilWritten()
            #expect(ResultStorageTests.storeOutcome(first, "written") == 1)
            let fetched = origin.log.requests.count
            let second = try ResultStorageTests.node(store)
            #expect(await ResultStorageTests.get(second, path) == made)
            #expect(ResultStorageTests.storeOutcome(second, "hit") == 1 && origin.log.requests.count == fetched)

            // The object flipped in place: made anew, replaced, then read again.
            let gcs = GCSDataLoader(store.gcs!)
            let call = ObjectStoreCall()
            let digest = try await ResultStorageTests.digest(of: path)
            let name = "fleet/\(digest.prefix(2))/\(digest)"
            var bytes = try #require(try await gcs.object(bucket: "results", name: name, maxBytes: 1 << 24, call))
            bytes[bytes.count - 1] ^= 0x40
            try await gcs.putObject(bucket: "results", name: name, data: bytes, call)
            let third = try ResultStorageTests.node(store)
            #expect(await ResultStorageTests.get(third, path) == made)
            #expect(ResultStorageTests.storeOutcome(third, "invalid") == 1)
            await third.resultStorage?.untilWritten()
            #expect(try await gcs.object(bucket: "results", name: name, maxBytes: 1 << 24, call) != bytes)

            // A lease is a create that GCS lets through once; it is removed as any object.
            #expect(try await gcs.putObject(bucket: "results", name: "lease-check", data: Data("a".utf8), onlyIfAbsent: true, call))
            #expect(try await !gcs.putObject(bucket: "results", name: "lease-check", data: Data("b".utf8), onlyIfAbsent: true, call))
            #expect(try await gcs.object(bucket: "results", name: "lease-check", maxBytes: 16, call) == Data("a".utf8))
            try await gcs.deleteObject(bucket: "results", name: "lease-check", call)
            try await gcs.deleteObject(bucket: "results", name: "lease-check", call)
            #expect(try await gcs.object(bucket: "results", name: "lease-check", maxBytes: 16, call) == nil)

            try await ResultStorageTests.oneMakeForTheFleet(store, origin: origin, gate: "gcs")

            let wrong = try ResultStorageTests.node(Self.store(peer, key: peer.wrongKey))
            #expect(await ResultStorageTests.get(wrong, path).status == 200)
            #expect(ResultStorageTests.storeOutcome(wrong, "error") == 1)
        }
        try await origin.shutdown()
    }

    @Test("a token of the read-only scope (the sources' loader) cannot write to the bucket: GCS's 403, named")
    func readOnlyScope() async throws {
        try await withGCSPeer(["results": []]) { peer in
            let account = try #require(GCSServiceAccount(json: Data(peer.key.utf8)))
            let assertion = try GCSAccessToken.assertion(account, issuedAt: Date())
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            var form = HTTPClientRequest(url: account.tokenURL.absoluteString)
            form.method = .POST
            form.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            form.body = .bytes(ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
            let answer = try await client.execute(form, timeout: .seconds(30)).body.collect(upTo: 1 << 16)
            let token = try #require((try JSONSerialization.jsonObject(with: Data(String(buffer: answer).utf8)) as? [String: Any])?["access_token"] as? String)
            var upload = HTTPClientRequest(url: "\(peer.endpoint)/upload/storage/v1/b/results/o?uploadType=media&name=x")
            upload.method = .POST
            upload.headers.add(name: "Authorization", value: "Bearer " + token)
            upload.body = .bytes(ByteBuffer(string: "x"))
            #expect(try await client.execute(upload, timeout: .seconds(30)).status.code == 403)
            try await client.shutdown()
            // The store's own calls ask for the read-write scope, so the same account writes.
            let gcs = GCSDataLoader(GCSConfiguration(endpoint: peer.endpoint, account: account))
            #expect(try await gcs.putObject(bucket: "results", name: "x", data: Data("x".utf8), ObjectStoreCall()))
            do {
                _ = try await GCSDataLoader(GCSConfiguration(endpoint: peer.endpoint, account: nil)).putObject(
                    bucket: "results", name: "y", data: Data("y".utf8), ObjectStoreCall())
                Issue.record("an upload without a token was taken")
            } catch let error as ImagoError {
                #expect(error.code == .httpStatus(401) && (error.reason ?? "").contains("GCS 401: Invalid Credentials"))
                #expect(error.url?.absoluteString == "gs://results/y")
            }
        }
    }

    @Test(
        "the fleet over GCS: 300 requests over 100 variants on three nodes make each once and fetch each source once; replaced nodes make and fetch nothing")
    func fleetInGCS() async throws {
        let origin = try await TestOrigin.start()
        try await withGCSPeer(["results": []]) { peer in
            try await SourceStorageTests.fleet(results: Self.store(peer), sources: Self.store(peer, prefix: "sources"), origin: origin)
        }
        try await origin.shutdown()
    }

    @Test("the settings: a gs:// URL or imgproxy 4's gcs cache, signing as --gcs-key, IMGPROXY_CACHE_GCS_KEY or GOOGLE_APPLICATION_CREDENTIALS")
    func settings() throws {
        let key = try temporaryDirectory().appendingPathComponent("key.json")
        defer { try? FileManager.default.removeItem(at: key.deletingLastPathComponent()) }
        // The settings read the account; the key is only parsed when a token is asked for.
        let json =
            #"{"type":"service_account","client_email":"a@b.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"}"#
        try Data(json.utf8).write(to: key)
        func storage(
            _ values: [String: String], _ setting: KeyPath<ServerConfiguration, SharedStorageSettings?> = \.resultStorage
        ) throws
            -> SharedStorageSettings?
        {
            try ServerSettings.configuration(values).configuration[keyPath: setting]
        }
        let url = try #require(
            try storage([
                "IMAGO_RESULT_STORAGE": "gs://results/fleet", "IMAGO_USE_GCS": "true", "IMAGO_GCS_KEY": key.path, "IMAGO_GCS_ENDPOINT": "127.0.0.1:4443",
            ]))
        #expect(url.location == .gcs(bucket: "results") && url.prefix == "fleet" && url.description == "gs://results/fleet")
        #expect(url.gcs?.account?.clientEmail == "a@b.iam.gserviceaccount.com" && url.gcs?.endpoint.absoluteString == "http://127.0.0.1:4443")

        let imgproxy = try #require(
            try storage([
                "IMGPROXY_CACHE_USE": "gcs", "IMGPROXY_CACHE_BUCKET": "cache", "IMGPROXY_CACHE_GCS_KEY": json,
                "IMGPROXY_CACHE_GCS_ENDPOINT": "http://127.0.0.1:9023/storage/v1",
            ]))
        #expect(imgproxy.location == .gcs(bucket: "cache") && imgproxy.gcs?.account?.clientEmail == "a@b.iam.gserviceaccount.com")
        #expect(imgproxy.gcs?.endpoint.absoluteString == "http://127.0.0.1:9023/storage/v1")

        let standard = try #require(try storage(["IMAGO_SOURCE_STORAGE": "gs://originals", "GOOGLE_APPLICATION_CREDENTIALS": key.path], \.sourceStorage))
        #expect(standard.location == .gcs(bucket: "originals") && standard.gcs?.account != nil)
        #expect(standard.gcs?.endpoint == GCSConfiguration.googleEndpoint)

        func refusal(_ values: [String: String]) -> String {
            do {
                _ = try ServerSettings.configuration(values)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(refusal(["IMAGO_RESULT_STORAGE": "gs://Bad_Bucket!"]).contains("--result-storage (IMAGO_RESULT_STORAGE) is not"))
        #expect(
            refusal(["IMAGO_SOURCE_STORAGE": "gs://o", "IMAGO_SOURCE_STORAGE_KEY": "{\"nope\":1}"]).contains(
                "--source-storage-key (IMAGO_SOURCE_STORAGE_KEY) is not a service account key"))
        #expect(refusal(["IMAGO_RESULT_STORAGE": "gs://o", "IMAGO_RESULT_STORAGE_ENDPOINT": "::"]).contains("--result-storage-endpoint"))
        // Google's endpoint and no account: stopped at start; an emulator's endpoint may be unsigned.
        #expect(
            refusal(["IMAGO_SOURCE_STORAGE": "gs://o"]).contains(
                "--source-storage (IMAGO_SOURCE_STORAGE) gs://o needs a service account to write with: --source-storage-key (IMAGO_SOURCE_STORAGE_KEY), --gcs-key or GOOGLE_APPLICATION_CREDENTIALS"
            ))
        #expect(try storage(["IMAGO_SOURCE_STORAGE": "gs://o", "STORAGE_EMULATOR_HOST": "127.0.0.1:9023"], \.sourceStorage)?.gcs?.account == nil)
    }
}
