import Foundation
import Imago
import Logging

/// What `imago serve` is told by its flags and `IMAGO_*` variables; every limit has a safe
/// default.
public struct ServerConfiguration: Sendable {
    /// Signature checking; off (every signature passes) when it has no pairs.
    public var signer = URLSigner(pairs: [])
    /// Named option lists for `pr:`/`preset:`; `default` applies to every request first.
    public var presets: [String: [String]] = [:]
    /// Named `/info` option lists for `pr:`; `default` applies to every `/info` request first.
    public var infoPresets: [String: [String]] = [:]
    /// imgproxy's `IMGPROXY_ONLY_PRESETS`: an image URL's options are one segment of preset names
    /// (`thumb:sharp`), and nothing else. Default false.
    public var onlyPresets = false
    /// imgproxy's `IMGPROXY_INFO_ONLY_PRESETS`: the same for `/info` URLs; nil follows
    /// ``onlyPresets``.
    public var infoOnlyPresets: Bool?
    /// imgproxy's `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`: the option names (full or short, each as
    /// written) an image URL may use; presets may use any. nil allows all.
    public var allowedProcessingOptions: Set<String>?
    /// imgproxy's `IMGPROXY_ALLOWED_INFO_OPTIONS`: the same for `/info` URLs.
    public var allowedInfoOptions: Set<String>?
    /// Hosts http(s) sources may come from (exactly, or a subdomain of an entry written
    /// `.example.com`); nil allows any public host.
    public var allowedHosts: [String]?
    /// The internal addresses sources may resolve to besides public ones (internal deployments
    /// only). Default none.
    public var internalSourceAddresses: InternalAddresses = []
    /// Whether sources may resolve to loopback, private and link-local addresses (all of
    /// ``internalSourceAddresses``).
    public var allowsPrivateAddresses: Bool {
        get { internalSourceAddresses == .all }
        set { internalSourceAddresses = newValue ? .all : [] }
    }
    /// imgproxy's `IMGPROXY_ALLOWED_SOURCES`: source URL prefixes, `*` matching anything but `/`;
    /// a source matching none is `404` (as imgproxy answers). nil allows any source.
    public var allowedSources: [String]?
    /// imgproxy's `IMGPROXY_BASE_URL`: put before every imgproxy source URL that does not
    /// already start with it. Default none.
    public var sourceBaseURL: String?
    /// imgproxy's `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`: what divides a store's or the local
    /// root's source into the object's name and its query (`s3://b/key?version`). Empty: no query,
    /// a `?` is part of the name. Default `?`.
    public var sourceQuerySeparator = "?"
    /// imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`: what divides an option's name and arguments in
    /// imgproxy's URLs and presets. Default `:`.
    public var argumentsSeparator = ":"
    /// imgproxy's `IMGPROXY_PROMETHEUS_NAMESPACE`: what every metric's name starts with, then
    /// `_` (`edge_imago_serve_requests_total`). Default none.
    public var prometheusNamespace: String?
    /// imgproxy's `IMGPROXY_PROMETHEUS_BIND`: where `/metrics` is served instead of the image
    /// port, so that it can stay private; nil (the default) serves it beside the images.
    public var metricsAddress: HostAndPort?
    /// Where more variables were read from before the settings (``ConfigurationSources``): the
    /// AWS secret, the SSM path and the .env file, as `name (setting)` for the start's log line.
    public var configurationSources: [String] = []
    /// How often freed heap memory past ``HeapTrimming/trimAbove`` is given back to the system
    /// (imgproxy's `IMGPROXY_FREE_MEMORY_INTERVAL`, its Go heap's). Default 1 s.
    public var trimInterval: Duration = .seconds(1)
    /// Whether the process's memory is logged at `debug` every ``trimInterval`` (imgproxy's
    /// `IMGPROXY_LOG_MEM_STATS`). Default false.
    public var logsMemoryStats = false
    /// imgproxy's `IMGPROXY_NETWORK`: what the server listens on. Default `tcp`.
    public var network = Network.tcp
    /// The socket's path when ``network`` is `unix` (`--listen`, imgproxy's `IMGPROXY_BIND`).
    public var listenSocketPath: String?

