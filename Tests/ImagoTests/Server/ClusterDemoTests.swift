import Dispatch
import Foundation
import Testing

/// `deploy/cluster-demo` (what `make cluster-demo` runs) at a smaller size: two `imago serve` nodes
/// behind nginx with deploy/nginx.conf, a real origin, a node killed half-way.
@Suite("deploy: nginx in front of two imago serve nodes", .timeLimit(.minutes(5)))
struct ClusterDemoTests {
    struct Summary: Decodable {
        struct AfterKill: Decodable {
            var requests: Int
            var ok: Int
            var node1Encodes: Int
        }
        var requests: Int
        var variants: Int
        var sources: Int
        var ok: Int
        var hits: Int
        var variantsReachingNodes: Int
        var variantsMade: Int
        var variantsMadeMoreThanOnce: Int
        var encodesByNode: [Int]
        var sourceFetches: Int
        var maxFetchesPerSource: Int
        var afterKill: AfterKill
    }

    @Test("each variant is made once across the cluster, nginx serves the repeats, and a killed node's share moves to the other")
    func clusterDemo() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("summary.json")
        let (status, text) = try await Self.run(
            "/bin/bash", "deploy/cluster-demo",
            ["CLUSTER_REQUESTS": "120", "CLUSTER_VARIANTS": "24", "CLUSTER_SOURCE_COUNT": "4", "CLUSTER_JSON": json.path])
        #expect(status == 0, "\(text)")
        let summary = try JSONDecoder().decode(Summary.self, from: Data(contentsOf: json))
        #expect(summary.ok == 120 && summary.sources == 4)
        #expect(summary.variantsReachingNodes == 24 && summary.variantsMade == 24 && summary.variantsMadeMoreThanOnce == 0, "\(text)")
        #expect(summary.encodesByNode.count == 2 && summary.encodesByNode.allSatisfy { $0 > 0 }, "the hash spreads variants over both nodes")
        #expect(summary.hits >= 120 - 2 * 24, "repeats come from nginx's cache")
        #expect(summary.maxFetchesPerSource <= 2 && summary.sourceFetches <= 8, "a source is fetched at most once per node")
        #expect(summary.afterKill.ok == summary.afterKill.requests && summary.afterKill.requests > 0)
        #expect(summary.afterKill.node1Encodes >= summary.encodesByNode[0] + 24, "node 1 made every new variant once node 2 was gone")
    }

    struct FleetSummary: Decodable {
        struct Round: Decodable {
            var ok: Int
            var made: Int
            var sourceFetches: Int
            var sharedHits: Int
        }
        var requests: Int
        var variants: Int
        var sources: Int
        var round1: Round
        var replaced: Round
    }

    @Test(
        "make cluster-demo's fleet: three nodes behind round robin sharing folder stores make each variant once and fetch each source once; replaced with empty disks, they make and fetch nothing"
    )
    func fleetDemo() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("fleet.json")
        let (status, text) = try await Self.run(
            "/usr/bin/python3", "deploy/fleet-demo", ["FLEET_REQUESTS": "60", "FLEET_VARIANTS": "20", "FLEET_SOURCE_COUNT": "4", "FLEET_JSON": json.path])
        #expect(status == 0, "\(text)")
        let summary = try JSONDecoder().decode(FleetSummary.self, from: Data(contentsOf: json))
        #expect(summary.round1.ok == 60 && summary.round1.made == 20, "each variant made once across the fleet: \(text)")
        #expect(summary.round1.sourceFetches == 4, "each source fetched from the origin once for the fleet: \(text)")
        #expect(summary.replaced.ok == 60 && summary.replaced.made == 0 && summary.replaced.sourceFetches == 0, "\(text)")
        #expect(summary.replaced.sharedHits > 0)
    }

    /// Runs the project's `script` with `interpreter`, the debug `imago` as IMAGO and `environment`:
    /// its exit status and everything it printed.
    static func run(_ interpreter: String, _ script: String, _ environment: [String: String]) async throws -> (Int32, String) {
        let project = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../../").standardizedFileURL
        let process = Process()
        process.executableURL = URL(fileURLWithPath: interpreter)
        process.arguments = [project.appendingPathComponent(script).path]
        process.environment = ProcessInfo.processInfo.environment.merging(environment.merging(["IMAGO": ServeCommandTests.executable.path]) { $1 }) {
            $1
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Read and wait on a GCD thread: a demo takes seconds, too long to hold the cooperative pool.
        return await offThePool {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
    }
}
