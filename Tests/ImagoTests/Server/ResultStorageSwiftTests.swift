import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// `--result-storage swift://…` against Debian's OpenStack Swift (TempAuth): the same fleet rules
/// as the folder and S3 stores.
@Suite(
    "result storage: an OpenStack Swift store",
    .enabled(if: ObjectStorePeer.isInstalled && ObjectStorePeer.isSwiftInstalled, "needs the peers' venv and Debian's swift-proxy: make test installs them"),
    .timeLimit(.minutes(6)))
struct ResultStorageSwiftTests {
    static func store(_ peer: ObjectStorePeer.Swift, key: String? = nil) -> SharedStorageSettings {
        var store = SharedStorageSettings(url: "swift://results/fleet")!
        store.swift = SwiftConfiguration(authURL: peer.authURL, user: peer.user, key: key ?? peer.key)
        // Slow under the whole suite: a read that timed out would be a miss, and the test's counts wrong.
        store.readTimeout = .seconds(60)
        return store
    }

    @Test(
        "two nodes over Swift: the second makes and fetches nothing; a flipped object is made anew; 50 concurrent requests over three nodes make once; a wrong key is a miss"
    )
    func sharedContainer() async throws {
        let origin = try await TestOrigin.start()
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:64:64/plain/" + photo.absoluteString + "@png"
        try await withSwiftPeer(["results": []]) { peer in
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
            let swift = SwiftDataLoader(store.swift!)
            let call = ObjectStoreCall()
            let digest = try await ResultStorageTests.digest(of: path)
            let name = "fleet/\(digest.prefix(2))/\(digest)"
            var bytes = try #require(try await swift.object(container: "results", object: name, maxBytes: 1 << 24, call))
            bytes[bytes.count - 1] ^= 0x40
            try await swift.putObject(container: "results", object: name, data: bytes, call)
            let third = try ResultStorageTests.node(store)
            #expect(await ResultStorageTests.get(third, path) == made)
            #expect(ResultStorageTests.storeOutcome(third, "invalid") == 1)
            await third.resultStorage?.untilWritten()
            #expect(try await swift.object(container: "results", object: name, maxBytes: 1 << 24, call) != bytes)

            try await ResultStorageTests.oneMakeForTheFleet(store, origin: origin, gate: "swift")

            let wrong = try ResultStorageTests.node(Self.store(peer, key: "not-the-key"))
            #expect(await ResultStorageTests.get(wrong, path).status == 200)
            #expect(ResultStorageTests.storeOutcome(wrong, "error") == 1)
        }
        try await origin.shutdown()
    }

    @Test(
        "the fleet over Swift: 300 requests over 100 variants on three nodes make each once and fetch each source once; replaced nodes make and fetch nothing")
    func fleetInSwift() async throws {
        let origin = try await TestOrigin.start()
        try await withSwiftPeer(["results": []]) { peer in
            var sources = Self.store(peer)
            sources.prefix = "sources"
            try await SourceStorageTests.fleet(results: Self.store(peer), sources: sources, origin: origin)
        }
        try await origin.shutdown()
    }
}