    /// imgproxy's `IMGPROXY_SO_REUSEPORT`: the listening socket is opened with `SO_REUSEPORT`, so
    /// several `imago serve` processes (of one user) may listen on the same port and the kernel
    /// spreads new connections over them. Without it, a second process on a port that is taken
    /// stops at start. No effect on a Unix socket. Default false.
    public var reusesPort = false

    /// imgproxy's networks for its listener (Go's `net.Listen` names), `unixpacket` left out: HTTP
    /// is a stream.
    public enum Network: String, Sendable {
        /// TCP; an address without a host listens on every IPv4 address.
        case tcp
        /// TCP over IPv4 only.
        case tcp4
        /// TCP over IPv6; an address without a host listens on `::`.
        case tcp6
        /// A Unix domain socket at ``ServerConfiguration/listenSocketPath``.
        case unix
    }
    /// imgproxy's `IMGPROXY_URL_REPLACEMENTS`: each pattern (a prefix, `*` matching anything but
    /// `/`) replaced in imgproxy source URLs, `$1` naming what a `*` matched; before
    /// ``sourceBaseURL``.
    public var sourceURLReplacements: [(pattern: String, replacement: String)] = []
    /// imgproxy's `IMGPROXY_SECRET`: requests for images must carry `Authorization: Bearer` and
    /// it (others are `403`); `/health` and `/metrics` need not. Default none.
    public var secret: String?
    /// imgproxy's `IMGPROXY_ALLOW_ORIGIN`: the `Access-Control-Allow-Origin` of every image
    /// answer (with `Access-Control-Allow-Methods: GET, OPTIONS`, and `OPTIONS` answered). Default none.
    public var allowOrigin: String?
    /// imgproxy's `IMGPROXY_HEALTH_CHECK_PATH`: a path answered like `/health`. Default none.
    public var healthCheckPath: String?
    /// imgproxy's `IMGPROXY_LOG_LEVEL`: the least severe message `imago serve` logs. At `info`
    /// (the default) or below, a line per answer; at `warning` or `error`, none. Default `info`.
    public var logLevel = Logger.Level.info
    /// imgproxy's `IMGPROXY_LOG_FORMAT`: how `imago serve` writes its lines. Default `pretty`.
    public var logFormat = LogFormat.pretty
    /// imgproxy's `IMGPROXY_SYSLOG_*`: whether, where and from which level lines also go to a
    /// syslog daemon. Default off.
    var syslog = SyslogWriter.Settings()
    /// imgproxy's `IMGPROXY_OPEN_TELEMETRY_*`: what is sent over OTLP. Default nothing.
    public var telemetry = Telemetry.Settings()
    /// The `User-Agent` sources are fetched with (`IMGPROXY_USER_AGENT`). Default `Imago/0.1`.
    public var userAgent: String?
    /// Redirects a source may take (`IMGPROXY_MAX_REDIRECTS`). Default 5.
    public var maxRedirects = 5
    /// Whether sources' TLS certificates go unchecked (`IMGPROXY_IGNORE_SSL_VERIFICATION`). Default false.
    public var ignoresCertificateErrors = false
    /// The HTTP proxies sources are fetched through (curl's variables, `--proxy`). Default none.
    public var proxies = ProxySettings.none
    /// Certificate authorities trusted for https sources besides the system's (`SSL_CERT_FILE`,
    /// `SSL_CERT_DIR`). Default none.
    public var trustRoots = TrustRoots.none
    /// Whether `s3://bucket/key` sources are read (imgproxy's `IMGPROXY_USE_S3`), from ``s3``.
    /// Default false: they are refused.
    public var readsS3 = false
    /// Where and with which key `s3://` sources are read (imgproxy's `IMGPROXY_S3_*` variables);
    /// its endpoint is trusted whatever its address.
    public var s3 = S3Configuration()
    /// Whether `gs://bucket/object` sources are read (imgproxy's `IMGPROXY_USE_GCS`), from ``gcs``.
    /// Default false: they are refused.
    public var readsGCS = false
    /// Where and as whom `gs://` sources are read (imgproxy's `IMGPROXY_GCS_*` variables); its
    /// endpoints are trusted whatever their address.
    public var gcs = GCSConfiguration()
    /// Whether `swift://container/object` sources are read (imgproxy's `IMGPROXY_USE_SWIFT`), from
    /// ``swift``. Default false: they are refused.
    public var readsSwift = false
    /// Where and as whom `swift://` sources are read (imgproxy's `IMGPROXY_SWIFT_*` variables); its
    /// auth URL, and the storage URL that answers, are trusted whatever their address.
    public var swift = SwiftConfiguration()
    /// The folder `local:///name` sources are read from; nil refuses them.
    public var localRoot: URL?
    /// Whether `/gallery` shows the images under ``localRoot`` (`IMAGO_GALLERY`). Default false.
    public var servesGallery = false
    /// The `Cache-Control` of every image: a year, for immutable signed URLs.
    public var cacheControl = "public, max-age=31536000, immutable"
    /// Everything besides a URL that changes an answer's bytes: qualities, encoders, formats,
    /// metadata, watermark, thumbor's output settings. Its ``OutputSettings/identity`` is part of
    /// every stored variant's key and ETag.
    public var output = OutputSettings()
    /// The server's limits on sources: what a variant stored under other limits may not answer
    /// for, so their ``SourceLimitSettings/identity`` is in every stored key too.
    public var limits = SourceLimitSettings()
    /// Longest a request may take to fetch its source. Default 20 s.
    public var sourceTimeout: Duration = .seconds(20)
    /// Longest a new image may take from request to encoded bytes (source, decode, process,
    /// encode); then the request is a 504 and the work is cancelled. Default 30 s.
    public var workTimeout: Duration = .seconds(30)
    /// Longest a client may take to send a request's head, from connecting or from its previous
    /// response; then its connection is closed. Default 10 s.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// How long a kept-alive connection may wait for its next request head after an answer
    /// (imgproxy's `IMGPROXY_KEEP_ALIVE_TIMEOUT`); zero closes the connection after each answer.
    /// Default 10 seconds.
    public var keepAliveTimeout: Duration = .seconds(10)
    /// How long an answer may take to be written to a client that reads slowly before its
    /// connection is closed (imgproxy's `IMGPROXY_WRITE_RESPONSE_TIMEOUT`). Default 10 seconds.
    public var writeResponseTimeout: Duration = .seconds(10)
    /// How long a connection to a source's server is kept open unused
    /// (imgproxy's `IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT`). Default 60 seconds.
    public var sourceKeepAliveTimeout: Duration = .seconds(60)
    /// How long `imago serve` gives the requests in flight to finish after SIGTERM or SIGINT
    /// before it cuts them off and exits (imgproxy's `IMGPROXY_GRACEFUL_STOP_TIMEOUT`); new
    /// connections are refused from the signal on. Default 20 seconds, as imgproxy's.
    public var gracefulStopTimeout: Duration = .seconds(20)
    /// Requests making an image at once (fetch, decode, process, encode), imgproxy's
    /// `IMGPROXY_WORKERS`; more wait in the queue. Default four per core.
    public var workers = ProcessInfo.processInfo.activeProcessorCount * 4
    /// Requests that may wait, in arrival order, for one of the ``workers``; more are answered at
    /// once (429 in imgproxy's dialect, 503 in thumbor's), as imgproxy's
    /// `IMGPROXY_REQUESTS_QUEUE_SIZE`. A waiting request's deadline (``workTimeout``) runs while
    /// it waits, and it leaves the queue when its client goes. Nil for the default, sixteen per
    /// worker: a request in the queue holds only its connection and its plan (docs/LIMITS.md).
    public var requestsQueueSize: Int?
    /// The queue's length in force: ``requestsQueueSize``, or sixteen per worker.
    public var queueLength: Int { requestsQueueSize ?? workers * 16 }
    /// Connections open at once (imgproxy's `IMGPROXY_MAX_CLIENTS`): past it, new connections
    /// wait to be accepted until one closes. 0 for no limit. Default 2048, as imgproxy's.
    public var maxClients = 2048
    /// Everything the service keeps in memory between requests, in bytes: encoded variants, the
    /// paths that lead to them (a sixteenth, at most 16 MB) and the first bytes of sources that
    /// broke off, to be resumed (as much again). Processed images are kept once,
    /// encoded; the pipeline keeps no decoded copy of them. Default 256 MB. (Transient memory, the
    /// images being made, is bounded apart by ``workers`` and the pipeline's
    /// `decodeMemoryBudget`.)
    public var memoryBytes = 256 << 20

