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

        var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    }

    static let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
    static let python = project.appendingPathComponent(".venv-peers/bin/python")
    /// Whether the venv is there (`make test` makes it; a bare `swift test` may not have it).
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: python.path) }

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
        process.standardError = FileHandle.nullDevice
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
            throw PeerFailure(script: script)
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
        var description: String { "\(script) ended before it served" }
    }
}

/// Runs `body` with a moto S3 server holding `buckets` (bucket → files uploaded under their names,
/// versioning on), signature checks on from the first request after the set-up.
func withS3Peer(_ buckets: [String: [URL]], _ body: (ObjectStorePeer.S3) async throws -> Void) async throws {
    let arguments = buckets.sorted { $0.key < $1.key }.map { "\($0.key)=" + $0.value.map(\.path).joined(separator: ",") }
    let peer = try await ObjectStorePeer.start("s3_peer.py", arguments)
    do {
        try await body(try JSONDecoder().decode(ObjectStorePeer.S3.self, from: peer.line))
    } catch {
        await peer.stop()
        throw error
    }
    await peer.stop()
}
