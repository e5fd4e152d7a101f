import Dispatch
import Foundation
import Imago
import ImagoTestSupport
import Testing

/// Runs the built `imago` executable, which `swift build --build-tests` puts beside the test bundle.
func imago(_ arguments: [String], withStandardError: Bool = false) async throws -> (status: Int32, output: Data) {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago")
    return try await runProcess(executable, arguments, withStandardError: withStandardError)
}

private struct FetchReport: Decodable {
    struct Image: Decodable {
        var url: String
        var status: String
        var error: String?
        var bytes: Int
        var source: String?
        var width: Int?
        var height: Int?
        var format: String?
        var seconds: Double?
    }
    struct Totals: Decodable {
        var networkRequests: Int
        var coalesced: Int
        var diskHits: Int
        var revalidated: Int
        var bytes: Int
        var errors: Int
        var seconds: Double
    }
    var images: [Image]
    var totals: Totals
}

@Suite("imago CLI", .timeLimit(.minutes(6)))
struct CLITests {
    @Test("fetch --json reports each URL and the totals; a repeated URL is one transfer; --out writes files")
    func fetchJSON() async throws {
        let origin = try await TestOrigin.start()
        let jpeg = try Corpus.data("jpeg/video-001.jpeg"), png = try Corpus.data("png/basn6a08.png")
        let a = origin.serve(jpeg, at: "/a.jpg")
        let b = origin.serve(png, at: "/b.png")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("imago-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let missing = origin.url("/missing.gif")
        let run = try await imago([
            "fetch", "--json", "--no-disk-cache", "--out", out.path, a.absoluteString, a.absoluteString, b.absoluteString, missing.absoluteString,
            "not a url",
        ])
        #expect(run.status == 1)  // URLs failed
        let report = try JSONDecoder().decode(FetchReport.self, from: run.output)
        #expect(report.images.map(\.status) == ["ok", "ok", "ok", "error", "error"])
        #expect(report.images.map(\.bytes) == [jpeg.count, jpeg.count, png.count, 0, 0])
        // The unparsable input is its own error; the others loaded.
        #expect(report.images[4].url == "not a url")
        #expect(report.images[4].error?.contains("not a URL") == true)
        // Every handle that was made says how long it took; slashes are not escaped.
        #expect(report.images.prefix(4).allSatisfy { ($0.seconds ?? -1) >= 0 })
        #expect(report.images[4].seconds == nil)
        #expect(String(decoding: run.output, as: UTF8.self).contains("\"url\" : \"http://127.0.0.1"))
        #expect(report.images[0].source == "network")
        #expect(report.images.map(\.format) == ["jpeg", "jpeg", "png", nil, nil])
        #expect(report.images[0].width == 150 && report.images[0].height == 103)
        #expect(report.images[3].error?.contains("HTTP status 404") == true)
        #expect(report.totals.networkRequests == 3)
        // The repeat joined the first transfer, or, when that one had already finished (a loaded
        // machine can pause this loop between the two), came from the memory cache: one transfer.
        #expect(report.totals.coalesced == 1 || report.images[1].source == "memory", "\(report.images[1])")
        #expect(report.totals.bytes == jpeg.count + png.count)
        #expect(report.totals.errors == 2)
        #expect(origin.log.requests.count == 3)
        #expect(try Data(contentsOf: out.appendingPathComponent("b.png")) == png)
        #expect(try Data(contentsOf: out.appendingPathComponent("2-a.jpg")) == jpeg)
        try await origin.shutdown()
    }

    @Test("the imago binary carries no test support: no TestOrigin, no ImagoTestSupport symbol, no private key")
    func binaryCarriesNoTestSupport() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago")
        let binary = try Data(contentsOf: executable)
        #expect(binary.count > 1_000_000)
        for needle in ["ImagoTestSupport", "TestOrigin", "-----BEGIN PRIVATE KEY-----"] {
            #expect(binary.range(of: Data(needle.utf8)) == nil, "\(needle) found in \(executable.path)")
        }
        // The probe works: the test bundle itself does carry TestOrigin.
        let bundle = try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[0]))
        #expect(bundle.range(of: Data("TestOrigin".utf8)) != nil || !FileManager.default.fileExists(atPath: CommandLine.arguments[0]))
    }

    @Test("demo --json: the cold phase loads every image, the memory phase makes no transfer, the coalesced phase one")
    func demoJSON() async throws {
        let images = FileManager.default.temporaryDirectory.appendingPathComponent("imago-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: images) }
        let samples = ["jpeg/video-001.jpeg", "png/basn2c08.png", "webp/tux.lossless.webp", "gif/video-001.gif", "jpeg/video-005.gray.jpeg"]
        var total = 0, largest = 0
        for (index, sample) in samples.enumerated() {
            let data = try Corpus.data(sample)
            try data.write(to: images.appendingPathComponent("\(index)-" + URL(fileURLWithPath: sample).lastPathComponent))
            total += data.count
            largest = max(largest, data.count)
        }
        let sheetFile = images.appendingPathComponent("sheet.png")
        let run = try await imago(["demo", "--json", "--rate", "0", "--images", images.path, "--sheet-path", sheetFile.path])
        #expect(run.status == 0)
        // The contact sheet: one 160-pixel cell per image in a row, each image fitted and centred,
        // two 10-pixel caption lines under it in dark grey (name; size, source, milliseconds).
        let sheet = try PNGDecoder().decode(Data(contentsOf: sheetFile), options: DecodingOptions())
        #expect((sheet.width, sheet.height) == (8 + 5 * 168, 8 + 160 + 20 + 8))
        #expect(sheet.pixel(x: 2, y: 2) == (235, 235, 235, 255))
        #expect(sheet.pixel(x: 8 + 80, y: 8 + 80) != (235, 235, 235, 255))
        for line in 0..<2 {
            let inked = (8..<(8 + 160)).contains { x in
                (0..<7).contains { row in sheet.pixel(x: x, y: 8 + 160 + 2 + line * 10 + row) == (40, 40, 40, 255) }
            }
            #expect(inked, "caption line \(line) of the first image")
        }
        struct Phase: Decodable {
            var phase: String, images: Int, networkRequests: Int, coalesced: Int, memoryHits: Int, diskHits: Int, revalidated: Int, bytes: Int, errors: Int
        }
        let phases = try JSONDecoder().decode([Phase].self, from: run.output)
        #expect(phases.map(\.phase) == ["cold", "memory", "disk", "coalesced"])
        #expect(phases[0].images == 5 && phases[0].networkRequests == 5 && phases[0].bytes == total && phases[0].errors == 0 && phases[0].memoryHits == 0)
        #expect(phases[1].images == 5 && phases[1].networkRequests == 0 && phases[1].memoryHits == 5 && phases[1].bytes == 0)
        // Image 3 of 0…4 is served with no-cache: revalidated; the other four come from disk.
        #expect(phases[2].images == 5 && phases[2].diskHits == 4 && phases[2].revalidated == 1 && phases[2].networkRequests == 1)
        #expect(phases[2].bytes == 0 && phases[2].memoryHits == 0 && phases[2].errors == 0)
        #expect(phases[3].images == 50 && phases[3].networkRequests == 1 && phases[3].coalesced == 49 && phases[3].bytes == largest)
    }

    @Test("a second fetch with the same --cache-dir makes no transfer for fresh images and a conditional request for stale ones")
    func fetchTwiceWithCacheDirectory() async throws {
        let origin = try await TestOrigin.start()
        let jpeg = try Corpus.data("jpeg/video-001.jpeg"), png = try Corpus.data("png/basn6a08.png")
        var fresh = TestOrigin.Route(body: jpeg)
        fresh.headers = [("Cache-Control", "max-age=600")]
        origin.setRoute("/fresh.jpg", fresh)
        var stale = TestOrigin.Route(body: png)
        stale.etag = "\"p1\""
        stale.headers = [("Cache-Control", "max-age=0")]
        origin.setRoute("/stale.png", stale)
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let arguments = ["fetch", "--json", "--cache-dir", cache.path, origin.url("/fresh.jpg").absoluteString, origin.url("/stale.png").absoluteString]

        let first = try JSONDecoder().decode(FetchReport.self, from: try await imago(arguments).output)
        #expect(first.images.map(\.source) == ["network", "network"])
        #expect(first.totals.networkRequests == 2)
        let second = try JSONDecoder().decode(FetchReport.self, from: try await imago(arguments).output)
        #expect(second.images.map(\.source) == ["disk", "revalidated"])
        #expect(second.images.map(\.bytes) == [jpeg.count, png.count])
        #expect(second.images.map(\.width) == first.images.map(\.width))
        #expect(second.totals.networkRequests == 1)
        #expect((second.totals.diskHits, second.totals.revalidated, second.totals.bytes) == (1, 1, 0))
        #expect(
            origin.log.requests.map(\.path) == ["/fresh.jpg", "/stale.png", "/stale.png"]
                || origin.log.requests.map(\.path) == ["/stale.png", "/fresh.jpg", "/stale.png"])
        #expect(origin.log.requests.last?.header("If-None-Match") == "\"p1\"")
        #expect(origin.log.responses.last?.status == 304)
        #expect(try await imago(["fetch", "--no-disk-cache", "--cache-dir", cache.path, origin.url("/fresh.jpg").absoluteString]).status != 0)
        try await origin.shutdown()
    }

    @Test("fetch trusts the authorities SSL_CERT_FILE names; a path that cannot be read is an error before anything is fetched")
    func fetchTrustsCertFile() async throws {
        let origin = try await TestOrigin.start(tls: true)
        let jpeg = try Corpus.data("jpeg/video-001.jpeg")
        let url = origin.serve(jpeg, at: "/secure.jpg").absoluteString
        let folder = try TrustRootsTests.certificateFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let imago = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago").path
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let trusted = try await runProcess(env, ["SSL_CERT_FILE=\(folder.path)/cert.pem", imago, "fetch", "--json", "--no-disk-cache", url])
        #expect(trusted.status == 0)
        #expect(try JSONDecoder().decode(FetchReport.self, from: trusted.output).images.map(\.bytes) == [jpeg.count])
        #expect(try await runProcess(env, ["-u", "SSL_CERT_FILE", "-u", "SSL_CERT_DIR", imago, "fetch", "--no-disk-cache", url]).status != 0)
        let missing = try await runProcess(env, ["SSL_CERT_FILE=/nowhere/ca.pem", imago, "fetch", "--no-disk-cache", url], withStandardError: true)
        #expect(missing.status != 0)
        #expect(String(decoding: missing.output, as: UTF8.self).contains("SSL_CERT_FILE or SSL_CERT_DIR names /nowhere/ca.pem"))
        #expect(origin.log.requests.count == 1, "only the trusted fetch reached the origin's HTTP")
        try await origin.shutdown()
    }

    @Test("fetch run again after a download broke off resumes it from the disk cache: only the rest is asked for")
    func fetchResumes() async throws {
        let origin = try await TestOrigin.start()
        let jpeg = try Corpus.data("jpeg/video-001.jpeg")
        var route = TestOrigin.Route(body: jpeg)
        route.etag = "\"r1\""
        route.truncateAfter = jpeg.count / 2
        route.cutFirst = 1
        origin.setRoute("/broken.jpg", route)
        let cache = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let arguments = ["fetch", "--json", "--cache-dir", cache.path, origin.url("/broken.jpg").absoluteString]
        #expect(try await imago(arguments).status != 0)
        let second = try JSONDecoder().decode(FetchReport.self, from: try await imago(arguments).output)
        #expect(second.images.map(\.bytes) == [jpeg.count])
        #expect(second.images.map(\.source) == ["network"])
        #expect(origin.log.requests.map { $0.header("range") } == [nil, "bytes=\(jpeg.count / 2)-"])
        #expect(origin.log.responses.map(\.status) == [200, 206])
        #expect(origin.log.responses.last?.bodyBytes == jpeg.count - jpeg.count / 2)
        try await origin.shutdown()
    }
}

