import AsyncHTTPClient
import Foundation
import Glibc
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// A node killed while it holds the fleet's leases: the others wait for it no longer than the
/// leases stand, take them over, and make the variant; nothing the dead node began is ever read.
@Suite("shared stores: a lease holder killed mid-make", .timeLimit(.minutes(6)))
struct LeaseHolderKilledTests {
    @Test(
        "an imago serve node holding the variant's and the source's leases, its fetch held at the origin, is killed with SIGKILL: another node takes both leases over once they expire and makes the variant"
    )
    func killedHolder() async throws {
        let origin = try await TestOrigin.start()
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        var route = TestOrigin.Route(body: try Corpus.data("jpeg/video-001.jpeg"))
        route.gate = "held"
        origin.setRoute("/held.jpg", route)
        let (results, sources) = (root.appendingPathComponent("variants"), root.appendingPathComponent("sources"))
        // --timeout 30: the dead node's leases stand 40 s (the make's time and its write's). A
        // shorter one let the holder give up at the gate on its own while this test waited its
        // turn on a busy machine (the whole suite at once), and its leases were gone when looked at.
        // A store read that timed out there would be a miss without a lease: 60 s.
        let (holder, port, _) = try await GracefulStopTests.start([
            "IMAGO_RESULT_STORAGE": "file://" + results.path, "IMAGO_SOURCE_STORAGE": "file://" + sources.path, "IMAGO_TIMEOUT": "30",
            "IMAGO_SOURCE_TIMEOUT": "30",
            "IMAGO_RESULT_STORAGE_TIMEOUT": "60", "IMAGO_SOURCE_STORAGE_TIMEOUT": "60",
        ])
        try #require(port > 0)
        let path = "/insecure/rs:fit:40:40/plain/\(origin.url("/held.jpg").absoluteString)@png"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let asked = Task { try? await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(60)) }
        await origin.wait { $0.requests(to: "/held.jpg").count == 1 }
        let leases = [results, sources].map { $0.appendingPathComponent("leases") }
        #expect(leases.allSatisfy { ((try? FileManager.default.contentsOfDirectory(atPath: $0.path)) ?? []).count == 1 }, "the holder's two leases")
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        _ = await asked.value
        origin.release("held")

        // Another node, which waits for a lease up to 60 s (its requests' deadline 90 s): the dead
        // one's expire first.
        var configuration = ServerConfiguration()
        configuration.allowsPrivateAddresses = true
        configuration.workTimeout = .seconds(90)
        for (setting, folder) in [(\ServerConfiguration.resultStorage, results), (\ServerConfiguration.sourceStorage, sources)] {
            var store = SharedStorageSettings(location: .folder(folder))
            (store.leaseDuration, store.maxLeaseWait, store.readTimeout) = (.seconds(60), .seconds(60), .seconds(60))
            configuration[keyPath: setting] = store
        }
        let node = try ImageService(configuration: configuration)
        let answer = await ResultStorageTests.get(node, path)
        #expect(answer.status == 200 && answer.type == "image/png")
        _ = try DecoderRegistry.standard().decode(answer.body)
        #expect(ResultStorageTests.storeOutcome(node, "lease_expired") == 1)
        #expect(SourceStorageTests.sourceOutcome(node, "lease_expired") == 1)
        #expect(origin.log.requests(to: "/held.jpg").count == 2)
        await SourceStorageTests.untilWritten([node])
        // Nothing half-written: every object there reads whole, and no lease is left.
        for folder in [results, sources] {
            let objects = try ResultStorageTests.objects(folder).filter { !$0.hasPrefix("leases/") }
            #expect(objects.count == 1, "\(folder.lastPathComponent): \(objects)")
        }
        #expect(leases.allSatisfy { ((try? FileManager.default.contentsOfDirectory(atPath: $0.path)) ?? []).isEmpty })
        try await client.shutdown()
        try await origin.shutdown()
    }
}
