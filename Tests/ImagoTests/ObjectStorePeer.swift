import Foundation
import Testing

/// A real object-store API server on 127.0.0.1 started for a test: one of `Tests/Peers`' scripts
/// (moto for S3), run by the peers' venv that `make test` installs (`.venv-peers`). The script
/// prints one JSON line once it serves, and stops when its standard input closes.
struct ObjectStorePeer: Sendable {
    /// The S3 server's answer: where it listens and the key it made.
    struct S3: Decodable, Sendable {
        var port: Int
        var accessKeyID: String
        var secretAccessKey: String
        /// `bucket/name` → the version the upload made.
        var versions: [String: String?]
        /// A role that may read S3, and the key of a user that may only assume it.
        var roleARN: String
        var assumerKeyID: String
        var assumerSecret: String

        var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    }

    /// The GCS front's answer: where it listens, the service account's key file (and the same
    /// account with a key the token endpoint does not know), each object's generation.
    struct GCS: Decodable, Sendable {
        var port: Int
        var key: String
        var wrongKey: String
        var generations: [String: String?]

        var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    }

    /// The Swift peer's answer: its proxy's port, the v1 auth URL with the user and key TempAuth
    /// knows, the account's storage URL, each object's ETag.
    struct Swift: Decodable, Sendable {
        var port: Int
        var authURL: URL
        var user: String
        var key: String
        var storageURL: URL
        var etags: [String: String]
    }

    static let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
    static let python = project.appendingPathComponent(".venv-peers/bin/python")
    /// Whether the venv is there (`make test` makes it; a bare `swift test` may not have it).
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: python.path) }
    /// Whether Debian's Swift servers are there for `swift_peer.py`.
    static var isSwiftInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/swift-proxy-server") }

    let process: Process
    let input: Pipe
    let line: Data

    /// Starts `script` with `arguments` and waits for its first line.
    static func start(_ script: String, _ arguments: [String]) async throws -> ObjectStorePeer {
        let process = Process()
        process.executableURL = python
        process.arguments = [project.appendingPathComponent("Tests/Peers/\(script)").path] + arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        // A file, not a pipe: a peer that logs every request would fill a pipe nobody reads.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("imago-peer-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errors) }
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let line = await offThePool { () -> Data in
            var line = Data()
            while let byte = try? output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 0x0A {
                line.append(first)
            }
            return line
        }
        let peer = ObjectStorePeer(process: process, input: input, line: line)
        guard !line.isEmpty else {
            await peer.stop()
            let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw PeerFailure(script: script, stderr: String(said.suffix(4000)))
        }
        return peer
    }

    /// Closes its input and waits for it to end.
    func stop() async {
        try? input.fileHandleForWriting.close()
        let process = process
        await offThePool { process.waitUntilExit() }
    }

    struct PeerFailure: Error, CustomStringConvertible {
        var script: String
        /// The end of what the peer wrote to its standard error.
        var stderr: String
        var description: String { "\(script) ended before it served: \(stderr)" }
    }
}

/// Runs `body` with a moto S3 server holding `buckets` (bucket → files uploaded under their names,
/// versioning on), signature checks on from the first request after the set-up.
func withS3Peer(_ buckets: [String: [URL]], _ body: (ObjectStorePeer.S3) async throws -> Void) async throws {
    try await withObjectStorePeer("s3_peer.py", buckets, body)
}

/// Runs `body` with gcp-storage-emulator holding `buckets`, behind a front that issues tokens only
/// for the service account's signed JWT and serves only requests carrying one.
func withGCSPeer(_ buckets: [String: [URL]], _ body: (ObjectStorePeer.GCS) async throws -> Void) async throws {
    try await withObjectStorePeer("gcs_peer.py", buckets, body)
}

/// Runs `body` with Debian's OpenStack Swift (proxy with TempAuth, account, container and object
/// servers, memcached) holding `containers`.
func withSwiftPeer(_ containers: [String: [URL]], _ body: (ObjectStorePeer.Swift) async throws -> Void) async throws {
    try await withObjectStorePeer("swift_peer.py", containers, body)
}

private func withObjectStorePeer<Answer: Decodable>(_ script: String, _ buckets: [String: [URL]], _ body: (Answer) async throws -> Void) async throws {
    let arguments = buckets.sorted { $0.key < $1.key }.map { "\($0.key)=" + $0.value.map(\.path).joined(separator: ",") }
    let peer = try await ObjectStorePeer.start(script, arguments)
    do {
        try await body(try JSONDecoder().decode(Answer.self, from: peer.line))
    } catch {
        await peer.stop()
        throw error
    }
    await peer.stop()
}