    /// How ``memoryBytes`` is shared: answered paths and resumable source bytes a sixteenth each
    /// (at most 16 MB each), encoded variants the rest.
    public var memoryShares: (variants: Int, paths: Int, resumable: Int) {
        let share = min(memoryBytes / 16, 16 << 20)
        return (memoryBytes - 2 * share, share, share)
    }
    /// Bytes all decodes and encodes may hold at once (the pipeline's `DecodeMemoryBudget`); nil
    /// for the shared 1 GiB. Set from a container's limit by ``fit(into:keepsMemoryBytes:)``.
    public var decodeMemoryBytes: Int?
    /// The container's memory limit, when ``fit(into:keepsMemoryBytes:)`` was given one: new
    /// work is answered 503 with `Retry-After` while the group uses more than
    /// ``shedsAboveMemoryFraction`` of it.
    public var containerMemory: ContainerMemory?
    /// The share of ``containerMemory``'s limit in use above which new work is shed. Default 0.9.
    public var shedsAboveMemoryFraction = 0.9
    /// The disk cache's folder for sources and processed variants; nil for none.
    public var cacheDirectory: URL?
    /// The store a fleet's nodes share their made variants through (`--result-storage`); nil for none.
    public var resultStorage: SharedStorageSettings?
    /// Whether thumbor's `/unsafe/` URLs read and write the result store too (thumbor's
    /// `RESULT_STORAGE_STORES_UNSAFE`, whose own default is false). Default true.
    public var resultStorageStoresUnsafe = true
    /// The store a fleet's nodes share the originals they fetch over http(s) through
    /// (`--source-storage`, thumbor's `STORAGE`); nil for none.
    public var sourceStorage: SharedStorageSettings?

