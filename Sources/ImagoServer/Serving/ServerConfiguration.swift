import Foundation
import Imago

/// What `imago serve` is told by its flags and `IMAGO_*` variables; every limit has a safe
/// default.
public struct ServerConfiguration: Sendable {
    /// Signature checking; off (every signature passes) when it has no pairs.
    public var signer = URLSigner(pairs: [])
    /// Named option lists for `pr:`/`preset:`; `default` applies to every request first.
    public var presets: [String: [String]] = [:]
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
    /// Quality when the URL sets none.
    public var defaultQuality = 80
    /// imgproxy Pro's autoquality (`IMAGO_AUTOQUALITY_*`), measured with SSIMULACRA2. Default off.
    public var autoQuality = AutoQualitySettings()
    /// Formats given to clients whose `Accept` names them when a URL names no format (imgproxy 4's
    /// `IMGPROXY_AUTO_WEBP`, `_AVIF`, `_JXL`), preferred JPEG XL, then AVIF, then WebP. Default
    /// WebP alone (imgproxy's default is none).
    public var autoFormats: [OutputFormat] = [.webp]
    /// Formats given to clients whose `Accept` names them even over the format a URL names
    /// (imgproxy 4's `IMGPROXY_ENFORCE_WEBP`, `_AVIF`, `_JXL`). Default none.
    public var enforcedFormats: [OutputFormat] = []
    /// Whether AVIF is one of ``autoFormats`` (`--avif`).
    public var negotiatesAVIF: Bool {
        get { autoFormats.contains(.avif) }
        set { autoFormats = autoFormats.filter { $0 != .avif } + (newValue ? [.avif] : []) }
    }
    /// The quality per format when a URL sets none (imgproxy's `IMGPROXY_FORMAT_QUALITY`), before
    /// ``defaultQuality``. Default imgproxy 4's: WebP 79, AVIF 63, JPEG XL 77.
    public var formatQuality: [String: Int] = ["webp": 79, "avif": 63, "jxl": 77]
    /// How each format is written (quality aside): progressive JPEG, interlaced or quantised PNG,
    /// WebP's compression, AVIF's speed (8 by default, as imgproxy), JPEG XL's effort.
    public var encoding: ImageFormat.EncoderSettings = {
        var settings = ImageFormat.EncoderSettings(quality: 80)
        settings.speed = 8
        return settings
    }()
    /// Largest source accepted, in bytes. Default 50 MB.
    public var maxSourceBytes: Int64 = 50_000_000
    /// Most pixels a source may declare, and an output may be asked to have. Default 50 megapixels.
    public var maxSourcePixels = 50_000_000
    /// Most frames an animated source may have. Default 200.
    public var maxFrames = 200
    /// Longest a request may take to fetch its source. Default 20 s.
    public var sourceTimeout: Duration = .seconds(20)
    /// Longest a new image may take from request to encoded bytes (source, decode, process,
    /// encode); then the request is a 504 and the work is cancelled. Default 30 s.
    public var workTimeout: Duration = .seconds(30)
    /// Longest a client may take to send a request's head, from connecting or from its previous
    /// response; then its connection is closed. Default 10 s.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// Requests making an image at once (fetch, decode, process, encode); more get 503.
    /// Default four per core.
    public var maxConcurrentWork = ProcessInfo.processInfo.activeProcessorCount * 4
    /// Everything the service keeps in memory between requests, in bytes: encoded variants, the
    /// paths that lead to them (a sixteenth, at most 16 MB) and the first bytes of sources that
    /// broke off, to be resumed (as much again). Processed images are kept once,
    /// encoded; the pipeline keeps no decoded copy of them. Default 256 MB. (Transient memory, the
    /// images being made, is bounded apart by ``maxConcurrentWork`` and the pipeline's
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
    /// Whether images are converted to sRGB and carry no colour profile unless a URL says
    /// `strip_color_profile:false` (imgproxy's `IMGPROXY_STRIP_COLOR_PROFILE`). Default true.
    public var stripsColorProfile = true
    /// Whether an HDR photo's gain map (Ultra HDR JPEG) stays in JPEG answers, which then stay HDR,
    /// unless a URL says `preserve_hdr:false`. Default true.
    public var keepsGainMap = true
    /// Whether images carry no EXIF or XMP unless a URL says `strip_metadata:false`
    /// (`IMGPROXY_STRIP_METADATA`). Default true.
    public var stripsMetadata = true
    /// Whether stripped metadata keeps the copyright and author (`IMGPROXY_KEEP_COPYRIGHT`). Default true.
    public var keepsCopyright = true