@Suite("imago convert", .timeLimit(.minutes(6)))
struct ConvertCLITests {
    struct Summary: Decodable {
        var width: Int
        var height: Int
        var sourceFormat: String
        var format: String
        var frames: Int
        var bytes: Int
    }

    @Test(
        "convert a file to each format: the output decodes to the same size, and --json names the format read and the format written",
        arguments: ["png", "jpg", "webp", "gif"])
    func convertFile(ext: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.\(ext)")
        let run = try await imago(["convert", "--json", Corpus.root.appendingPathComponent("gif/video-001.gif").path, output.path])
        #expect(run.status == 0)
        let summary = try JSONDecoder().decode(Summary.self, from: run.output)
        #expect((summary.width, summary.height, summary.sourceFormat, summary.frames) == (150, 103, "gif", 1))
        #expect(summary.format == ImageFormat(fileExtension: ext)?.rawValue)
        let written = try Data(contentsOf: output)
        #expect(summary.bytes == written.count)
        let decoded = try DecoderRegistry.standard().decode(written)
        #expect((decoded.width, decoded.height) == (150, 103))
        #expect(decoded.metadata.format == ImageFormat(fileExtension: ext))
    }

    @Test("convert an animated GIF to WebP or GIF, resized: every frame is kept", arguments: ["webp", "gif"])
    func convertAnimation(ext: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try await GIFDecoderTests.animationFile(disposal: "none", in: directory)
        let output = directory.appendingPathComponent("anim.\(ext)")
        let run = try await imago(["convert", "--json", "--resize", "64x64", input.path, output.path])
        #expect(run.status == 0)
        let summary = try JSONDecoder().decode(Summary.self, from: run.output)
        #expect((summary.width, summary.height, summary.frames) == (64, 44, 3))
        let decoded = try DecoderRegistry.standard().decode(Data(contentsOf: output))
        #expect(decoded.metadata.format == ImageFormat(fileExtension: ext))
        #expect((decoded.width, decoded.height, decoded.frames.count, decoded.loopCount) == (64, 44, 3, 2))
        #expect(decoded.frames.map(\.duration) == [.milliseconds(50), .milliseconds(100), .milliseconds(200)])
    }

