import Foundation

/// How `imago serve` reads its settings' texts: flags over `IMAGO_*` and peer variables, a
/// thumbor.conf's settings, and what a peer's variables Imago does not read are.
extension ServerSettings {
    /// The settings `arguments` give (`--flag value`, `--flag=value`, or a switch alone), on top of
    /// `environment`'s `IMAGO_*` and peer variables: a flag wins. Throws naming an unknown flag or
    /// a flag without its value.
    public static func values(arguments: [String], environment: [String: String]) throws(ServerError) -> [String: String] {
        let variables = Set(all.flatMap { [$0.variable] + $0.peerVariables })
        // imgproxy's variables Imago does not read are kept, to be named at start.
        var values = environment.filter {
            variables.contains($0.key) && !$0.key.hasPrefix(PeerVariable.thumborConfPrefix) || $0.key.hasPrefix("IMGPROXY_")
                || ambientVariables.contains($0.key)
        }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1)
            guard let setting = all.first(where: { $0.flag == parts[0] }) else { throw ServerError(status: 500, "unknown option '\(argument)'") }
            if parts.count == 2 {
                values[setting.variable] = String(parts[1])
            } else if setting.isSwitch {
                values[setting.variable] = "true"
            } else {
                guard let value = rest.popFirst() else { throw ServerError(status: 500, "\(setting.flag) needs a value") }
                values[setting.variable] = value
            }
        }
        if let path = values["IMAGO_THUMBOR_CONFIG"] { values.merge(try Self.values(thumborConfigAt: path)) { own, _ in own } }
        return values
    }

    /// Variables of other tools that settings read as those tools do: the AWS credentials, region
    /// and endpoint, `HOME` for `~/.aws/credentials`, Google's key file and emulator, curl's proxy
    /// variables, OpenSSL's certificate file and directory.
    static let ambientVariables: Set<String> = [
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION",
        "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_STS", "HOME", "GOOGLE_APPLICATION_CREDENTIALS",
        "STORAGE_EMULATOR_HOST", "ST_AUTH", "ST_USER", "ST_KEY",
        "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
    ]

    /// `file`'s settings as values (`thumbor.conf:NAME` → the literal's text); a `None` is left
    /// out (thumbor's default stands), a dict is blank (no setting takes one).
    public static func values(thumborConfig file: ThumborConfigFile) -> [String: String] {
        var values: [String: String] = [:]
        for (name, value) in file.settings where value != .none {
            values[PeerVariable.thumborConfPrefix + name] = value.settingText ?? ""
        }
        return values
    }

    /// The thumbor.conf at `path` as values; throws naming the file and the line it cannot read.
    static func values(thumborConfigAt path: String) throws(ServerError) -> [String: String] {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: ThumborConfigFile.maxBytes + 1) ?? Data()
        } catch {
            throw ServerError(status: 500, "--thumbor-config (IMAGO_THUMBOR_CONFIG): cannot read \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ServerError(status: 500, "\(path) is not UTF-8 text") }
        do {
            return values(thumborConfig: try ThumborConfigFile(parsing: text))
        } catch {
            throw ServerError(status: 500, "\(path), line \(error.line): \(error.reason)")
        }
    }

    /// The `IMGPROXY_*` variables and thumbor.conf settings among `values` that no setting reads,
    /// sorted (thumbor.conf's as `thumbor.conf:NAME`): the command logs each once at start, so an
    /// operator moving from imgproxy or thumbor sees what Imago ignores.
    public static func unsupportedPeerVariables(in values: [String: String]) -> [String] {
        let read = Set(all.flatMap(\.peerVariables))
        return values.keys.filter { ($0.hasPrefix("IMGPROXY_") || $0.hasPrefix(PeerVariable.thumborConfPrefix)) && !read.contains($0) }.sorted()
    }
}
