import Foundation

/// An address to listen on as operators write it: `host:port`, `[v6]:port`, or `:port` for
/// every address.
public struct HostAndPort: Sendable, Hashable, CustomStringConvertible {
    /// The host as written, brackets dropped; empty for every address.
    public var host: String
    /// 0–65535; 0 for one the system picks.
    public var port: Int

    /// `text` read; nil when it has no `:port` or the port is not 0–65535.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            return nil
        }
        host = String(text[..<colon]).trimmingCharacters(in: ["[", "]"])
        self.port = port
    }

    public var description: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}
