import Foundation

/// A Google Cloud service account's key, as the JSON file the console gives (imgproxy's
/// `IMGPROXY_GCS_KEY`): whose it is, its private key and where tokens are asked for. Its
/// description names the account only, never the key.
public struct GCSServiceAccount: Sendable, Equatable, CustomStringConvertible {
    /// The account's e-mail address (`client_email`).
    public var clientEmail: String
    /// The RSA private key in PEM (`private_key`).
    public var privateKeyPEM: String
    /// The key's ID (`private_key_id`), named in the token request's header.
    public var privateKeyID: String?
    /// Where the OAuth token is asked for (`token_uri`). Default Google's.
    public var tokenURL: URL

    /// Google's token endpoint.
    public static let googleTokenURL = URL(string: "https://oauth2.googleapis.com/token")!

    /// An account from its parts.
    public init(clientEmail: String, privateKeyPEM: String, privateKeyID: String? = nil, tokenURL: URL = GCSServiceAccount.googleTokenURL) {
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.privateKeyID = privateKeyID
        self.tokenURL = tokenURL
    }

    /// The account in a service account key file's JSON; nil when it is not one (a key file is a
    /// few kilobytes: more than 64 KB is not one either).
    public init?(json: Data) {
        guard json.count <= 64 * 1024, let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let email = object["client_email"] as? String, !email.isEmpty,
            let key = object["private_key"] as? String, key.contains("PRIVATE KEY")
        else { return nil }
        var tokenURL = Self.googleTokenURL
        if let text = object["token_uri"] as? String {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil else {
                return nil
            }
            tokenURL = url
        }
        self.init(clientEmail: email, privateKeyPEM: key, privateKeyID: object["private_key_id"] as? String, tokenURL: tokenURL)
    }

    /// The account in the key file at `path`; nil when it cannot be read or is not one.
    public init?(file path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 64 * 1024 + 1) else { return nil }
        self.init(json: data)
    }

    public var description: String { "GCSServiceAccount(\(clientEmail), key hidden)" }
}

/// Where ``GCSDataLoader`` sends its requests, and as whom.
public struct GCSConfiguration: Sendable {
    /// The JSON API's server: Google's by default, or an emulator's (`http://127.0.0.1:9023`; a
    /// trailing `/storage/v1` is accepted, as imgproxy's `IMGPROXY_GCS_ENDPOINT` is often written).
    public var endpoint: URL
    /// Whose token requests carry; nil sends them without one (public objects, emulators).
    public var account: GCSServiceAccount?
    /// Which buckets may be read.
    public var buckets: BucketRule

    /// Google Cloud Storage's JSON API.
    public static let googleEndpoint = URL(string: "https://storage.googleapis.com")!

    /// What Google's client libraries would use: the key file `GOOGLE_APPLICATION_CREDENTIALS`
    /// names, and the emulator `STORAGE_EMULATOR_HOST` names (`host:port` is http) instead of
    /// Google's endpoint.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> GCSConfiguration {
        var configuration = GCSConfiguration()
        if let host = environment["STORAGE_EMULATOR_HOST"], !host.isEmpty, let url = S3Configuration.endpointURL(host) {
            configuration.endpoint = url
        }
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            configuration.account = GCSServiceAccount(file: path)
        }
        return configuration
    }

    /// A configuration from its parts.
    public init(endpoint: URL = GCSConfiguration.googleEndpoint, account: GCSServiceAccount? = nil, buckets: BucketRule = BucketRule()) {
        self.endpoint = endpoint
        self.account = account
        self.buckets = buckets
    }
}
