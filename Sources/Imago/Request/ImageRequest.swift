import Foundation

/// What to load: a URL and how to load it.
///
/// Two requests that would make the same transfer (same URL, headers, credentials and transfer
/// options) share one transfer while it is in flight; see ``transferKey``.
public struct ImageRequest: Sendable, Hashable {
    /// Where the image is: `http(s)`, `file`, `data` or any scheme a registered loader accepts.
    public var url: URL
    /// How urgent the request is. A shared transfer runs at the highest priority of its handles.
    public var priority: Priority
    /// Extra HTTP headers, applied over the configuration's default headers.
    public var headers: [String: String]
    /// Basic-auth credentials for this request; they win over the URL's user info and the configuration.
    public var credentials: Credentials?
    /// Switches that change how the transfer is made.
    public var options: Options
    /// A total time limit for the transfer, on top of the configuration's time without bytes.
    public var deadline: Duration?

    /// Makes a request for `url`.
    public init(
        url: URL,
        priority: Priority = .normal,
        headers: [String: String] = [:],
        credentials: Credentials? = nil,
        options: Options = [],
        deadline: Duration? = nil
    ) {
        self.url = url
        self.priority = priority
        self.headers = headers
        self.credentials = credentials
        self.options = options
        self.deadline = deadline
    }

    /// Identifies the transfer this request needs; equal keys share one transfer.
    public var transferKey: TransferKey {
        TransferKey(
            url: url.absoluteString,
            headers: headers.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { "\($0.key.lowercased()):\($0.value)" },
            credentials: credentials,
            options: options.intersection(Options.changingTransfer)
        )
    }
}

extension ImageRequest {
    /// Switches that change how a transfer is made.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Accept TLS certificates that do not verify (self-signed, expired, wrong host).
        public static let allowInvalidCertificates = Options(rawValue: 1 << 0)
        /// Send cookies from the configuration's cookie provider. Cookies are never sent otherwise.
        public static let sendCookies = Options(rawValue: 1 << 1)
        /// Deliver previews while the bytes arrive (progressive JPEG scans, partial rows), throttled
        /// by the configuration's `previewInterval`.
        public static let previews = Options(rawValue: 1 << 2)

        /// The options that change how bytes are fetched, and so belong in the transfer key.
        static let changingTransfer: Options = [.allowInvalidCertificates, .sendCookies]
    }

    /// Basic-auth user name and password.
    public struct Credentials: Sendable, Hashable {
        public var user: String
        public var password: String
        /// Makes credentials.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        /// The `Authorization` header value for these credentials.
        public var basicAuthorization: String {
            "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }

    /// The identity of a transfer: requests with equal keys are coalesced into one.
    public struct TransferKey: Sendable, Hashable {
        let url: String
        let headers: [String]
        let credentials: Credentials?
        let options: Options
    }
}