    /// An image the server supplies itself, from one of three places (imgproxy's `_PATH`, `_URL`
    /// and `_DATA` variables): the watermark, the fallback image.
    public enum AuxiliaryImage: Sendable, Hashable, Codable {
        /// A file, read when the service starts.
        case path(String)
        /// An http(s) URL, fetched through the pipeline the first time a request asks for it.
        case url(URL)
        /// The encoded image itself.
        case data(Data)
    }

    /// imgproxy's `IMGPROXY_FALLBACK_IMAGE_*`: the image an imgproxy URL answers, processed with
    /// its options, when its source cannot be had (missing, refused, too slow, too large,
    /// undecodable); a file or base64 is read when the service starts. Default none.
    public var fallbackImage: AuxiliaryImage?
    /// The status of a fallback answer (`IMGPROXY_FALLBACK_IMAGE_HTTP_CODE`); 0 answers the
    /// failure's own status. Default 200.
    public var fallbackStatus = 200
    /// `Cache-Control: max-age` of a fallback answer in seconds (`IMGPROXY_FALLBACK_IMAGE_TTL`);
    /// 0 sends ``cacheControl`` as other answers. Default 0.
    public var fallbackTTL = 0

    /// Whether imgproxy's answers carry their ETag and answer `If-None-Match` with 304
    /// (`IMGPROXY_USE_ETAG`). Default true, unlike imgproxy's: a client revalidates for free.
    public var sendsETag = true
    /// Whether imgproxy's answers carry their source's `Last-Modified` and answer
    /// `If-Modified-Since` with 304 (`IMGPROXY_USE_LAST_MODIFIED`). Default false.
    public var sendsLastModified = false
    /// `IMGPROXY_LAST_MODIFIED_BUSTER`: an older `Last-Modified` is answered as this instant, so a
    /// client's copy from before it is not taken as current. Default none.
    public var lastModifiedBuster: Date?
    /// Whether imgproxy's answers reuse their source's `Cache-Control`, else its `Expires`
    /// (`IMGPROXY_CACHE_CONTROL_PASSTHROUGH`). Default false.
    public var passesSourceCacheControl = false
    /// imgproxy's `IMGPROXY_AUTO_ROTATE`: whether imgproxy's URLs turn images by their EXIF
    /// orientation unless they say `ar:0`. Default true.
    public var autoRotates = true
    /// imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`: whether URLs and presets may use the limit
    /// options (`msr`, `msfs`, `maf`, `mafr`, `mrd`), which in Imago can only lower the server's
    /// limits. Default true (imgproxy's is false); false answers them imgproxy's 403.
    public var allowsSecurityOptions = true
    /// imgproxy's `IMGPROXY_DEVELOPMENT_ERRORS_MODE`: an error's answer says what failed in full,
    /// the source's URL and the loader's reason included. Default false: never on a public server.
    public var developmentErrors = false
    /// imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH`: the client's cookies go on to a source on the
    /// host they belong to (``CookiePassthrough``). Default false.
    public var passesCookies = false
    /// imgproxy's `IMGPROXY_COOKIE_BASE_URL`: the URL whose host the client's cookies belong to,
    /// instead of the host it asked. Default none.
    public var cookieBaseURL: URL?
    /// imgproxy's `IMGPROXY_COOKIE_PASSTHROUGH_ALL`: the client's cookies go on to every source.
    /// Default false.
    public var passesAllCookies = false
    /// imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`: a request's `Sec-CH-DPR`/`DPR` and
    /// `Sec-CH-Width`/`Width` are its `dpr` and `width` (the width in CSS pixels, the DPR taken
    /// out) unless the URL sets them, and imgproxy's answers say `Vary` with them. Default false.
    public var takesClientHints = false
    /// Whether imgproxy's answers carry `X-Origin-Content-Length`, `X-Origin-Width`,
    /// `X-Origin-Height`, `X-Result-Width` and `X-Result-Height` (`IMGPROXY_ENABLE_DEBUG_HEADERS`),
    /// for variants made by this process (one read back from the disk cache has none). Default false.
    public var sendsDebugHeaders = false
    /// Whether an imgproxy URL's base64 source split by `/` ends in a file name, not part of the
    /// source (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`). Default false.
    public var base64URLIncludesFilename = false
    /// Whether imgproxy's answers carry `Link: <source>; rel="canonical"` for an http(s) source
    /// (`IMGPROXY_SET_CANONICAL_HEADER`). Default false.
    public var setsCanonicalHeader = false

