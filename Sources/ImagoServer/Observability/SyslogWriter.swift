import Foundation
import Imago
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Sends log lines to a syslog daemon as Go's `log/syslog` does for imgproxy's
/// `IMGPROXY_SYSLOG_*`: `<PRI>TIMESTAMP HOSTNAME TAG[PID]: MESSAGE` over `udp` or `tcp` (a newline
/// after each over TCP), `<PRI>TIMESTAMP TAG[PID]: MESSAGE` to a local socket (`unixgram`, `unix`,
/// or none named: `/dev/log`, `/var/run/syslog`, `/var/run/log`), with the user facility. A line
/// that cannot be sent is dropped: logging never stops an answer.
final class SyslogWriter: Sendable {
    /// What `--syslog-*` set.
    struct Settings: Sendable, Equatable {
        var enabled = false
        /// The least severe line sent.
        var level = Logger.Level.info
        /// `udp`, `tcp`, `unix`, `unixgram`, or empty for the local daemon.
        var network = ""
        var address = ""
        var tag = "imago"
    }

    private let settings: Settings
    private let socket: Locked<Int32>
    private let isLocal: Bool
    private let isStream: Bool
    private let hostname: String

    /// A writer connected as `settings` say; a 500 naming the setting when it cannot connect.
    init(_ settings: Settings) throws(ServerError) {
        self.settings = settings
        var name = [CChar](repeating: 0, count: 256)
        hostname = gethostname(&name, name.count) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        let network = settings.network.lowercased()
        isLocal = network.isEmpty || network.hasPrefix("unix")
        isStream = network == "tcp" || network == "unix"
        let descriptor: Int32?
        switch network {
        case "udp", "tcp": descriptor = Self.connectInternet(settings.address, stream: network == "tcp")
        case "unix", "unixgram": descriptor = Self.connectLocal(settings.address, stream: network == "unix")
        case "": descriptor = ["/dev/log", "/var/run/syslog", "/var/run/log"].lazy.compactMap { Self.connectLocal($0, stream: false) }.first
        default: throw ServerError(status: 500, "--syslog-network (IMAGO_SYSLOG_NETWORK) is not udp, tcp, unix or unixgram")
        }
        guard let descriptor else {
            throw ServerError(
                status: 500,
                "--syslog-address (IMAGO_SYSLOG_ADDRESS): cannot reach a syslog daemon at '\(settings.address)' over \(network.isEmpty ? "the local socket" : network)"
            )
        }
        socket = Locked(descriptor)
    }

    deinit {
        socket.withLock { _ = close($0) }
    }

    /// Sends `message` (one line, no newline) at `level` when the settings' level lets it through.
    func send(_ message: String, level: Logger.Level) {
        guard level >= settings.level else { return }
        let severity: Int =
            switch level {
            case .trace, .debug: 7
            case .info: 6
            case .notice: 5
            case .warning: 4
            case .error: 3
            case .critical: 2
            }
        let priority = 8 + severity  // the user facility
        let stamp = LogFormat.stamp(time(nil), utc: true)
        let head = isLocal ? "<\(priority)>\(stamp) \(settings.tag)[\(getpid())]: " : "<\(priority)>\(stamp) \(hostname) \(settings.tag)[\(getpid())]: "
        let bytes = Array((head + message + (isStream ? "\n" : "")).utf8)
        socket.withLock { descriptor in
            _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
    }

    /// A socket connected to `address` (`host:port`, a numeric IPv4 or IPv6 address or a name).
    private static func connectInternet(_ address: String, stream: Bool) -> Int32? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port = String(address[address.index(after: colon)...])
        var hints = addrinfo()
        hints.ai_socktype = Int32(stream ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &found) == 0, let first = found else { return nil }
        defer { freeaddrinfo(found) }
        let descriptor = Glibc.socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { return nil }
        guard connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// A socket connected to the Unix socket at `path`.
    private static func connectLocal(_ path: String, stream: Bool) -> Int32? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let descriptor = Glibc.socket(AF_UNIX, Int32(stream ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}
