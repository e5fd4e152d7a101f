import AsyncHTTPClient
import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// imgproxy's and thumbor's own configuration: `IMGPROXY_*` variables in their units and spellings
/// (a docker-compose environment file with no `IMAGO_*`), thumbor.conf read without running it,
/// the unsupported ones named at start, bad values stopping the server with their name.
@Suite("imgproxy's and thumbor's configuration", .timeLimit(.minutes(6)))
struct PeerConfigurationTests {
    static let pair = URLSigner.Pair(key: Array("secret".utf8), salt: Array("hello".utf8))

    /// `imago serve` with `environment` and `arguments`; its port (from its first line) and
    /// a file collecting its standard error.
    /// With `cgroup` (a folder of the memory hierarchy), the server is started inside that group.
    static func start(_ arguments: [String] = [], environment: [String: String], cgroup: String? = nil) async throws -> (Process, Int, URL) {
        let process = Process()
        if let cgroup {
            // The shell joins the group, then becomes the server, so the server starts inside it.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "echo $$ > \(cgroup)/cgroup.procs && exec \"$0\" serve \"$@\"", ServeCommandTests.executable.path] + arguments
        } else {
            process.executableURL = ServeCommandTests.executable
            process.arguments = ["serve"] + arguments
        }
        // The test's own environment (sanitizer options, PATH) without any IMAGO_* or IMGPROXY_* of its own.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IMAGO_") && !$0.key.hasPrefix("IMGPROXY_") }
            .merging(environment) { $1 }
        let output = Pipe()
        let log = try temporaryDirectory().appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        return (process, await ServeCommandTests.port(from: output), log)
    }

    /// The variables of a docker-compose `env_file`: `NAME=value` lines, comments and blanks skipped.
    static func environmentFile(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && line.contains("=") {
            let parts = line.split(separator: "=", maxSplits: 1)
            values[String(parts[0])] = parts.count == 2 ? String(parts[1]) : ""
        }
        return values
    }

