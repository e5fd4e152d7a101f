import Foundation
import Logging
import Metrics

extension ImagePipeline {
    /// The order in which queued transfers of equal priority start.
    public enum ExecutionOrder: Sendable, Hashable {
        /// First queued, first started (the default).
        case fifo
        /// Last queued, first started: what a scrolling list wants.
        case lifo
    }

    /// How a pipeline loads.
    public struct Configuration: Sendable {
        /// Transfers in flight at most; more wait in the queue. Default 6, what a browser opens to
        /// one HTTP/1.1 host. Images from one HTTP/2 host share a connection, and come faster
        /// with more at once: 100 images 50 ms away came 4.7× sooner at 100 than at 6.
        public var maxConcurrentDownloads = 6
        /// The order of queued transfers with equal priority.
        public var executionOrder = ExecutionOrder.fifo
        /// Decodes and processing run at once at most (the CPU stage), on threads of their own.
        /// Default: the active core count.
        public var cpuStageWidth = ProcessInfo.processInfo.activeProcessorCount
        /// Disk-cache reads run at once at most (the cache stage), on threads of their own, before
        /// and apart from the download queue. Default 2.
        public var cacheStageWidth = 2
        /// Fail a transfer when no byte arrives for this long. Default 15 s.
        public var timeoutWithoutBytes: Duration = .seconds(15)
        /// Fail a transfer not finished within this time; nil for no limit. Requests may set their
        /// own. Default 120 s.
        public var deadline: Duration? = .seconds(120)
        /// Fail a transfer whose body averages less than this once its grace period has passed;
        /// nil for no minimum. Default 1024 bytes/s after 20 s.
        public var minimumTransferRate: TransferRate? = TransferRate(bytesPerSecond: 1024, gracePeriod: .seconds(20))
        /// Largest body accepted, checked from Content-Length and from the bytes counted. Default 100 MB.
        public var maxResponseSize: Int64 = 100_000_000
        /// A response at least this large whose first bytes are a video, from a server that reads
        /// ranges (`Accept-Ranges: bytes` and a validator), is not downloaded whole: the decoder
        /// reads what it needs by range requests (the index, wherever it is, and the frames it
        /// decodes), within ``maxResponseSize`` in all. Never kept in a cache as the source. Only
        /// transfers whose every request wants an image. Nil: always whole. Default 8 MiB.
        public var rangeReadMinimumSize: Int64? = 8 << 20
        /// Redirects followed at most. Default 5. Only http and https targets are followed.
        public var maxRedirects = 5
        /// Headers dropped when a redirect leaves the request's origin, besides `Authorization`,
        /// `Cookie` and `Proxy-Authorization`, which always are (case-insensitive names).
        public var headersDroppedOnCrossOriginRedirect: Set<String> = []
        /// Whether and how failed transfers are tried again; nil (the default) tries once.
        public var retryPolicy: RetryPolicy?
        /// Spreads requests over time: at most this many a second, in bursts of at most so many
        /// (Nuke's rate limiter; ``RateLimit/init(requestsPerSecond:burst:)`` has its figures). A
        /// request waits its turn holding its download slot; cancelled while it waits, it is never
        /// made. Retries wait too; answers from the disk cache do not. Default nil: no limit.
        public var rateLimit: RateLimit?
        /// Bytes of broken-off transfers kept in memory at most, so that the next transfer of the
        /// same image (a retry, or a later request) asks only for the rest: `Range` with
        /// `If-Range`, as Nuke resumes. Kept bytes also go beside the ``diskCache``'s entries when
        /// there is one. 0 never resumes. Default 32 MB.
        public var resumableDataLimit = 32 << 20
        /// Runs before every load (each retry included), after the pipeline set the headers: a place
        /// to refresh a token or sign the URL. Throwing fails the transfer with that error.
        public var requestModifier: (@Sendable (DataLoadRequest) async throws -> DataLoadRequest)?
        /// Which addresses transfers may connect to, checked on every hop against the address
        /// connected to. Default ``AddressPolicy/allowAll``; a server fetching URLs its clients
        /// name should use ``AddressPolicy/publicOnly``.
        public var addressPolicy = AddressPolicy.allowAll
        /// The HTTP proxies transfers go through (``ProxySettings/environment(_:)`` reads curl's
        /// variables). Default none: every transfer goes directly.
        public var proxies = ProxySettings.none
        /// The `Accept` header: the formats Imago decodes.
        public var acceptHeader = "image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.5"
        /// Headers sent with every request (requests may override them).
        public var headers: HeaderFields = ["User-Agent": "Imago/0.1"]
        /// Last word on the headers of each request: gets the URL and the headers, returns the
        /// headers to send (SDWebImage's `headersFilter`).
        public var headersFilter: (@Sendable (URL, HeaderFields) -> HeaderFields)?
        /// Basic-auth credentials for every request without its own (or the URL's user info).
        public var credentials: ImageRequest.Credentials?
        /// The `Cookie` header value for a URL. Consulted only for requests with `.sendCookies`;
        /// no cookie is ever sent otherwise.
        public var cookies: (@Sendable (URL) -> String?)?
        /// Accept TLS certificates that do not verify, for every request. Default false.
        public var allowInvalidCertificates = false
        /// Certificate authorities trusted for https besides the system's (Imago's own HTTP
        /// client): ``TrustRoots/environment(_:)`` reads `SSL_CERT_FILE` and `SSL_CERT_DIR`, as the
        /// CLI and the server do. Default none.
        public var trustRoots = TrustRoots.none
        /// Limits for decoding (pixels, side, frames, bytes per decode) and whether EXIF
        /// orientation is applied.
        public var decodingOptions = DecodingOptions()
        /// Bytes of pixels all concurrent decodes may hold: a decode waits for room, and an image
        /// that alone needs more is refused. Default ``DecodeMemoryBudget/shared`` (1 GiB), shared
        /// by every pipeline that keeps the default.
        public var decodeMemoryBudget = DecodeMemoryBudget.shared
        /// Where handles' progress, preview and completion closures are called: `.immediately`
        /// (the default, on the pipeline's own threads), `.mainActor`, or `.queue(_:)`.
        public var callbackDelivery: CallbackDelivery = .immediately
        /// Least time between two previews of one transfer, for requests with `.previews`.
        public var previewInterval: Duration = .milliseconds(100)
        /// Most pixels a request with `.scaleDownLargeImages` gets. Default 16,777,216 (4096 × 4096,
        /// 64 MB of RGBA).
        public var largeImagePixelLimit = 16_777_216
        /// Decoded images by cache key, answered synchronously; nil turns memory caching off.
        /// Pipelines made from one configuration value share its cache.
        public var memoryCache: MemoryCache<ImageRequest.CacheKey, ImageResponse>? = MemoryCache()
        /// Where the memory cache is registered to be trimmed when the process's cgroup reports
        /// memory pressure; nil for never. Default ``MemoryPressureMonitor/shared``.
        public var memoryPressureMonitor: MemoryPressureMonitor? = .shared
        /// Original bytes of `http(s)` responses, with HTTP freshness: a ``DiskCache``, or your own
        /// ``DiskCaching`` tier; nil (the default) turns disk caching off. ``ImagePipeline/shared`` uses one in ``DiskCache/defaultDirectory``.
        public var diskCache: (any DiskCaching)?
        /// How long a response that says nothing of its freshness (no Cache-Control max-age, no
        /// Expires, no Last-Modified) stays fresh. Default one hour.
        public var heuristicFreshness: Duration = .seconds(3600)
        /// Where debug lines about transfers go.
        public var logger = Logger(label: "imago")
        /// Where counters and timers go; nil uses the process-wide `MetricsSystem`.
        public var metricsFactory: (any MetricsFactory)?

        /// The default configuration.
        public init() {}
    }
}
