import Foundation
import Glibc

@testable import Imago

/// A program a test runs as its peer (tinyproxy, nginx), in the foreground, its standard output
/// and error read from one pipe. It is ready when its log says so; after that the log is read
/// without blocking whenever it is asked for, so a line the peer wrote before it answered a
/// request is there once the answer is, with no race and no sleep.
final class PeerProcess: Sendable {
    let process: Process
    /// The peer's own files (configuration, logs), removed when it stops.
    let folder: URL
    private let output: FileHandle
    private let lines = Locked("")

    /// What it logged so far.
    var log: String {
        while readChunk() > 0 {}
        return lines.withLock { $0 }
    }

    private init(process: Process, folder: URL, output: FileHandle) {
        self.process = process
        self.folder = folder
        self.output = output
    }

    /// One read(2) of the log pipe into `lines` (FileHandle.read(upToCount:) would wait for the
    /// whole count or the end); its count, 0 or less when nothing came.
    private func readChunk() -> Int {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(output.fileDescriptor, &buffer, buffer.count)
        if count > 0 { lines.withLock { $0 += String(decoding: buffer[..<count], as: UTF8.self) } }
        return count
    }

    /// Runs `executable` with `arguments` and returns once its log contains `ready`; throws
    /// (and stops it) when it ends first.
    static func start(_ executable: String, _ arguments: [String], folder: URL, readyWhen ready: String) async throws -> PeerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let peer = PeerProcess(process: process, folder: folder, output: output.fileHandleForReading)
        // Blocking reads until it is ready (or ends, when it could not start).
        await offThePool {
            while !peer.lines.withLock({ $0.contains(ready) }), peer.readChunk() > 0 {}
        }
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        guard peer.log.contains(ready) else {
            await peer.stop()
            throw POSIXError(.ECONNREFUSED)
        }
        return peer
    }

    /// Kills it (nothing of it needs keeping; it inherits the test's blocked signals, so only
    /// SIGKILL is sure to end it) and waits, then removes its folder. The peer must not leave a
    /// child behind: Foundation sees a process end only once every process holding its pipe has.
    func stop() async {
        kill(process.processIdentifier, SIGKILL)
        let process = process
        await offThePool { process.waitUntilExit() }
        try? FileManager.default.removeItem(at: folder)
    }

    /// A port nothing listens on now (bound to 0 and released: the peers cannot be told port 0).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
