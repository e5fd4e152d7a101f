import Foundation

/// A proxy: an HTTP proxy (where it listens and, when it asks for them, the credentials it is
/// sent, `Proxy-Authorization: Basic`), or a SOCKS5 proxy without authentication. Its
/// description never shows the password.
public struct HTTPProxy: Sendable, Hashable, CustomStringConvertible {
    /// The protocol spoken to the proxy.
    public enum Kind: Sendable, Hashable {
        /// Plain requests in absolute form, `CONNECT` tunnels for https.
        case http
        /// A SOCKS5 `CONNECT` for every connection (RFC 1928), with no authentication; the target
        /// goes as the address the policy checked, else as the name, which the proxy resolves.
        case socks5
    }

    /// The proxy's host name or address.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user and password sent to the proxy, if any (HTTP proxies only).
    public var credentials: ImageRequest.Credentials?
    /// The protocol spoken to it. Default http.
    public var kind: Kind

    /// A proxy from its parts.
    public init(host: String, port: Int, credentials: ImageRequest.Credentials? = nil, kind: Kind = .http) {
        self.host = host
        self.port = port
        self.credentials = credentials
        self.kind = kind
    }

    /// A proxy as the variables write it: `http://user:password@host:port`, `host:port` (taken as
    /// http, as curl does), or `socks5://host:port` and `socks5h://host:port`. Nil for anything
    /// else: an https, SOCKS4 or SOCKS5-with-credentials proxy is not one Imago speaks to.
    public init?(url text: String) {
        let written = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: written), let scheme = url.scheme?.lowercased(), var host = url.host(percentEncoded: false), !host.isEmpty else {
            return nil
        }
        let kind: Kind
        switch scheme {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default: return nil
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var credentials: ImageRequest.Credentials?
        if let user = url.user(percentEncoded: false) {
            guard kind == .http else { return nil }
            credentials = ImageRequest.Credentials(user: user, password: url.password(percentEncoded: false) ?? "")
        }
        self.init(host: host, port: url.port ?? 1080, credentials: credentials, kind: kind)
    }

    /// `Proxy-Authorization`'s value, when the proxy has credentials.
    var authorization: String? { credentials?.basicAuthorization }

    /// Whether plain http goes to it as requests in absolute form (an HTTP proxy), rather than
    /// through a tunnel it makes for every connection (SOCKS).
    var takesAbsoluteRequests: Bool { kind == .http }

    public var description: String {
        "\(kind == .http ? "HTTPProxy" : "SOCKS5Proxy")(\(host):\(port)\(credentials == nil ? "" : ", with credentials"))"
    }
}

/// Which proxy each transfer goes through, by curl's rules: the proxy for the URL's scheme
/// (`http_proxy`, `https_proxy`), else `all_proxy`, unless `no_proxy` names the host. Every host
/// goes through the proxy, loopback included, unless `no_proxy` names it (curl's rule; Go's
/// transport skips loopback). The address policy still applies to the host a URL names: a proxy
/// is no way around it.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy of `http://` URLs.
    public var http: HTTPProxy?
    /// The proxy of `https://` URLs, reached with a `CONNECT` tunnel.
    public var https: HTTPProxy?
    /// Hosts reached directly (`no_proxy`): a name matches itself and its subdomains (a leading
    /// `.` is ignored), an address itself, `address/bits` its network, `*` every host.
    public var noProxy: [String]

    /// Settings that send every transfer through `http` and `https`, except hosts in `noProxy`.
    public init(http: HTTPProxy? = nil, https: HTTPProxy? = nil, noProxy: [String] = []) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
    }

    /// No proxy: every transfer goes directly. The default.
    public static let none = ProxySettings()

    /// The settings the variables give, as curl reads them: `http_proxy`, `https_proxy`,
    /// `all_proxy` and `no_proxy`, each also in capitals (the lowercase name wins). A value that is
    /// not an http proxy URL is ignored.
    public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxySettings {
        func value(_ name: String) -> String? {
            [environment[name], environment[name.uppercased()]].compactMap { $0 }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }
        let all = value("all_proxy").flatMap(HTTPProxy.init(url:))
        let noProxy = (value("no_proxy") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return ProxySettings(
            http: value("http_proxy").flatMap(HTTPProxy.init(url:)) ?? all, https: value("https_proxy").flatMap(HTTPProxy.init(url:)) ?? all,
            noProxy: noProxy)
    }

    /// The proxy a transfer of `url` goes through, or nil to go directly.
    public func proxy(for url: URL) -> HTTPProxy? {
        let proxy: HTTPProxy?
        switch url.scheme?.lowercased() {
        case "http": proxy = http
        case "https": proxy = https
        default: proxy = nil
        }
        guard let proxy, var host = url.host(percentEncoded: false)?.lowercased() else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return noProxy.contains(where: { Self.matches(host, $0) }) ? nil : proxy
    }

    private static func matches(_ host: String, _ rawEntry: String) -> Bool {
        var entry = rawEntry.lowercased()
        if entry == "*" { return true }
        if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") { entry = String(entry[entry.index(after: entry.startIndex)..<close]) }
        if let slash = entry.firstIndex(of: "/"), let bits = Int(entry[entry.index(after: slash)...]),
            let network = IPAddress(String(entry[..<slash])), let address = IPAddress(host)
        {
            return address.isIn(network: network, prefixLength: bits)
        }
        if IPAddress(entry) != nil || IPAddress(host) != nil { return IPAddress(entry) == IPAddress(host) && IPAddress(host) != nil }
        // A name: itself and its subdomains; a port after the name is ignored, as curl ignores it.
        if let colon = entry.lastIndex(of: ":"), Int(entry[entry.index(after: colon)...]) != nil { entry = String(entry[..<colon]) }
        while entry.hasPrefix(".") { entry.removeFirst() }
        return !entry.isEmpty && (host == entry || host.hasSuffix("." + entry))
    }
}