    @Test("an imgproxy docker-compose environment file alone: bind, keys and salts, local root, limits, presets, formats and quality honoured")
    func imgproxyEnvironmentFile() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        try Corpus.data("png/basn6a08.png").write(to: root.appendingPathComponent("alpha.png"))
        let environment = Self.environmentFile(
            """
            # imgproxy.env, as docker-compose's env_file reads it
            IMGPROXY_BIND=127.0.0.1:0
            IMGPROXY_KEY=736563726574
            IMGPROXY_SALT=68656C6C6F
            IMGPROXY_LOCAL_FILESYSTEM_ROOT=\(root.path)
            IMGPROXY_MAX_SRC_RESOLUTION=0.01
            IMGPROXY_PRESETS=thumb=rs:fit:20:20
            IMGPROXY_QUALITY=63
            IMGPROXY_FORMAT_QUALITY=webp=41
            IMGPROXY_AUTO_WEBP=false
            IMGPROXY_ENFORCE_WEBP=True
            IMGPROXY_PREFERRED_FORMATS=jpeg,png,gif
            IMGPROXY_JPEG_PROGRESSIVE=1
            IMGPROXY_TTL=600
            IMGPROXY_WORKERS=4
            IMGPROXY_USE_ABS=true
            """)
        let (process, port, log) = try await Self.start(environment: environment)
        #expect(port > 0)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func get(_ path: String, accept: String? = nil) async throws -> (status: Int, type: String?, cacheControl: String?, body: Data) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
            if let accept { request.headers.add(name: "Accept", value: accept) }
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = Data(buffer: try await response.body.collect(upTo: 1 << 24))
            return (Int(response.status.code), response.headers.first(name: "Content-Type"), response.headers.first(name: "Cache-Control"), body)
        }
        func signed(_ rest: String) -> String {
            "/" + URLSigner.signature(for: "/" + rest, pair: Self.pair) + "/" + rest
        }
        // Unsigned: refused. Signed, with the preset: 20 px, progressive JPEG at quality 63.
        #expect(try await get("/_/pr:thumb/plain/local:%2F%2F%2Fphoto.jpg").status == 403)
        let photo = try await get(signed("pr:thumb/plain/local:%2F%2F%2Falpha.png@jpg"))
        #expect(photo.status == 200 && photo.type == "image/jpeg" && photo.cacheControl == "max-age=600, public")
        let image = try DecoderRegistry.standard().decode(photo.body)
        #expect(max(image.width, image.height) == 20)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await EncoderSettingsTests.identify("%Q %[interlace]", photo.body, "photo.jpg", in: directory) == "63 JPEG")
        // AUTO_WEBP off: a WebP client gets the source's format; ENFORCE_WEBP: even over @png, at WEBP's quality.
        #expect(try await get(signed("pr:thumb/plain/local:%2F%2F%2Falpha.png"), accept: "image/png").type == "image/png")
        #expect(try await get(signed("pr:thumb/plain/local:%2F%2F%2Falpha.png@png"), accept: "image/webp,*/*").type == "image/webp")
        #expect(try await get(signed("pr:thumb/plain/local:%2F%2F%2Falpha.png@png"), accept: "image/png").type == "image/png")
        // MAX_SRC_RESOLUTION in megapixels: 0.01 MP refuses the 150×103 photo's 0.015 MP.
        let large = try await get(signed("w:10/plain/local:%2F%2F%2Fphoto.jpg"))
        #expect(large.status == 422)
        try await client.shutdown()
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        let logged = try String(contentsOf: log, encoding: .utf8)
        #expect(!logged.contains("IMGPROXY_WORKERS is not") && logged.contains("IMGPROXY_USE_ABS is not supported"))
        #expect(!logged.contains("IMGPROXY_QUALITY is not"))
    }

    @Test("imgproxy's spellings and units: Go booleans, megapixels, 0 for no size limit; a bad value names its variable")
    func imgproxyUnits() throws {
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_MAX_SRC_RESOLUTION": "16.8", "IMGPROXY_MAX_SRC_FILE_SIZE": "0", "IMGPROXY_STRIP_METADATA": "F",
            "IMGPROXY_AUTO_AVIF": "t", "IMGPROXY_ENFORCE_JXL": "TRUE", "IMGPROXY_WEBP_COMPRESSION": "near_lossless",
            "IMGPROXY_PNG_QUANTIZE": "true", "IMGPROXY_PNG_QUANTIZATION_COLORS": "64", "IMGPROXY_AVIF_SPEED": "5", "IMGPROXY_JXL_EFFORT": "7",
        ]).configuration
        #expect(configuration.limits.maxSourcePixels == 16_800_000 && configuration.limits.maxSourceBytes == 1 << 40 && !configuration.output.stripsMetadata)
        #expect(configuration.output.autoFormats == OutputFormat.negotiable.filter { [.avif, .webp].contains($0) })
        #expect(configuration.output.enforcedFormats == OutputFormat.negotiable.filter { $0 == .jxl })
        #expect(configuration.output.encoding.nearLossless && configuration.output.encoding.paletteColors == 64)
        #expect(configuration.output.encoding.speed == 5 && configuration.output.encoding.effort == 7)
        // The work queue: imgproxy's 0 is an unlimited queue (bounded in Imago by the connections
        // it accepts); 0 clients is no limit.
        let queue = try ServerSettings.configuration([
            "IMGPROXY_WORKERS": "3", "IMGPROXY_REQUESTS_QUEUE_SIZE": "0", "IMGPROXY_MAX_CLIENTS": "0",
        ]).configuration
        #expect(queue.workers == 3 && queue.queueLength == 1_000_000 && queue.maxClients == 0)
        let defaults = try ServerSettings.configuration([:]).configuration
        #expect(defaults.queueLength == defaults.workers * 16 && defaults.maxClients == 2048)
        #expect(try ServerSettings.configuration(["IMGPROXY_REQUESTS_QUEUE_SIZE": "5"]).configuration.queueLength == 5)
        // IMAGO_* wins over imgproxy's name.
        #expect(try ServerSettings.configuration(["IMAGO_QUALITY": "50", "IMGPROXY_QUALITY": "90"]).configuration.output.defaultQuality == 50)
        for (variable, value) in [
            ("IMGPROXY_STRIP_METADATA", "yes"), ("IMGPROXY_MAX_SRC_RESOLUTION", "lots"), ("IMGPROXY_BIND", "/tmp/imgproxy.sock"),
            ("IMGPROXY_AUTOQUALITY_METHOD", "dssim"), ("IMGPROXY_WEBP_COMPRESSION", "medium"), ("IMGPROXY_JXL_EFFORT", "10"),
            ("IMGPROXY_WORKERS", "0"), ("IMGPROXY_REQUESTS_QUEUE_SIZE", "-1"), ("IMGPROXY_MAX_CLIENTS", "many"),
        ] {
            do {
                _ = try ServerSettings.configuration([variable: value])
                Issue.record("\(variable)=\(value) was accepted")
            } catch {
                #expect(error.message.contains(variable), "\(error.message)")
            }
        }
    }

    @Test("docs/SERVER.md's moving-from-imgproxy table is the one the declarations give, every open-source variable in it")
    func imgproxyTableDocumented() throws {
        let docs = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../../docs/SERVER.md").standardizedFileURL
        let text = try String(contentsOf: docs, encoding: .utf8)
        let table = ServerSettings.imgproxyMarkdownTable
        if !text.contains(table) { try? table.write(toFile: NSTemporaryDirectory() + "imago-imgproxy-table.md", atomically: true, encoding: .utf8) }
        #expect(text.contains(table), "docs/SERVER.md's table differs (written to $TMPDIR/imago-imgproxy-table.md)")
        #expect(ImgproxyVariables.openSource.count > 150 && table.contains("`IMGPROXY_MAX_SRC_RESOLUTION` | read as `--max-source-pixels`"))
    }

    @Test("thumbor.conf: Python literals read, never run; a file that is not literals is refused at its line")
    func thumborConfigFile() throws {
        let file = try ThumborConfigFile(
            parsing: """
                # thumbor.conf
                SECURITY_KEY = 'MY_KEY'  # comment
                ALLOW_UNSAFE_URL = False
                QUALITY = 85
                HTTP_LOADER_REQUEST_TIMEOUT = 2.5
                FILTERS = [
                    'thumbor.filters.brightness',
                    "thumbor.filters.quality",
                ]
                DETECTORS = ()
                STORAGE = None
                OPTIONS = {'a': 0x10, "b": [-1, 1e3, (2,)]}
                TEXT = r'a\\n' "b" u'''c
                d'''
                QUALITY = 90
                """)
        #expect(file["SECURITY_KEY"] == .string("MY_KEY") && file["ALLOW_UNSAFE_URL"] == .boolean(false) && file["QUALITY"] == .integer(90))
        #expect(file["FILTERS"]?.settingText == "thumbor.filters.brightness,thumbor.filters.quality" && file["DETECTORS"] == .list([]))
        #expect(
            file["OPTIONS"]
                == .dictionary([
                    .init(key: .string("a"), value: .integer(16)), .init(key: .string("b"), value: .list([.integer(-1), .number(1000), .list([.integer(2)])])),
                ]))
        #expect(file["TEXT"] == .string("a\\nbc\nd") && file["STORAGE"] == ThumborConfigFile.Value.none)
        let refused: [(String, Int)] = [
            ("A = 1\nimport os\n", 2), ("A = 1\nB = os.environ['X']\n", 2), ("MAX_AGE = 24 * 60\n", 1), ("A = 'open\n", 1), ("A = [1, 2\n", 2),
            ("A == 1\n", 1), ("\n\nA = (" + String(repeating: "(", count: 40) + ")\n", 3), ("A = __import__('os')\n", 1), ("A = 1 2\n", 1),
        ]
        for (text, line) in refused {
            #expect(throws: ThumborConfigFile.Failure.self) { try ThumborConfigFile(parsing: text) }
            do { _ = try ThumborConfigFile(parsing: text) } catch { #expect(error.line == line, "\(text)") }
        }
    }

    @Test("thumbor.conf: thumbor's own BUILTIN_FILTERS imported, names and '+' joined; other imports, operators and a doubling list refused at their line")
    func thumborConfigNames() throws {
        let file = try ThumborConfigFile(
            parsing: """
                from thumbor.filters import BUILTIN_FILTERS
                MINE = ['mycompany.filters.sepia']
                FILTERS = BUILTIN_FILTERS + [
                    'thumbor.filters.autojpg',
                ] + MINE
                KEY = 'a' + "b"
                """)
        let filters =
            ThumborFilter.builtinModules.map(ThumborConfigFile.Value.string) + [.string("thumbor.filters.autojpg"), .string("mycompany.filters.sepia")]
        #expect(file["FILTERS"] == .list(filters) && file["KEY"] == .string("ab") && file["MINE"] != nil)
        #expect(ThumborFilter.builtinModules.count == 30 && !ThumborFilter.builtinNames.contains("autojpg"))
        let doubling = "A = [1]\n" + String(repeating: "A = A + A\n", count: 40)
        let refused: [(String, Int)] = [
            ("A = 1\nfrom os import path\n", 2), ("from thumbor.filters import BUILTIN_FILTERS, os\n", 1), ("import thumbor.filters\n", 1),
            ("A = 1 + 2\n", 1), ("A = [1] + 'x'\n", 1), ("A = B\n", 1), ("from thumbor.filters import BUILTIN_FILTERS\nA = BUILTIN_FILTERS * 2\n", 2),
            (doubling, 21),
        ]
        for (text, line) in refused {
            #expect(throws: ThumborConfigFile.Failure.self) { try ThumborConfigFile(parsing: text) }
            do { _ = try ThumborConfigFile(parsing: text) } catch { #expect(error.line == line, "\(text.prefix(60)): \(error.reason)") }
        }
    }

    @Test(
        "imago serve --thumbor-config: thumbor's URLs at the root, its key, unsafe URLs and quality honoured, unknown settings named, a bad file refused at its line"
    )
    func thumborConfigServed() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        let conf = root.appendingPathComponent("thumbor.conf")
        try """
        SECURITY_KEY = 'MY_SECURE_KEY'
        ALLOW_UNSAFE_URL = False
        QUALITY = 57
        LOADER = 'thumbor.loaders.file_loader'
        FILE_LOADER_ROOT_PATH = '\(root.path)'
        DETECTORS = ['thumbor.detectors.face_detector']
        MAX_WIDTH = 100
        from thumbor.filters import BUILTIN_FILTERS
        FILTERS = BUILTIN_FILTERS + ['mycompany.filters.sepia']

        """.write(to: conf, atomically: true, encoding: .utf8)
        let (process, port, log) = try await Self.start(["--listen", "127.0.0.1:0", "--thumbor-config", conf.path], environment: [:])
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func get(_ path: String) async throws -> (Int, Data) {
            let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(30))
            return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 24)))
        }
        #expect(try await get("/unsafe/40x30/photo.jpg").0 == 400)
        let signature = ThumborSigner.signature(for: "40x30/photo.jpg", key: "MY_SECURE_KEY")
        let (status, body) = try await get("/\(signature)/40x30/photo.jpg")
        #expect(status == 200)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await EncoderSettingsTests.identify("%wx%h %Q", body, "thumb.jpg", in: directory) == "40x30 57")
        // MAX_WIDTH clamps the box; FILTERS leaves out autojpg (a PNG answer stays PNG).
        let wide = try await get("/\(ThumborSigner.signature(for: "300x0/photo.jpg", key: "MY_SECURE_KEY"))/300x0/photo.jpg")
        #expect(try await EncoderSettingsTests.identify("%wx%h", wide.1, "wide.jpg", in: directory) == "100x69")
        try await client.shutdown()
        process.terminate()
        #expect(await ServeCommandTests.waitForExit(process) == 0)
        let logged = try String(contentsOf: log, encoding: .utf8)
        // DETECTORS is read (Debian's cascade for faces); LOADER is not Imago's to set.
        #expect(!logged.contains("thumbor.conf:DETECTORS") && logged.contains("thumbor.conf:LOADER is not supported"))
        #expect(logged.contains("thumbor filters Imago does not have are skipped in URLs: sepia") && !logged.contains("thumbor.conf:FILTERS"))
        #expect(!logged.contains("SECURITY_KEY"))

        // A file that is not literals stops the server, naming the file and line.
        try "QUALITY = 80\nSECURITY_KEY = open('/etc/passwd').read()\n".write(to: conf, atomically: true, encoding: .utf8)
        let refused = try await ServeCommandTests.refusedStart(["--listen", "127.0.0.1:0", "--thumbor-config", conf.path])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("thumbor.conf, line 2"))
    }
}