    /// Whether `Content-Disposition` says `attachment` unless a URL says otherwise
    /// (`IMGPROXY_RETURN_ATTACHMENT`). Default false: `inline`.
    public var returnsAttachment = false

    /// The URL language the server answers: imgproxy's paths or thumbor's.
    public enum Dialect: String, Sendable {
        /// imgproxy's `/{signature}/{options}/{source}` (the default).
        case imgproxy
        /// thumbor's `/{signature|unsafe}/[meta/][trim/][crop/][fit-in/][WxH/]…[filters:…/]{image}`.
        case thumbor
    }

    /// Which URLs the server answers at the root (`IMAGO_DIALECT`). Default imgproxy's.
    public var dialect = Dialect.imgproxy
    /// The path imgproxy's URLs are under (`IMAGO_PATH_PREFIX`, imgproxy's `IMGPROXY_PATH_PREFIX`):
    /// the prefix is taken off before the signature is checked. Default none: the root. With
    /// ``dialect`` thumbor, imgproxy's URLs are answered only when this is set.
    public var pathPrefix = ""
    /// The path thumbor's URLs are under (`IMAGO_THUMBOR_PATH`), beside imgproxy's in one process;
    /// default none. With ``dialect`` thumbor they are at the root.
    public var thumborPath: String?
    /// Signatures accepted without checking (`IMAGO_TRUSTED_SIGNATURES`, imgproxy's
    /// `IMGPROXY_TRUSTED_SIGNATURES`): URLs an operator signed once by hand. Default none.
    public var trustedSignatures: Set<String> = []

    /// Where imgproxy's URLs are answered (`""` for the root), or nil when they are not.
    var imgproxyMount: String? {
        let prefix = Self.normalizedPath(pathPrefix)
        return dialect == .imgproxy || !prefix.isEmpty ? prefix : nil
    }

    /// Where thumbor's URLs are answered (`""` for the root), or nil when they are not.
    var thumborMount: String? {
        dialect == .thumbor ? "" : thumborPath.map(Self.normalizedPath)
    }