    /// Where the watermark comes from (imgproxy's `IMGPROXY_WATERMARK_PATH`, `_URL`, `_DATA`).
    public enum WatermarkSource: Sendable, Hashable {
        /// A file, read when the service starts.
        case path(String)
        /// An http(s) URL, fetched through the pipeline the first time a request asks for it.
        case url(URL)
        /// The encoded image itself.
        case data(Data)
    }

    /// The watermark `watermark`/`wm` options place; nil for none (the options then place nothing).
    public var watermark: WatermarkSource?
    /// The watermark's own opacity, multiplied by each URL's (`IMGPROXY_WATERMARK_OPACITY`). Default 1.
    public var watermarkOpacity = 1.0
    /// The longest side a result may have; a larger one is scaled down (`IMGPROXY_MAX_RESULT_DIMENSION`).
    /// 0, the default, for no limit beyond the pixel limit.
    public var maxResultDimension = 0
    /// Whether `Content-Disposition` says `attachment` unless a URL says otherwise
    /// (`IMGPROXY_RETURN_ATTACHMENT`). Default false: `inline`.
    public var returnsAttachment = false
    /// Source formats given as they came when the answer's format is theirs
    /// (`IMGPROXY_SKIP_PROCESSING_FORMATS`), as `skip_processing` asks per URL. Default none.
    public var skipProcessingFormats: [String] = []

    /// The formats an answer keeps from its source when the URL and `Accept` choose none, the
    /// first one that fits taken otherwise (imgproxy's `IMGPROXY_PREFERRED_FORMATS`). Default:
    /// every format Imago writes.
    public var preferredFormats = OutputFormat.defaultPreferred
    /// Whether an SVG source is rasterised when the URL names no format (imgproxy's
    /// `IMGPROXY_ALWAYS_RASTERIZE_SVG`); by default it is passed through, sanitised, as imgproxy does.
    public var alwaysRasterizesSVG = false

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
    /// thumbor's `AUTO_WEBP` (`IMAGO_AUTO_WEBP`): WebP for clients that accept it when a thumbor
    /// URL names no format, with `Vary: Accept`. Default false, as thumbor.
    public var thumborAutoWebP = false
    /// thumbor's `MAX_AGE` (`IMAGO_THUMBOR_MAX_AGE`): thumbor answers without a `max_age` filter
    /// send `Cache-Control: max-age=N,public` (0: none) instead of ``cacheControl``. Default
    /// unset: ``cacheControl``, as for imgproxy's URLs.
    public var thumborMaxAge: Int?
    /// thumbor's `RESPECT_ORIENTATION` (`IMAGO_RESPECT_ORIENTATION`): whether thumbor URLs turn
    /// images by their EXIF orientation. Default false, as thumbor.
    public var thumborRespectsOrientation = false
    /// thumbor's `MAX_WIDTH` (`IMAGO_THUMBOR_MAX_WIDTH`): thumbor URLs ask for no wider a box, and
    /// a source wider by more than it is taller than ``thumborMaxHeight`` is scaled down to it on
    /// load, as thumbor's engine normalises it. 0 (the default, as thumbor): none.
    public var thumborMaxWidth = 0
    /// thumbor's `MAX_HEIGHT` (`IMAGO_THUMBOR_MAX_HEIGHT`): as ``thumborMaxWidth``, for heights.
    public var thumborMaxHeight = 0
    /// thumbor's `FILTERS` (`IMAGO_THUMBOR_FILTERS`): the filters thumbor URLs may use, by name
    /// (a module path's last part); another is skipped as thumbor skips a filter it does not know.
    /// Default thumbor's `BUILTIN_FILTERS` (``ThumborFilter/builtinModules``), which leaves out
    /// `autojpg`.
    public var thumborFilters: Set<String> = ThumborFilter.builtinNames
    /// thumbor's `AUTO_PNG_TO_JPG` (`IMAGO_THUMBOR_AUTO_PNG_TO_JPG`): a PNG without transparency
    /// is written as JPEG when a URL's `autojpg()` does not say otherwise. Default false, as thumbor.
    public var thumborAutoPNGToJPG = false
    /// thumbor's `WEBP_QUALITY` and `AVIF_QUALITY`: the quality of a thumbor answer in that
    /// format when its URL sets none, before ``defaultQuality`` (thumbor's `QUALITY`). Default none.
    public var thumborFormatQuality: [OutputFormat: Int] = [:]
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
        guard let named else { return !(autoFormats + enforcedFormats).isEmpty }
        return named != .svg && !enforcedFormats.isEmpty
    }

    /// The settings besides a URL that change an answer's bytes, for stored variants' keys and
    /// ETags: a restart with other ones makes its images anew.
    var outputIdentity: String {
        let thumborQuality = thumborFormatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }
        return "q\(defaultQuality);\(formatQuality.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","));\(encoding)"
            + (thumborQuality.isEmpty ? "" : ";thumbor " + thumborQuality.joined(separator: ","))
    }
}
