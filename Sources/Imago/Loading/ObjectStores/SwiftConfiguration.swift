import Foundation

/// Where ``SwiftDataLoader`` signs in to OpenStack Swift and as whom: Swift's v1 authentication
/// (TempAuth, SwAuth, and the v1 endpoints hosted Swifts keep), which answers a user and key with a
/// token and the account's storage URL.
public struct SwiftConfiguration: Sendable {
    /// The v1 auth URL (`http://127.0.0.1:8080/auth/v1.0`); nil loads nothing.
    public var authURL: URL?
    /// The user, `account:user` for TempAuth (imgproxy's `IMGPROXY_SWIFT_USERNAME`).
    public var user: String
    /// The user's key (imgproxy's `IMGPROXY_SWIFT_API_KEY`); it goes only to the auth URL.
    public var key: String
    /// Which containers may be read.
    public var containers: BucketRule
    /// The most a connection to the auth URL or the storage may take to be made (imgproxy's
    /// `IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS`). Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// The most Swift may go without sending a byte, the request's own limit permitting (imgproxy's
    /// `IMGPROXY_SWIFT_TIMEOUT_SECONDS`, the Swift client's data timeout). Default 60 s.
    public var timeout: Duration = .seconds(60)

    /// A configuration from its parts.
    public init(authURL: URL? = nil, user: String = "", key: String = "", containers: BucketRule = BucketRule()) {
        self.authURL = authURL
        self.user = user
        self.key = key
        self.containers = containers
    }

    /// What python-swiftclient would use for v1 auth: `ST_AUTH`, `ST_USER`, `ST_KEY`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> SwiftConfiguration {
        SwiftConfiguration(
            authURL: environment["ST_AUTH"].flatMap { $0.isEmpty ? nil : S3Configuration.endpointURL($0) },
            user: environment["ST_USER"] ?? "", key: environment["ST_KEY"] ?? "")
    }
}