    /// `/a/b` for `a/b/`, `/a//b` or `/a/b`; `""` for the root.
    static func normalizedPath(_ path: String) -> String {
        let segments = path.split(separator: "/")
        return segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
    }
    /// thumbor's signatures: the security key (`IMAGO_THUMBOR_KEY`) and whether `unsafe/` URLs are
    /// answered (`IMAGO_ALLOW_UNSAFE_URL`; by default only when no key is set).
    public var thumborSigner = ThumborSigner(key: nil)
    /// thumbor's `MAX_AGE` (`IMAGO_THUMBOR_MAX_AGE`): thumbor answers without a `max_age` filter
    /// send `Cache-Control: max-age=N,public` (0: none) instead of ``cacheControl``. Default
    /// unset: ``cacheControl``, as for imgproxy's URLs.
    public var thumborMaxAge: Int?
    /// thumbor's `ALLOWED_SOURCES` (`IMAGO_THUMBOR_ALLOWED_SOURCES`): the hosts thumbor URLs' http
    /// images may come from, each a host name or (thumbor's legacy form) a regular expression
    /// the whole host must match; another host is thumbor's `400`. nil allows any.
    public var thumborAllowedSources: [String]?
    /// thumbor's `HEALTHCHECK_ROUTE` (`IMAGO_THUMBOR_HEALTHCHECK_ROUTE`): under thumbor's mount,
    /// answered `WORKING` as thumbor answers it (with or without a final `/`). Default `/healthcheck`.
    public var thumborHealthcheckRoute = "/healthcheck"
    /// thumbor's `DETECTORS` (`IMAGO_THUMBOR_DETECTORS`): what `/smart/` URLs look for, in order
    /// (faces, profiles, glasses, features). Empty (the default, as thumbor): Imago's saliency.
    public var thumborDetectors: [ThumborDetectors.Kind] = []
    /// The cascade files thumbor's detectors read (`FACE_DETECTOR_CASCADE_FILE` and the others),
    /// relative to Debian's `/usr/share/opencv4/haarcascades` unless absolute.
    public var thumborCascadeFiles = ThumborDetectors.CascadeFiles()
    /// The face cascade imgproxy URLs' object gravity (`g:obj:face`) and, with
    /// ``imgproxySmartCropFindsFaces``, smart gravity find faces with (`IMAGO_FACE_CASCADE`).
    /// nil: Debian's `haarcascade_frontalface_alt.xml` when it is installed (without it, object
    /// gravity finds no faces). A file named here that cannot be read stops the service.
    public var faceCascade: String?
    /// imgproxy Pro's `IMGPROXY_SMART_CROP_FACE_DETECTION`: smart gravity keeps the faces the face
    /// cascade finds before it looks at saliency. Default false. The cascade must then be readable.
    public var imgproxySmartCropFindsFaces = false
    /// imgproxy Pro's `IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP`: an object gravity that
    /// finds nothing is smart gravity (true, the default) or the centre.
    public var imgproxyObjectsFallBackToSmart = true

    /// The defaults.
    public init() {}

    /// Kinds of internal address a source may resolve to.
    public struct InternalAddresses: OptionSet, Sendable {
        /// The bits.
        public let rawValue: Int
        /// Makes a set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Loopback and unspecified addresses (`127.0.0.0/8`, `::1`).
        public static let loopback = InternalAddresses(rawValue: 1)
        /// Link-local addresses (`169.254.0.0/16`, where cloud metadata services answer; `fe80::/10`).
        public static let linkLocal = InternalAddresses(rawValue: 2)
        /// Private networks (RFC 1918, CGNAT, IPv6 unique local).
        public static let privateNetwork = InternalAddresses(rawValue: 4)
        /// All three.
        public static let all: InternalAddresses = [.loopback, .linkLocal, .privateNetwork]

        /// `kind` added, or taken out when not `allowed`.
        mutating func set(_ kind: InternalAddresses, allowed: Bool) {
            if allowed { formUnion(kind) } else { subtract(kind) }
        }

        /// The address policy that allows public addresses and these.
        var policy: AddressPolicy {
            if self == .all { return .allowAll }
            if isEmpty { return .publicOnly }
            return .publicAnd(loopback: contains(.loopback), linkLocal: contains(.linkLocal), privateNetwork: contains(.privateNetwork))
        }
    }

    /// Whether an imgproxy answer with the format `named` (nil for none) depends on `Accept`.
    func variesWithAccept(named: OutputFormat?) -> Bool {
        guard let named else { return !(output.autoFormats + output.enforcedFormats).isEmpty }
        return named != .svg && !output.enforcedFormats.isEmpty
    }
}
