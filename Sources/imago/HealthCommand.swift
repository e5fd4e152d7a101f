import ArgumentParser
import Foundation
import ImagoServer

#if canImport(Glibc)
    import Glibc
#endif

/// `imago health`, as `imgproxy health`: asks the server that the same settings describe for
/// `/health` and exits 0 when it answers 200, 1 otherwise. A container's health check runs it
/// beside `imago serve`, with the same environment.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that the server these settings describe answers /health (exit 0), as `imgproxy health` does.",
        discussion: "Reads --listen (IMAGO_LISTEN, IMGPROXY_BIND) as `imago serve` does; an address of all interfaces is asked on loopback."
    )

    /// The settings, as for `imago serve`.
    @Argument(parsing: .allUnrecognized, help: .hidden) var settings: [String] = []

    /// Seconds to wait for the answer.
    @Option(name: .long, help: "seconds to wait for the answer") var timeout: Int = 3

    func run() async throws {
        let host: String, port: Int
        do {
            let values = try ServerSettings.values(arguments: settings, environment: ProcessInfo.processInfo.environment)
            (host, port, _) = try ServerSettings.configuration(values)
        } catch {
            throw ValidationError(error.message)
        }
        let asked = host == "0.0.0.0" || host.isEmpty ? "127.0.0.1" : host == "::" ? "::1" : host
        let status = Self.status(host: asked, port: port, path: "/health", timeout: max(1, timeout))
        guard status == 200 else {
            warn("imago health: \(asked):\(port)/health " + (status.map { "answered \($0)" } ?? "did not answer"))
            throw ExitCode(1)
        }
        say("ok")
    }

    /// The status of `GET path` on `host:port` over HTTP/1.0, or nil when no answer came in time.
    static func status(host: String, port: Int, path: String, timeout: Int) -> Int? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else { return nil }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(host)\r\nUser-Agent: imago-health\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var head = [UInt8](repeating: 0, count: 64)
        var read = 0
        while read < head.count {
            let got = head[read...].withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard got > 0 else { break }
            read += got
        }
        // "HTTP/1.1 200 OK": the status is the second word.
        let line = String(decoding: head[..<read], as: UTF8.self)
        let words = line.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, words[0].hasPrefix("HTTP/") else { return nil }
        return Int(words[1])
    }
}
