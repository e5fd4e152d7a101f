import AsyncHTTPClient
import Foundation
import Imago
import ImagoServer
import Testing

@testable import ImagoServer

/// `s3://`, `gs://` and `swift://` sources through `imago serve` and `imago fetch`, configured as imgproxy and the AWS tools
/// are, against a real S3 API server (moto) that checks signatures.
@Suite(
    "object stores: imago serve and imago fetch", .enabled(if: ObjectStorePeer.isInstalled, "needs the peers' venv: make test installs it"),
    .timeLimit(.minutes(6)))
struct ObjectStoreServerTests {
    static let photo = Corpus.root.appendingPathComponent("jpeg/video-001.jpeg")

    @Test("imgproxy's S3 variables: an S3 source answered, a missing key 404, a bucket outside the list 403, s3:// refused without IMGPROXY_USE_S3")
    func imgproxyVariables() async throws {
        try await withS3Peer(["photos": [Self.photo], "private": [Self.photo]]) { peer in
            let wrong = "WRONG-secret-never-logged-0123456789"
            let environment = [
                "IMGPROXY_USE_S3": "true", "IMGPROXY_S3_ENDPOINT": "127.0.0.1:\(peer.port)", "IMGPROXY_S3_REGION": "us-east-1",
                "IMGPROXY_S3_ALLOWED_BUCKETS": "photos", "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
            ]
            let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
            defer { process.terminate() }
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            func get(_ source: String) async throws -> (Int, Data) {
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/insecure/rs:fit:64:64/plain/\(source)@png"), timeout: .seconds(30))
                return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 24)))
            }
            let (status, body) = try await get("s3://photos/video-001.jpeg")
            #expect(status == 200)
            let image = try PNGDecoder().decode(body, options: DecodingOptions())
            #expect(max(image.width, image.height) == 64)
            #expect(try await get("s3://photos/missing.jpeg").0 == 404)
            #expect(try await get("s3://private/video-001.jpeg").0 == 403)
            try await client.shutdown()
            process.terminate()
            _ = await ServeCommandTests.waitForExit(process)
            let text = try String(contentsOf: log, encoding: .utf8)
            #expect(!text.contains(peer.secretAccessKey) && !text.contains(wrong) && !text.contains("Signature="))

            // The same server without IMGPROXY_USE_S3 refuses s3:// sources before any request.
            let (plain, plainPort, _) = try await PeerConfigurationTests.start(
                ["--listen", "127.0.0.1:0"], environment: ["IMGPROXY_S3_ENDPOINT": "127.0.0.1:\(peer.port)"])
            defer { plain.terminate() }
            let other = HTTPClient(eventLoopGroupProvider: .singleton)
            let refused = try await other.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(plainPort)/insecure/plain/s3://photos/video-001.jpeg@png"), timeout: .seconds(30))
            #expect(refused.status.code == 403)
            try await other.shutdown()
        }
    }

    @Test("IMGPROXY_S3_ASSUME_ROLE_ARN: a user that may only assume a role reads S3 as the role; without it, or with a role STS refuses, 403")
    func assumedRole() async throws {
        try #require(ObjectStorePeer.isInstalled, "make test installs the peers' venv")
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let base = [
                "IMGPROXY_USE_S3": "true", "IMGPROXY_S3_ENDPOINT": "127.0.0.1:\(peer.port)", "IMGPROXY_S3_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:\(peer.port)", "AWS_ACCESS_KEY_ID": peer.assumerKeyID, "AWS_SECRET_ACCESS_KEY": peer.assumerSecret,
            ]
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            func status(_ environment: [String: String]) async throws -> (Int, String) {
                let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
                defer { process.terminate() }
                var statuses: [Int] = []
                // Twice: the second load signs with the role's credentials kept from the first.
                for _ in 0..<2 {
                    let response = try await client.execute(
                        HTTPClientRequest(url: "http://127.0.0.1:\(port)/insecure/rs:fit:64:64/plain/s3://photos/video-001.jpeg@png"),
                        timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1 << 24)
                    statuses.append(Int(response.status.code))
                }
                process.terminate()
                _ = await ServeCommandTests.waitForExit(process)
                #expect(statuses[0] == statuses[1])
                return (statuses[0], try String(contentsOf: log, encoding: .utf8))
            }
            // The assumer's own key may not read S3.
            #expect(try await status(base).0 == 403)
            let (assumed, log) = try await status(
                base.merging(["IMGPROXY_S3_ASSUME_ROLE_ARN": peer.roleARN, "IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID": "imago"]) { $1 })
            #expect(assumed == 200)
            #expect(!log.contains(peer.assumerSecret))
            // A role that is not there: STS's refusal is the answer.
            let missing = peer.roleARN.replacingOccurrences(of: "role/reader", with: "role/none")
            #expect(try await status(base.merging(["IMGPROXY_S3_ASSUME_ROLE_ARN": missing]) { $1 }).0 >= 400)
            #expect(throws: ServerError.self) { try ServerSettings.configuration(["IMGPROXY_S3_ASSUME_ROLE_ARN": "reader"]) }
            try await client.shutdown()
        }
    }

    @Test("a wrong key: the store refuses it, the server passes its 403 on (as imgproxy 3.31) and its log names S3's code, never the secret")
    func wrongKey() async throws {
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let wrong = "WRONG-secret-never-logged-0123456789"
            let environment = [
                "IMAGO_USE_S3": "1", "IMAGO_S3_ENDPOINT": "http://127.0.0.1:\(peer.port)", "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": wrong,
            ]
            let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
            defer { process.terminate() }
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            let response = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/insecure/plain/s3://photos/video-001.jpeg@png"), timeout: .seconds(30))
            #expect(response.status.code == 403)
            let body = String(buffer: try await response.body.collect(upTo: 1 << 16))
            #expect(!body.contains(wrong) && !body.contains("127.0.0.1"))
            try await client.shutdown()
            process.terminate()
            _ = await ServeCommandTests.waitForExit(process)
            let text = try String(contentsOf: log, encoding: .utf8)
            #expect(text.contains("SignatureDoesNotMatch"), "\(text)")
            #expect(!text.contains(wrong) && !text.contains("Signature="))
        }
    }

    @Test("imago fetch reads s3:// with the AWS tools' variables; a missing key fails naming S3's code")
    func fetch() async throws {
        try await withS3Peer(["photos": [Self.photo]]) { peer in
            let folder = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let environment = [
                "AWS_ENDPOINT_URL": "http://127.0.0.1:\(peer.port)", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": peer.accessKeyID,
                "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
            ]
            func fetch(_ url: String) async throws -> (Int32, String) {
                let process = Process()
                process.executableURL = ServeCommandTests.executable
                process.arguments = ["fetch", "--no-disk-cache", "--out", folder.path, url]
                process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") }.merging(environment) { $1 }
                let output = Pipe()
                process.standardOutput = output
                process.standardError = output
                try process.run()
                let text = await offThePool { String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
                return (await ServeCommandTests.waitForExit(process), text)
            }
            let (status, text) = try await fetch("s3://photos/video-001.jpeg")
            #expect(status == 0, "\(text)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("video-001.jpeg")) == (try Data(contentsOf: Self.photo)))
            let (failed, message) = try await fetch("s3://photos/missing.jpeg")
            #expect(failed != 0 && message.contains("NoSuchKey"), "\(message)")
            #expect(!message.contains(peer.secretAccessKey))
        }
    }

    @Test(
        "imgproxy's GCS variables: the key's JSON in IMGPROXY_GCS_KEY, a gs:// source answered, a missing object 404, a denied bucket 403; imago fetch with Google's variables"
    )
    func gcs() async throws {
        try await withGCSPeer(["photos": [Self.photo], "private": [Self.photo]]) { peer in
            let environment = [
                "IMGPROXY_USE_GCS": "true", "IMGPROXY_GCS_ENDPOINT": "http://127.0.0.1:\(peer.port)/storage/v1/", "IMGPROXY_GCS_KEY": peer.key,
                "IMGPROXY_GCS_DENIED_BUCKETS": "private",
            ]
            let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
            defer { process.terminate() }
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            func status(_ source: String) async throws -> Int {
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/insecure/rs:fit:64:64/plain/\(source)@png"), timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 24)
                return Int(response.status.code)
            }
            #expect(try await status("gs://photos/video-001.jpeg") == 200)
            #expect(try await status("gs://photos/missing.jpeg") == 404)
            #expect(try await status("gs://private/video-001.jpeg") == 403)
            try await client.shutdown()
            process.terminate()
            _ = await ServeCommandTests.waitForExit(process)
            #expect(!(try String(contentsOf: log, encoding: .utf8)).contains("PRIVATE KEY"))

            let folder = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let keyFile = folder.appendingPathComponent("key.json")
            try Data(peer.key.utf8).write(to: keyFile)
            let fetch = Process()
            fetch.executableURL = ServeCommandTests.executable
            fetch.arguments = ["fetch", "--no-disk-cache", "--out", folder.path, "gs://photos/video-001.jpeg"]
            fetch.environment = ProcessInfo.processInfo.environment.merging([
                "GOOGLE_APPLICATION_CREDENTIALS": keyFile.path, "STORAGE_EMULATOR_HOST": "127.0.0.1:\(peer.port)",
            ]) { $1 }
            fetch.standardOutput = FileHandle.nullDevice
            try fetch.run()
            #expect(await ServeCommandTests.waitForExit(fetch) == 0)
            #expect(try Data(contentsOf: folder.appendingPathComponent("video-001.jpeg")) == (try Data(contentsOf: Self.photo)))
        }
    }

    @Test(
        "imgproxy's Swift variables: a swift:// source answered, a missing object 404, a container outside the list 403, the key never logged; imago fetch with python-swiftclient's variables",
        .enabled(if: ObjectStorePeer.isSwiftInstalled))
    func swift() async throws {
        try await withSwiftPeer(["photos": [Self.photo], "private": [Self.photo]]) { peer in
            let environment = [
                "IMGPROXY_USE_SWIFT": "true", "IMGPROXY_SWIFT_AUTH_URL": peer.authURL.absoluteString, "IMGPROXY_SWIFT_USERNAME": peer.user,
                "IMGPROXY_SWIFT_API_KEY": peer.key, "IMGPROXY_SWIFT_AUTH_VERSION": "1", "IMGPROXY_SWIFT_ALLOWED_BUCKETS": "photos",
            ]
            let (process, port, log) = try await PeerConfigurationTests.start(["--listen", "127.0.0.1:0"], environment: environment)
            defer { process.terminate() }
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            func get(_ source: String) async throws -> (Int, Data) {
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/insecure/rs:fit:64:64/plain/\(source)@png"), timeout: .seconds(30))
                return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 24)))
            }
            let (status, body) = try await get("swift://photos/video-001.jpeg")
            #expect(status == 200)
            let image = try PNGDecoder().decode(body, options: DecodingOptions())
            #expect(max(image.width, image.height) == 64)
            #expect(try await get("swift://photos/missing.jpeg").0 == 404)
            #expect(try await get("swift://private/video-001.jpeg").0 == 403)
            try await client.shutdown()
            process.terminate()
            _ = await ServeCommandTests.waitForExit(process)
            let text = try String(contentsOf: log, encoding: .utf8)
            #expect(!text.contains(peer.key) && !text.contains("AUTH_tk"))

            let folder = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            func fetch(_ url: String) async throws -> (Int32, String) {
                let process = Process()
                process.executableURL = ServeCommandTests.executable
                process.arguments = ["fetch", "--no-disk-cache", "--out", folder.path, url]
                process.environment = ProcessInfo.processInfo.environment.merging([
                    "ST_AUTH": peer.authURL.absoluteString, "ST_USER": peer.user, "ST_KEY": peer.key,
                ]) { $1 }
                let output = Pipe()
                process.standardOutput = output
                process.standardError = output
                try process.run()
                let text = await offThePool { String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
                return (await ServeCommandTests.waitForExit(process), text)
            }
            let (fetched, fetchText) = try await fetch("swift://photos/video-001.jpeg")
            #expect(fetched == 0, "\(fetchText)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("video-001.jpeg")) == (try Data(contentsOf: Self.photo)))
            let (failed, message) = try await fetch("swift://photos/missing.jpeg")
            #expect(failed != 0 && message.contains("Swift 404: Not Found"), "\(message)")
            #expect(!message.contains(peer.key) && !message.contains("AUTH_tk"))
        }
    }

    @Test(
        "Swift settings: IMGPROXY_SWIFT_* become the loader's; Keystone's auth versions stop the server naming the setting; swift:// refused unless turned on")
    func swiftSettings() throws {
        let configuration = try ServerSettings.configuration([
            "IMGPROXY_USE_SWIFT": "1", "IMGPROXY_SWIFT_AUTH_URL": "127.0.0.1:8080/auth/v1.0", "IMGPROXY_SWIFT_USERNAME": "test:tester",
            "IMGPROXY_SWIFT_API_KEY": "testing", "IMGPROXY_SWIFT_DENIED_BUCKETS": "a, b",
        ]).configuration
        #expect(configuration.readsSwift && configuration.swift.authURL?.absoluteString == "http://127.0.0.1:8080/auth/v1.0")
        #expect(configuration.swift.user == "test:tester" && configuration.swift.key == "testing" && configuration.swift.containers.denied == ["a", "b"])
        #expect(
            throws: ServerError(
                status: 500,
                "IMGPROXY_SWIFT_AUTH_VERSION has a value Imago cannot use (--swift-auth-version (IMAGO_SWIFT_AUTH_VERSION) 3: only Swift's v1 auth is supported)"
            )
        ) {
            try ServerSettings.configuration(["IMGPROXY_USE_SWIFT": "1", "IMGPROXY_SWIFT_AUTH_VERSION": "3"])
        }
        let resolver = SourceResolver(try ServerSettings.configuration([:]).configuration)
        #expect(throws: ServerError.forbidden("source not allowed")) { try resolver.url(for: "swift://photos/a.jpeg") }
        #expect(try SourceResolver(configuration).url(for: "swift://photos/a.jpeg").absoluteString == "swift://photos/a.jpeg")
    }
}
