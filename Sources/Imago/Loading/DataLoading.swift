import Foundation

/// Something that can fetch bytes for a URL: the http(s) loader, `file://`, `data:`, or your own scheme.
///
/// A loader streams what it receives into the ``DataSink`` it is given: first the response, then the
/// body in chunks. The sink checks status, size limits and cancellation, and the pipeline enforces
/// the total deadline by cancelling, so a loader only moves bytes. It must stop when the sink throws
/// or its task is cancelled, and map its own failures to ``ImagoError``.
public protocol DataLoading: Sendable {
    /// Among loaders that can load a URL, the one with the highest priority wins
    /// (React Native's `loaderPriority`). Built-in loaders use 0.
    var loaderPriority: Int { get }

    /// Whether this loader handles `url` (usually decided by its scheme).
    func canLoad(_ url: URL) -> Bool

    /// Loads `request`, feeding the response and the body to `sink`.
    func load(_ request: DataLoadRequest, into sink: DataSink) async throws

    /// Whether this loader's responses carry HTTP's caching headers (`ETag`, `Last-Modified`,
    /// `Cache-Control`) and it answers the conditional requests the disk cache makes with `304`:
    /// then the disk cache keeps and revalidates its sources as it does http(s) ones (an object
    /// store's). Default false; http(s) URLs are cached whichever loader loads them.
    var supportsHTTPCaching: Bool { get }

    /// Connections this loader keeps open between transfers (a keep-alive pool's), for a service's
    /// memory report. Default 0.
    var keptConnectionCount: Int { get }
}

extension DataLoading {
    public var loaderPriority: Int { 0 }
    public var supportsHTTPCaching: Bool { false }
    public var keptConnectionCount: Int { 0 }
}

/// Everything a loader needs to make one transfer, already resolved by the pipeline:
/// the final headers (Accept, credentials, cookies, the headers filter) and the limits.
public struct DataLoadRequest: Sendable {
    /// The URL to load, without user info (credentials are in `headers` as `Authorization`).
    public var url: URL
    /// The headers to send.
    public var headers: HeaderFields
    /// Fail when no byte arrives for this long.
    public var timeoutWithoutBytes: Duration
    /// Redirects to follow at most.
    public var maxRedirects: Int
    /// Accept certificates that do not verify.
    public var allowInvalidCertificates: Bool
    /// Headers (lowercased names) a redirect to another origin must not carry.
    public var headersDroppedOnCrossOriginRedirect: Set<String>
    /// Which addresses the transfer may connect to, on every hop.
    public var addressPolicy: AddressPolicy
    /// The proxies http(s) transfers go through (Imago's own HTTP client; URLSession reads the
    /// variables itself, an AsyncHTTPClient of yours has its own).
    public var proxies: ProxySettings
    /// Certificate authorities trusted besides the system's for https (Imago's own HTTP client).
    public var trustRoots: TrustRoots
    /// How soon the image is wanted: Imago's own HTTP client sends it on HTTP/2 as the `priority`
    /// header (RFC 9218 urgency), so a server can send the visible images' streams first.
    public var priority: ImageRequest.Priority
    /// The most a new connection may take to be made (Imago's own HTTP client; an object store's
    /// setting, Swift's `IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS`); nil for the client's 10 s.
    public var connectTimeout: Duration?

    /// Headers no redirect to another origin carries, whatever the configuration adds.
    public static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// Makes a load request.
    public init(
        url: URL,
        headers: HeaderFields = [:],
        timeoutWithoutBytes: Duration = .seconds(15),
        maxRedirects: Int = 5,
        allowInvalidCertificates: Bool = false,
        headersDroppedOnCrossOriginRedirect: Set<String> = DataLoadRequest.credentialHeaders,
        addressPolicy: AddressPolicy = .allowAll,
        proxies: ProxySettings = .none,
        trustRoots: TrustRoots = .none,
        priority: ImageRequest.Priority = .normal
    ) {
        self.url = url
        self.headers = headers
        self.timeoutWithoutBytes = timeoutWithoutBytes
        self.maxRedirects = maxRedirects
        self.allowInvalidCertificates = allowInvalidCertificates
        self.headersDroppedOnCrossOriginRedirect = Set(headersDroppedOnCrossOriginRedirect.map { $0.lowercased() }).union(Self.credentialHeaders)
        self.addressPolicy = addressPolicy
        self.proxies = proxies
        self.trustRoots = trustRoots
        self.priority = priority
    }

}

/// The head of a response: where it finally came from, its status and headers.
public struct ResponseHead: Sendable {
    /// The URL the body came from, after redirects.
    public var url: URL
    /// The HTTP status, or nil for loaders without one (`file`, `data`).
    public var statusCode: Int?
    /// The response headers.
    public var headers: HeaderFields
    /// The body length the loader announced (Content-Length, file size), if known.
    public var expectedContentLength: Int64?

    /// Makes a response.
    public init(
        url: URL,
        statusCode: Int? = nil,
        headers: HeaderFields = [:],
        expectedContentLength: Int64? = nil
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.expectedContentLength = expectedContentLength
    }

}

extension URL {
    /// Same scheme, host and port: a redirect between two such URLs keeps credential headers
    /// (every http(s) loader follows this rule).
    func hasSameOrigin(as other: URL) -> Bool {
        scheme?.lowercased() == other.scheme?.lowercased() && host?.lowercased() == other.host?.lowercased() && port == other.port
    }
}
