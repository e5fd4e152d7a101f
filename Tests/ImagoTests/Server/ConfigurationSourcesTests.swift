import AsyncHTTPClient
import Foundation
import Imago
import ImagoTestSupport
import Testing

@testable import ImagoServer

/// Variables from where imgproxy also reads them (its "loading environment variables"): a `.env`
/// file, an AWS Secrets Manager secret and Systems Manager parameters (moto, signatures checked).
@Suite("configuration sources: .env file, AWS Secrets Manager, Systems Manager", .timeLimit(.minutes(6)))
struct ConfigurationSourcesTests {
    /// The moto peer's answer.
    struct AWSPeer: Decodable {
        var port: Int
        var accessKeyID: String
        var secretAccessKey: String
        /// Each secret's version IDs, oldest first.
        var versions: [String: [String]]

        var environment: [String: String] {
            [
                "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_ENDPOINT_URL": "http://127.0.0.1:\(port)",
                "AWS_REGION": "us-east-1",
            ]
        }
    }

    /// Runs `body` with moto holding `secrets` (name → texts, the last current) and `parameters`.
    func withAWSPeer(secrets: [String: [String]], parameters: [String: String], _ body: (AWSPeer) async throws -> Void) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("spec.json")
        try JSONSerialization.data(withJSONObject: ["secrets": secrets, "parameters": parameters]).write(to: spec)
        let peer = try await ObjectStorePeer.start("aws_config_peer.py", [spec.path])
        do {
            try await body(try JSONDecoder().decode(AWSPeer.self, from: peer.line))
        } catch {
            await peer.stop()
            throw error
        }
        await peer.stop()
    }

    @Test(".env rules as godotenv reads them: export, quotes, escapes, comments, expansion; a bad line is named")
    func dotEnvRules() throws {
        let text = """
            # a comment
            export IMGPROXY_QUALITY=61
            PLAIN = spaced value   # a comment after it
            COLON: yaml style
            SINGLE='$NOT \\n expanded'
            DOUBLE="line\\none \\"quoted\\" $PLAIN ${COLON} \\$HOME"
            MULTI="first
            second"
            EMPTY=
            FROM_ENV=${HOME}/x
            HASH=a#b
            """
        let variables = try DotEnvText(text, environment: ["HOME": "/home/imago"]).variables
        let values = Dictionary(variables, uniquingKeysWith: { $1 })
        #expect(variables.map(\.name) == ["IMGPROXY_QUALITY", "PLAIN", "COLON", "SINGLE", "DOUBLE", "MULTI", "EMPTY", "FROM_ENV", "HASH"])
        #expect(values["IMGPROXY_QUALITY"] == "61" && values["PLAIN"] == "spaced value" && values["COLON"] == "yaml style")
        #expect(values["SINGLE"] == "$NOT \\n expanded")
        #expect(values["DOUBLE"] == "line\none \"quoted\" spaced value yaml style $HOME")
        #expect(values["MULTI"] == "first\nsecond" && values["EMPTY"] == "" && values["FROM_ENV"] == "/home/imago/x" && values["HASH"] == "a#b")

        for (bad, line) in [("A=1\nnot a line\n", 2), ("A=1\nB=\"open\nC=2\n", 2), ("A=1\n1A=2\n", 2), ("X='a' b\n", 1)] {
            #expect(throws: DotEnvText.BadLine.self) { try DotEnvText(bad, environment: [:]) }
            do {
                _ = try DotEnvText(bad, environment: [:])
            } catch {
                #expect(error.line == line, "\(bad)")
            }
        }
    }

    @Test("IMGPROXY_ENV_LOCAL_FILE_PATH: its variables over the environment's, flags over both; a missing file or a bad line stops the start")
    func localFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("imgproxy.env")
        try "IMGPROXY_QUALITY=55\nIMGPROXY_TTL=\"900\"\n".write(to: file, atomically: true, encoding: .utf8)
        let environment = ["IMGPROXY_ENV_LOCAL_FILE_PATH": file.path, "IMGPROXY_QUALITY": "90", "IMGPROXY_MAX_SRC_RESOLUTION": "2"]
        let merged = try await ConfigurationSources.environment(arguments: [], environment: environment)
        let configuration = try ServerSettings.configuration(ServerSettings.values(arguments: [], environment: merged)).configuration
        #expect(
            configuration.output.defaultQuality == 55 && configuration.cacheControl == "max-age=900, public"
                && configuration.limits.maxSourcePixels == 2_000_000)
        let flagged = try await ConfigurationSources.environment(arguments: ["--quality", "70"], environment: environment)
        #expect(
            try ServerSettings.configuration(ServerSettings.values(arguments: ["--quality", "70"], environment: flagged)).configuration.output.defaultQuality
                == 70)

        let missing = ["IMGPROXY_ENV_LOCAL_FILE_PATH": directory.appendingPathComponent("none.env").path]
        await #expect { try await ConfigurationSources.environment(arguments: [], environment: missing) } throws: { error in
            (error as? ServerError)?.message.contains("IMGPROXY_ENV_LOCAL_FILE_PATH") == true
        }
        try "IMGPROXY_QUALITY=55\nIMGPROXY_TTL 900\n".write(to: file, atomically: true, encoding: .utf8)
        await #expect { try await ConfigurationSources.environment(arguments: ["--env-file", file.path], environment: [:]) } throws: { error in
            (error as? ServerError)?.message == "\(file.path), line 2: no '=' after the name"
        }
    }

    @Test("AWS Secrets Manager and Systems Manager: current, staged and versioned secrets, parameters by path; refusals named without the key")
    func awsSources() async throws {
        try #require(ObjectStorePeer.isInstalled, "make test installs the peers' venv")
        let secrets = ["imago/prod": ["IMGPROXY_QUALITY=41\nIMGPROXY_TTL=10", "IMGPROXY_QUALITY=42\nexport IMGPROXY_TTL=77"]]
        let parameters = [
            "/imago/prod/IMGPROXY_MAX_SRC_RESOLUTION": "3", "/imago/prod/IMGPROXY/PRESETS": "thumb=w:10", "/imago/staging/IMGPROXY_QUALITY": "1",
        ]
        try await withAWSPeer(secrets: secrets, parameters: parameters) { peer in
            func configuration(_ extra: [String: String]) async throws -> ServerConfiguration {
                let environment = peer.environment.merging(extra) { $1 }
                let merged = try await ConfigurationSources.environment(arguments: [], environment: environment)
                return try ServerSettings.configuration(ServerSettings.values(arguments: [], environment: merged)).configuration
            }
            // The current version; then the previous by its stage, the first by its ID (which wins over a stage).
            let current = try await configuration(["IMGPROXY_ENV_AWS_SECRET_ID": "imago/prod", "IMGPROXY_QUALITY": "90"])
            #expect(current.output.defaultQuality == 42 && current.cacheControl == "max-age=77, public")
            let previous = try await configuration(["IMGPROXY_ENV_AWS_SECRET_ID": "imago/prod", "IMGPROXY_ENV_AWS_SECRET_VERSION_STAGE": "AWSPREVIOUS"])
            #expect(previous.output.defaultQuality == 41 && previous.cacheControl == "max-age=10, public")
            let first = try await configuration([
                "IMGPROXY_ENV_AWS_SECRET_ID": "imago/prod", "IMGPROXY_ENV_AWS_SECRET_VERSION_ID": peer.versions["imago/prod"]![0],
                "IMGPROXY_ENV_AWS_SECRET_VERSION_STAGE": "AWSCURRENT",
            ])
            #expect(first.output.defaultQuality == 41)
            // Parameters under the path, nested ones joined with _, the staging path's left out;
            // a .env file read after both overrides them.
            let file = try temporaryDirectory().appendingPathComponent("late.env")
            try "IMGPROXY_TTL=5\n".write(to: file, atomically: true, encoding: .utf8)
            let all = try await configuration([
                "IMGPROXY_ENV_AWS_SECRET_ID": "imago/prod", "IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH": "/imago/prod", "IMGPROXY_ENV_LOCAL_FILE_PATH": file.path,
            ])
            #expect(
                all.limits.maxSourcePixels == 3_000_000 && all.presets["thumb"] != nil && all.output.defaultQuality == 42
                    && all.cacheControl == "max-age=5, public")
            // Refusals: a secret that is not there; a wrong key (the answer names the error, never the key).
            await #expect { try await configuration(["IMGPROXY_ENV_AWS_SECRET_ID": "imago/none"]) } throws: { error in
                let message = (error as? ServerError)?.message ?? ""
                return message.contains("IMGPROXY_ENV_AWS_SECRET_ID") && message.contains("ResourceNotFoundException")
            }
            let wrong = "wrong" + peer.secretAccessKey.dropFirst(5)
            await #expect {
                try await configuration(["IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH": "/imago/prod", "AWS_SECRET_ACCESS_KEY": wrong])
            } throws: { error in
                let message = (error as? ServerError)?.message ?? ""
                return message.contains("IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH") && message.contains("SignatureDoesNotMatch") && !message.contains(wrong)
            }
        }
    }

    @Test("imago serve with its keys in an AWS secret and its address in a .env file: signed URLs served, unsigned refused")
    func serveFromSources() async throws {
        try #require(ObjectStorePeer.isInstalled, "make test installs the peers' venv")
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try Corpus.data("jpeg/video-001.jpeg").write(to: root.appendingPathComponent("photo.jpg"))
        let file = root.appendingPathComponent("imgproxy.env")
        try "IMGPROXY_BIND=127.0.0.1:0\nIMGPROXY_LOCAL_FILESYSTEM_ROOT='\(root.path)'\n".write(to: file, atomically: true, encoding: .utf8)
        let secrets = ["imgproxy": ["IMGPROXY_KEY=736563726574\nIMGPROXY_SALT=68656C6C6F\n"]]
        try await withAWSPeer(secrets: secrets, parameters: [:]) { peer in
            let environment = peer.environment.merging(["IMGPROXY_ENV_AWS_SECRET_ID": "imgproxy", "IMGPROXY_ENV_LOCAL_FILE_PATH": file.path]) { $1 }
            let (process, port, _) = try await PeerConfigurationTests.start(environment: environment)
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            func status(_ path: String) async throws -> Int {
                let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 24)
                return Int(response.status.code)
            }
            let rest = "w:20/plain/local:%2F%2F%2Fphoto.jpg"
            #expect(try await status("/_/" + rest) == 403)
            #expect(try await status("/" + URLSigner.signature(for: "/" + rest, pair: PeerConfigurationTests.pair) + "/" + rest) == 200)
            try await client.shutdown()
            process.terminate()
            #expect(await ServeCommandTests.waitForExit(process) == 0)
        }
    }
}
