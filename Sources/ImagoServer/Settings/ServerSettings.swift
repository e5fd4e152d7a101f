import Foundation
import Imago

/// `imago serve`'s settings by name, from flags, then `IMAGO_*` variables, then the peer's own
/// (a flag wins): each declared once in ``all``, so docs/SERVER.md, the variables, the flags and
/// the configuration cannot drift apart.
public enum ServerSettings {
    /// Every setting, in docs/SERVER.md's order: each group's declarations (`+ConfigurationSources`, `+Listen`,
    /// `+Sources`, `+Output`, `+Imgproxy`, `+Thumbor`, `+Memory`, `+SharedStorage`, `+Observability`).
    public static let all: [ServerSetting] =
        configurationSources + listenAndLimits + sources + output + imgproxy + thumbor + memory + resultStorage + sourceStorage + observability

    /// A setting's text from `values` (variable name → text): Imago's variable, else what its
    /// peer's variables make (nil when neither is set), with the variable it came from.
    static func text(of setting: ServerSetting, in values: [String: String]) throws(ServerError) -> (text: String, from: String)? {
        if let text = values[setting.variable] { return (text, setting.variable) }
        var made: (text: String, from: String)?
        for peer in setting.peers {
            guard let text = values[peer.name], peer.takesBlank || !text.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let given = peer.takesBlank ? text : text.trimmingCharacters(in: .whitespaces)
            made = (try peer.convert(given, made?.text), (made.map { $0.from + ", " } ?? "") + peer.name)
        }
        return made
    }

    /// The listen address and the configuration `values` (variable name → text) give; with
    /// `--network unix`, the host is the socket's path and the port 0.
    public static func configuration(_ values: [String: String]) throws(ServerError) -> (host: String, port: Int, configuration: ServerConfiguration) {
        var configuration = ServerConfiguration()
        // As curl and OpenSSL's tools (as the CLI reads them): --proxy and --no-proxy override.
        let network = NetworkEnvironment(values)
        if let problem = network.problem { throw ServerError(status: 500, problem) }
        (configuration.proxies, configuration.trustRoots) = (network.proxies, network.trustRoots)
        var listen = "127.0.0.1:8080", listenSource = "IMAGO_LISTEN"
        for setting in all where setting.compound == nil {
            guard let (text, source) = try text(of: setting, in: values) else { continue }
            if setting.variable == "IMAGO_LISTEN" { (listen, listenSource) = (text, source) }
            do {
                try setting.apply(&configuration, text, values)
            } catch  where source != setting.variable {
                // A peer's variable is named as the operator wrote it.
                throw ServerError(status: 500, "\(source) has a value Imago cannot use (\(error.message))")
            }
        }
        // Each compound once, with every part's text, after the settings that stand alone.
        var applied: Set<[String]> = []
        for rule in all.compactMap(\.compound) where applied.insert(rule.variables).inserted {
            let parts = rule.variables.compactMap { variable in all.first { $0.variable == variable } }
            let texts = try parts.map { part throws(ServerError) in try text(of: part, in: values) }
            guard texts.contains(where: { $0 != nil }) else { continue }
            do {
                try rule.apply(&configuration, texts.map { $0?.text }, values)
            } catch {
                // A peer's variable is named as the operator wrote it.
                let peers = zip(parts, texts).compactMap { part, text in text.flatMap { $0.from != part.variable ? $0.from : nil } }
                guard peers.isEmpty else { throw ServerError(status: 500, "\(peers.joined(separator: ", ")) has a value Imago cannot use (\(error.message))") }
                throw error
            }
        }
        if values["IMAGO_THUMBOR_CONFIG"] != nil, values["IMAGO_DIALECT"] == nil, values["IMAGO_THUMBOR_PATH"] == nil { configuration.dialect = .thumbor }
        if let thumbor = configuration.thumborMount, thumbor == configuration.imgproxyMount {
            throw ServerError(status: 500, "imgproxy's and thumbor's URLs cannot both be at '\(thumbor.isEmpty ? "/" : thumbor)'")
        }
        // Named as the operator wrote it: IMGPROXY_BIND when the address came from it.
        let badListen = ServerError(status: 500, "--listen (\(listenSource)) has a value Imago cannot use")
        if configuration.network == .unix {
            // imgproxy's IMGPROXY_BIND is then the socket's path.
            guard !listen.isEmpty, listen.utf8.count < 108, !listen.contains("\0") else { throw badListen }
            configuration.listenSocketPath = listen
            return (listen, 0, configuration)
        }
        guard let (host, port) = HostAndPort(listen).map({ ($0.host, $0.port) }) else { throw badListen }
        // tcp4 and tcp6 take an address of their family only.
        if configuration.network == .tcp4, host.contains(":") { throw badListen }
        if configuration.network == .tcp6, !host.isEmpty, !host.contains(":"), host.allSatisfy({ $0.isNumber || $0 == "." }) {
            throw badListen
        }
        // As imgproxy checks it: metrics on the images' own address would take its port.
        if let metrics = configuration.metricsAddress, metrics.port != 0, metrics.port == port, metrics.host == host {
            throw ServerError(status: 500, "--metrics-listen (IMAGO_METRICS_LISTEN) must differ from --listen")
        }
        return (host.isEmpty ? (configuration.network == .tcp6 ? "::" : "0.0.0.0") : host, port, configuration)
    }
}