    @Test(
        "convert --resize with each --fit gives the size it names; --round makes the corners transparent; a bad size is refused",
        arguments: [("contain", 64, 44), ("cover", 64, 64), ("fill", 64, 64), ("center", 64, 44)])
    func convertResized(fit: String, width: Int, height: Int) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("small.png")
        let input = Corpus.root.appendingPathComponent("gif/video-001.gif").path  // 150×103
        let run = try await imago(["convert", "--json", "--resize", "64x64", "--fit", fit, "--blur", "1", "--round", "8", input, output.path])
        #expect(run.status == 0)
        let summary = try JSONDecoder().decode(Summary.self, from: run.output)
        #expect((summary.width, summary.height) == (width, height))
        let decoded = try PNGDecoder().decode(Data(contentsOf: output), options: DecodingOptions())
        #expect((decoded.width, decoded.height) == (width, height))
        #expect(decoded.pixel(x: 0, y: 0).a == 0)
        #expect(decoded.pixel(x: width / 2, y: height / 2).a == 255)

        let refused = directory.appendingPathComponent("refused.png")
        #expect(try await imago(["convert", "--resize", "64by64", input, refused.path]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: refused.path))
    }

    @Test("convert loads URLs through the pipeline; an unknown output extension is refused and nothing is written")
    func convertURL() async throws {
        let origin = try await TestOrigin.start()
        let url = origin.serve(try Corpus.data("webp/tux.lossless.webp"), at: "/tux.webp")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("tux.png")
        #expect(try await imago(["convert", url.absoluteString, png.path]).status == 0)
        let expected = try WebPDecoder().decode(Corpus.data("webp/tux.lossless.webp"), options: DecodingOptions())
        #expect(Corpus.samePixels(try PNGDecoder().decode(Data(contentsOf: png), options: DecodingOptions()).pixels, expected.pixels))
        let tga = directory.appendingPathComponent("tux.tga")
        #expect(try await imago(["convert", url.absoluteString, tga.path]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: tga.path))
        try await origin.shutdown()
    }
}
