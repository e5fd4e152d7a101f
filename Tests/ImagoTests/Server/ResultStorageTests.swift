import Foundation
import Glibc
import HTTPTypes
import Imago
import ImagoTestSupport
import NIOCore
import Testing

@testable import ImagoServer

/// `--result-storage`: nodes that share a store of made variants (a folder here, moto's S3 in
/// ``ResultStorageS3Tests``) make each variant once, whatever node a request reaches, and never
/// serve what a store holds without validating it.
@Suite("result storage: variants shared by a fleet's nodes", .timeLimit(.minutes(6)))
struct ResultStorageTests {
    /// A node: a service of its own (memory, no disk) over the shared store.
    static func node(
        _ store: SharedStorageSettings, signer: URLSigner = URLSigner(pairs: []), _ configure: (inout ServerConfiguration) -> Void = { _ in }
    )
        throws -> ImageService
    {
        var configuration = ServerConfiguration()
        configuration.allowsPrivateAddresses = true
        configuration.resultStorage = store
        configuration.signer = signer
        configure(&configuration)
        return try ImageService(configuration: configuration)
    }

    /// The count `/metrics` shows for a line starting with `prefix` (0 when there is none).
    static func count(_ service: ImageService, _ prefix: String) -> Int {
        let line = service.metrics.exposition().split(separator: "\n").first { $0.hasPrefix(prefix + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    static func storeOutcome(_ service: ImageService, _ outcome: String) -> Int {
        count(service, "imago_serve_result_storage_total{outcome=\"\(outcome)\"}")
    }

    struct Answer: Equatable {
        var status: Int
        var type: String?
        var etag: String?
        var vary: String?
        var body: Data
    }

    static func get(_ service: ImageService, _ path: String, accept: String? = nil) async -> Answer {
        let response = await service.respond(to: ServiceRequest(path: path, accept: accept))
        let fields = response.headerFields
        return Answer(
            status: response.status, type: fields[.contentType], etag: fields[.eTag], vary: fields[.vary], body: Data(buffer: response.body))
    }

    /// The object files under `root`: their paths, each named by its key's digest.
    static func objects(_ root: URL) throws -> Set<String> {
        Set(try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { $0.split(separator: "/").last?.count == 64 })
    }

    /// The digest a variant of `path` is stored under (nodes of default settings): the name of the
    /// object a node over a folder of its own writes.
    static func digest(of path: String) async throws -> String {
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let node = try Self.node(store)
        _ = await Self.get(node, path)
        await node.resultStorage?.untilWritten()
        return String(try #require(try Self.objects(root).first?.split(separator: "/").last))
    }

    static func folder() throws -> (URL, SharedStorageSettings) {
        let root = try temporaryDirectory()
        return (root, SharedStorageSettings(location: .folder(root), prefix: "variants"))
    }

    @Test(
        "a folder store shared by two nodes: the second makes nothing and fetches nothing, with the same bytes, type, ETag and Vary; Accept's formats are kept apart"
    )
    func twoNodes() async throws {
        let origin = try await TestOrigin.start()
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:64:64/plain/" + photo.absoluteString

        let first = try Self.node(store)
        let webp = await Self.get(first, path, accept: "image/webp,*/*")
        let jpeg = await Self.get(first, path, accept: "image/jpeg")
        #expect(webp.status == 200 && webp.type == "image/webp" && webp.vary == "Accept")
        #expect(jpeg.status == 200 && jpeg.type == "image/jpeg" && jpeg.vary == "Accept")
        await first.resultStorage?.untilWritten()
        #expect(Self.storeOutcome(first, "written") == 2 && Self.storeOutcome(first, "miss") == 2)
        let fetched = origin.log.requests.count

        let second = try Self.node(store)
        #expect(await Self.get(second, path, accept: "image/webp,*/*") == webp)
        #expect(await Self.get(second, path, accept: "image/jpeg") == jpeg)
        #expect(origin.log.requests.count == fetched, "the second node went to the origin")
        #expect(Self.storeOutcome(second, "hit") == 2)
        #expect(Self.count(second, "imago_serve_images_total{from=\"variant-shared\"}") == 2)
        #expect(Self.count(second, "imago_serve_encodes_total") == 0)
        // Kept in memory after the read: the store is not asked again.
        #expect(await Self.get(second, path, accept: "image/webp,*/*") == webp)
        #expect(Self.storeOutcome(second, "hit") == 2)
        // The objects: named by the key's digest under the prefix, nothing else written.
        let names = try Self.objects(root)
        #expect(names.count == 2 && names.allSatisfy { $0.hasPrefix("variants/" + $0.split(separator: "/").last!.prefix(2) + "/") })
        try await origin.shutdown()
    }

    @Test("thumbor's RESULT_STORAGE_STORES_UNSAFE false: /unsafe/ URLs neither read nor write the store; true (Imago's default): they do")
    func thumborUnsafe() async throws {
        let origin = try await TestOrigin.start()
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/thumbor/unsafe/32x32/" + photo.absoluteString
        for storesUnsafe in [false, true] {
            let node = try Self.node(store) {
                $0.thumborPath = "/thumbor"
                $0.resultStorageStoresUnsafe = storesUnsafe
            }
            let answer = await Self.get(node, path)
            #expect(answer.status == 200 && answer.type == "image/jpeg")
            await node.resultStorage?.untilWritten()
            let touched = storesUnsafe ? 1 : 0
            #expect(Self.storeOutcome(node, "miss") == touched && Self.storeOutcome(node, "written") == touched, "stores unsafe: \(storesUnsafe)")
            #expect(try Self.objects(root).count == touched)
        }
        #expect(try ServerSettings.configuration(["thumbor.conf:RESULT_STORAGE_STORES_UNSAFE": "false"]).configuration.resultStorageStoresUnsafe == false)
        try await origin.shutdown()
    }

    @Test("rotating the key and salt (new signatures for the same URLs) keeps every stored variant")
    func keysRotate() async throws {
        let origin = try await TestOrigin.start()
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let unsigned = "/rs:fill:48:48/plain/" + photo.absoluteString + "@png"
        let old = try URLSigner(hexKeys: ["736563726574"], hexSalts: ["68656C6C6F"])
        let new = try URLSigner(hexKeys: ["6e65772d6b6579"], hexSalts: ["6e65772d73616c74"])
        func signed(_ signer: URLSigner) -> String { "/" + URLSigner.signature(for: unsigned, pair: signer.pairs[0]) + unsigned }
        #expect(signed(old) != signed(new))

        let before = try Self.node(store, signer: old)
        let made = await Self.get(before, signed(old))
        #expect(made.status == 200)
        await before.resultStorage?.untilWritten()
        let after = try Self.node(store, signer: new)
        #expect(await Self.get(after, signed(old)).status == 403)
        #expect(await Self.get(after, signed(new)) == made)
        #expect(Self.storeOutcome(after, "hit") == 1 && Self.count(after, "imago_serve_encodes_total") == 0)
        try await origin.shutdown()
    }

    @Test("a stored object with a byte flipped, cut short, or another key's is not served: the variant is made and the object replaced")
    func corruptedObjects() async throws {
        let origin = try await TestOrigin.start()
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:40:40/plain/" + photo.absoluteString + "@png"
        let other = "/insecure/rs:fit:41:41/plain/" + photo.absoluteString + "@png"

        let maker = try Self.node(store)
        let made = await Self.get(maker, path)
        await maker.resultStorage?.untilWritten()
        let ours = try Self.objects(root)
        _ = await Self.get(maker, other)
        await maker.resultStorage?.untilWritten()
        let file = root.appendingPathComponent(try #require(ours.first))
        let good = try Data(contentsOf: file)
        let otherFile = root.appendingPathComponent(try #require(try Self.objects(root).subtracting(ours).first))

        var flipped = good
        flipped[flipped.count - 10] ^= 0x01
        let corruptions = [("flipped", flipped), ("cut", good.prefix(good.count - 100)), ("another key's", try Data(contentsOf: otherFile))]
        for (what, bytes) in corruptions {
            try bytes.write(to: file)
            let node = try Self.node(store)
            #expect(await Self.get(node, path) == made, "\(what)")
            #expect(Self.storeOutcome(node, "invalid") == 1 && Self.storeOutcome(node, "hit") == 0, "\(what)")
            await node.resultStorage?.untilWritten()
            #expect(try Data(contentsOf: file).count == good.count, "\(what): not replaced")
            let next = try Self.node(store)
            #expect(await Self.get(next, path) == made, "\(what)")
            #expect(Self.storeOutcome(next, "hit") == 1, "\(what)")
        }
        try await origin.shutdown()
    }

    @Test("expiry: an object stored longer ago than --result-storage-ttl is made again and removed; the folder sweep removes expired files")
    func expiry() async throws {
        let origin = try await TestOrigin.start()
        var (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        store.timeToLive = .seconds(60)
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:40:40/plain/" + photo.absoluteString + "@png"
        let maker = try Self.node(store)
        _ = await Self.get(maker, path)
        await maker.resultStorage?.untilWritten()
        let storage = try #require(maker.resultStorage)
        let name = try #require(try Self.objects(root).first)
        let digest = String(name.split(separator: "/").last ?? "")
        let file = root.appendingPathComponent(name)
        var result = try #require(StoredObject(decoding: try Data(contentsOf: file), kind: .result, keyDigest: digest))

        // Stored two minutes ago: expired, removed, made again and stored anew.
        result.storedAt -= 120
        try result.encoded().write(to: file)
        let node = try Self.node(store)
        #expect(await Self.get(node, path).status == 200)
        #expect(Self.storeOutcome(node, "expired") == 1)
        await node.resultStorage?.untilWritten()
        let renewed = try #require(StoredObject(decoding: try Data(contentsOf: file), kind: .result, keyDigest: digest))
        #expect(renewed.storedAt > result.storedAt)

        // The sweep goes by the file's time: one written two minutes ago goes, a new one stays.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: file.path)
        let fresh = root.appendingPathComponent("variants/zz/fresh")
        try FileManager.default.createDirectory(at: fresh.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: fresh)
        #expect(storage.removeExpired() == 1)
        #expect(!FileManager.default.fileExists(atPath: file.path) && FileManager.default.fileExists(atPath: fresh.path))
        try await origin.shutdown()
    }

    /// 50 concurrent requests for one new variant spread over three nodes of `store`: the first
    /// node's make is held at the origin until both others wait on its lease; then one make, one
    /// fetch, 50 identical answers.
    static func oneMakeForTheFleet(_ store: SharedStorageSettings, origin: TestOrigin, gate: String) async throws {
        // A busy machine (the whole suite at once) must not turn a slow read into a miss that
        // makes the variant beside the lease: that would wait at the gate this test holds.
        var store = store
        store.readTimeout = .seconds(60)
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/\(gate).jpg")
        let path = "/insecure/rs:fill:72:48/plain/" + photo.absoluteString + "?gate=\(gate)@webp"
        let nodes = try (0..<3).map { _ in try Self.node(store) }
        let fetched = origin.log.requests.count
        let first = Task { await Self.get(nodes[0], path) }
        await origin.wait { $0.requests.count == fetched + 1 }
        let answers = Task {
            await withTaskGroup(of: Answer.self) { group in
                for index in 1..<50 { group.addTask { await Self.get(nodes[index % 3], path) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        await nodes[1].resultStorage?.untilWaitingOnLeases(1)
        await nodes[2].resultStorage?.untilWaitingOnLeases(1)
        origin.release(gate)
        let all = [await first.value] + (await answers.value)
        #expect(all.count == 50 && all[0].status == 200 && all[0].type == "image/webp")
        #expect(all.allSatisfy { $0 == all[0] }, "\(Set(all.map(\.status)))")
        #expect(nodes.map { Self.count($0, "imago_serve_encodes_total") }.reduce(0, +) == 1)
        #expect(origin.log.requests.count == fetched + 1, "the source was fetched more than once")
        #expect(Self.storeOutcome(nodes[0], "lease_taken") == 1)
        #expect(Self.storeOutcome(nodes[1], "lease_waited") == 1 && Self.storeOutcome(nodes[2], "lease_waited") == 1)
        for node in nodes { await node.resultStorage?.untilWritten() }
    }

    @Test("one make for the fleet: 50 concurrent requests for a new variant over three nodes of a folder store make it once")
    func leaseInAFolder() async throws {
        let origin = try await TestOrigin.start()
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        try await Self.oneMakeForTheFleet(store, origin: origin, gate: "folder")
        // The lease is gone once the variant is written.
        let leases = root.appendingPathComponent("variants/leases").path
        #expect((try? FileManager.default.contentsOfDirectory(atPath: leases))?.isEmpty ?? true)
        try await origin.shutdown()
    }

    @Test("a lease whose holder died (never released) is taken over once it expires, and the variant made; a lease that cannot be read is not a holder")
    func deadHolder() async throws {
        let origin = try await TestOrigin.start()
        var (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        store.leaseDuration = .seconds(30)
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:40:40/plain/" + photo.absoluteString + "@png"
        let digest = try await Self.digest(of: path)
        let node = try Self.node(store)
        let storage = try #require(node.resultStorage)
        let lease = root.appendingPathComponent("variants/leases/\(digest)")
        try FileManager.default.createDirectory(at: lease.deletingLastPathComponent(), withIntermediateDirectories: true)
        // A dead node's lease, expired a second ago: taken over at once.
        try SharedStorage.LeaseRecord(holder: "dead-node", expires: Int64(Date().timeIntervalSince1970) - 1).encoded.write(to: lease)
        #expect(await Self.get(node, path).status == 200)
        #expect(Self.storeOutcome(node, "lease_expired") == 1 && Self.storeOutcome(node, "lease_taken") == 1)
        await storage.untilWritten()
        #expect(!FileManager.default.fileExists(atPath: lease.path))
        #expect(SharedStorage.LeaseRecord(Data("imago-lease 1\nholder x\nexpires soon\n".utf8)) == nil)

        // A holder that dies mid-make: its lease still stands when the request comes, which
        // waits (holding no worker) until it expires, then takes it over and makes the variant.
        let (laterRoot, laterStore) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: laterRoot) }
        let later = try Self.node(laterStore)
        let standing = laterRoot.appendingPathComponent("variants/leases/\(digest)")
        try FileManager.default.createDirectory(at: standing.deletingLastPathComponent(), withIntermediateDirectories: true)
        try SharedStorage.LeaseRecord(holder: "dead-node", expires: Int64(Date().timeIntervalSince1970) + 1).encoded.write(to: standing)
        #expect(await Self.get(later, path).status == 200)
        // Whether the request came before the lease's second was up (it waited) or after depends on
        // the machine's load: either way the lease is taken over once, and the variant made once.
        #expect(Self.storeOutcome(later, "lease_wait") <= 1 && Self.storeOutcome(later, "lease_expired") == 1)
        #expect(later.workInFlight == 0 && Self.count(later, "imago_serve_encodes_total") == 1)
        try await origin.shutdown()
    }

    @Test("a request refused because every worker is busy (429) ends the lease it took, so other nodes need not wait for it to expire")
    func refusedEndsLease() async throws {
        let origin = try await TestOrigin.start()
        let (root, store) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let node = try Self.node(store) {
            $0.workers = 1
            $0.requestsQueueSize = 0
        }
        let leases = root.appendingPathComponent("variants/leases")
        let held = Task { await Self.get(node, "/insecure/rs:fit:40:40/plain/" + photo.absoluteString + "?gate=busy@png") }
        await origin.wait { $0.requests.count == 1 }
        #expect(try FileManager.default.contentsOfDirectory(atPath: leases.path).count == 1)
        let refused = await Self.get(node, "/insecure/rs:fit:41:41/plain/" + photo.absoluteString + "@png")
        #expect(refused.status == 429)
        #expect(try FileManager.default.contentsOfDirectory(atPath: leases.path).count == 1, "the refused request's lease is still there")
        origin.release("busy")
        #expect(await held.value.status == 200)
        await node.resultStorage?.untilWritten()
        #expect(try FileManager.default.contentsOfDirectory(atPath: leases.path).isEmpty)
        try await origin.shutdown()
    }

    @Test("a store that refuses connections, or accepts and never answers: every request is answered by making the variant, within the read timeout")
    func failingStores() async throws {
        let origin = try await TestOrigin.start()
        let photo = origin.serve(try Corpus.data("jpeg/video-001.jpeg"), at: "/photo.jpg")
        let path = "/insecure/rs:fit:40:40/plain/" + photo.absoluteString + "@png"
        let silent = try SilentListener()
        defer { silent.close() }
        let refused = try SilentListener()
        let refusedPort = refused.port
        refused.close()
        for (what, port) in [("silent", silent.port), ("refusing", refusedPort)] {
            var store = SharedStorageSettings(location: .s3(bucket: "results"))
            store.s3 = S3Configuration(
                region: "us-east-1", endpoint: URL(string: "http://127.0.0.1:\(port)"),
                credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "never-logged-secret"))
            store.readTimeout = .milliseconds(500)
            let node = try Self.node(store)
            let answer = await Self.get(node, path)
            #expect(answer.status == 200 && answer.type == "image/png", "\(what)")
            #expect(Self.storeOutcome(node, "error") == 1, "\(what)")
            await node.resultStorage?.untilWritten()
            #expect(Self.storeOutcome(node, "write_error") == 1, "\(what)")
        }
        try await origin.shutdown()
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes connections into its
/// backlog, and nothing is ever answered.
final class SilentListener: Sendable {
    let socket: Int32
    let port: Int

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 16) == 0 else {
            _ = Glibc.close(socket)
            throw CocoaError(.fileWriteUnknown)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { throw CocoaError(.fileWriteUnknown) }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(socket) }
}
