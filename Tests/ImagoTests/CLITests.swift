import Foundation
import ImagoTestSupport
import Testing

/// Runs the built `imago` executable, which `swift build --build-tests` puts beside the test bundle.
private func imago(_ arguments: [String]) throws -> (status: Int32, output: Data) {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let process = Process()
    process.executableURL = directory.appendingPathComponent("imago")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, output)
}

private struct FetchReport: Decodable {
    struct Image: Decodable {
        var url: String
        var status: String
        var error: String?
        var bytes: Int
        var source: String?
    }
    struct Totals: Decodable {
        var networkRequests: Int
        var coalesced: Int
        var bytes: Int
        var errors: Int
        var seconds: Double
    }
    var images: [Image]
    var totals: Totals
}

@Suite("imago CLI", .timeLimit(.minutes(1)))
struct CLITests {
    @Test("fetch --json reports each URL and the totals; a repeated URL is one transfer; --out writes files")
    func fetchJSON() async throws {
        let origin = try await TestOrigin.start()
        let a = origin.serve(Data(repeating: 1, count: 1000), at: "/a.jpg")
        let b = origin.serve(Data(repeating: 2, count: 2000), at: "/b.png")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let missing = origin.url("/missing.gif")
        let run = try imago(["fetch", "--json", "--out", out.path, a.absoluteString, a.absoluteString, b.absoluteString, missing.absoluteString])
        #expect(run.status == 1) // one URL failed
        let report = try JSONDecoder().decode(FetchReport.self, from: run.output)
        #expect(report.images.map(\.status) == ["ok", "ok", "ok", "error"])
        #expect(report.images.map(\.bytes) == [1000, 1000, 2000, 0])
        #expect(report.images[0].source == "network")
        #expect(report.images[3].error?.contains("HTTP status 404") == true)
        #expect(report.totals.networkRequests == 3)
        #expect(report.totals.coalesced == 1)
        #expect(report.totals.bytes == 3000)
        #expect(report.totals.errors == 1)
        #expect(origin.log.requests.count == 3)
        #expect(try Data(contentsOf: out.appendingPathComponent("b.png")) == Data(repeating: 2, count: 2000))
        #expect(try Data(contentsOf: out.appendingPathComponent("2-a.jpg")).count == 1000)
        try await origin.shutdown()
    }

    @Test("demo --json: the cold phase loads every image, the coalesced phase makes one transfer")
    func demoJSON() throws {
        let images = FileManager.default.temporaryDirectory.appendingPathComponent("imago-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: images) }
        for index in 0..<5 { try Data(repeating: UInt8(index), count: 1000 * (index + 1)).write(to: images.appendingPathComponent("\(index).jpg")) }
        let run = try imago(["demo", "--json", "--rate", "0", "--images", images.path])
        #expect(run.status == 0)
        struct Phase: Decodable { var phase: String; var images: Int; var networkRequests: Int; var coalesced: Int; var bytes: Int; var errors: Int }
        let phases = try JSONDecoder().decode([Phase].self, from: run.output)
        #expect(phases.map(\.phase) == ["cold", "coalesced"])
        #expect(phases[0].images == 5 && phases[0].networkRequests == 5 && phases[0].bytes == 15_000 && phases[0].errors == 0)
        #expect(phases[1].images == 50 && phases[1].networkRequests == 1 && phases[1].coalesced == 49 && phases[1].bytes == 5000)
    }
}
