import Foundation

/// What a process's environment says of its network, read as curl and OpenSSL's tools read it:
/// the proxies of `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy`, and the certificate
/// authorities of `SSL_CERT_FILE` and `SSL_CERT_DIR`. The one reading of them that the CLI and
/// `imago serve` share.
public struct NetworkEnvironment: Sendable {
    /// The proxies transfers go through.
    public var proxies: ProxySettings
    /// The certificate authorities trusted besides the system's.
    public var trustRoots: TrustRoots

    /// Reads `environment`.
    public init(_ environment: [String: String] = ProcessInfo.processInfo.environment) {
        proxies = ProxySettings.environment(environment)
        trustRoots = TrustRoots.environment(environment)
    }

    /// The proxies and certificate authorities given.
    public init(proxies: ProxySettings, trustRoots: TrustRoots) {
        self.proxies = proxies
        self.trustRoots = trustRoots
    }

    /// Why the environment cannot be used (a certificate path that cannot be read), to be said
    /// at start rather than as a TLS failure on every source; nil when it can.
    public var problem: String? {
        trustRoots.unreadablePaths.first.map { "SSL_CERT_FILE or SSL_CERT_DIR names \($0), which cannot be read" }
    }
}
