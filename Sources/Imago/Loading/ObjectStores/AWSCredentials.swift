import Foundation

/// An AWS access key: what Signature Version 4 signs with. Its description names the key ID
/// only, so printing or logging it never shows the secret.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The access key ID (`AKIA…`, `ASIA…`).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `X-Amz-Security-Token`.
    public var sessionToken: String?

    /// Credentials from their parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String { "AWSCredentials(\(accessKeyID), secret hidden)" }

    /// The credentials the AWS tools would use, in their order: `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from `environment`, else the profile
    /// `AWS_PROFILE` (or `default`) of the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
    /// or `~/.aws/credentials`). Nil when neither has a key: requests then go unsigned.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> AWSCredentials? {
        if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        }
        let path =
            environment["AWS_SHARED_CREDENTIALS_FILE"]
            ?? environment["HOME"].map { $0 + "/.aws/credentials" }
        guard let path, let text = Self.readSmallFile(path) else { return nil }
        return sharedFile(text, profile: environment["AWS_PROFILE"] ?? "default")
    }

    /// The credentials of `profile` in the text of a shared credentials file (INI: `[profile]`,
    /// then `aws_access_key_id = …` lines), or nil.
    public static func sharedFile(_ text: String, profile: String) -> AWSCredentials? {
        var section: String?
        var values: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            values[name] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard let id = values["aws_access_key_id"], !id.isEmpty, let secret = values["aws_secret_access_key"], !secret.isEmpty else { return nil }
        return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// A credentials file is a few lines; anything past 1 MB is not one.
    private static func readSmallFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 1 << 20) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
