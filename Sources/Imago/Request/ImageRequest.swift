import Foundation

/// What to load: a URL and how to load it.
///
/// Two requests that would make the same transfer (same URL, headers, credentials and transfer
/// options) share one transfer while it is in flight, and one decode, even when their processors
/// differ; see ``transferKey``.
public struct ImageRequest: Sendable, Hashable {
    /// Where the image is: `http(s)`, `file`, `data` or any scheme a registered loader accepts.
    public var url: URL
    /// How urgent the request is. A shared transfer runs at the highest priority of its handles.
    public var priority: Priority
    /// Extra HTTP headers, applied over the configuration's default headers.
    public var headers: HeaderFields
    /// Basic-auth credentials for this request; they win over the URL's user info and the configuration.
    public var credentials: Credentials?
    /// Switches that change how the transfer is made.
    public var options: Options
    /// A total time limit for the transfer, on top of the configuration's time without bytes.
    public var deadline: Duration?
    /// How the caches answer this request.
    public var cachePolicy: CachePolicy
    /// Applied in order to the decoded image; their identifiers are part of ``cacheKey``, so each
    /// variant of an image is processed once and cached in memory under its own key.
    public var processors: [any ImageProcessing]
    /// When set, the image is decoded at a reduced scale and resampled to this thumbnail before
    /// any processor runs.
    public var thumbnail: Thumbnail?
    /// Other encodings of the same image with their pixel sizes (React Native's `srcset`). When
    /// set, the pipeline loads the smallest that covers the thumbnail without upscaling,
    /// preferring one already in the memory cache; without a thumbnail, the largest.
    public var sources: [Source] = []
    /// Identifies the image instead of the URL in the memory and disk caches' keys and for
    /// coalescing: for signed URLs (S3, a CDN) whose query changes on every request while the
    /// image stays the same. Nil (the default) uses the URL.
    public var imageID: String?
    /// This request's own limits on its source, below the pipeline's: a response longer than
    /// ``Limits/maxResponseSize`` is refused on its `Content-Length` or stopped when it passes it,
    /// and an image whose header declares more than ``Limits/maxPixels`` or whose frames pass
    /// ``Limits/maxFrames`` fails before any pixel is decoded. Part of the transfer and cache keys.
    public var limits = Limits()
    /// Headers sent with the transfer that say nothing about the bytes, such as W3C trace context
    /// (`traceparent`, `tracestate`): part of no key, so requests that differ only here share a
    /// transfer (which carries the first one's) and a cached entry. They win over ``headers``.
    public var traceHeaders: HeaderFields = [:]
    /// Which frame of a video source is decoded (``DecodingOptions/videoFrame``); nil for the
    /// configuration's. Part of the decode plan, so of every cache key.
    public var videoFrame: VideoFrameSelection?
    /// Which pages of a paged source (PDF) are rendered (``DecodingOptions/pages``); nil for the
    /// configuration's. Part of the decode plan, so of every cache key.
    public var pages: PageSelection?

    /// Makes a request for `url`.
    public init(
        url: URL,
        priority: Priority = .normal,
        headers: HeaderFields = [:],
        credentials: Credentials? = nil,
        options: Options = [],
        deadline: Duration? = nil,
        cachePolicy: CachePolicy = .useProtocolCachePolicy,
        processors: [any ImageProcessing] = [],
        thumbnail: Thumbnail? = nil
    ) {
        self.url = url
        self.priority = priority
        self.headers = headers
        self.credentials = credentials
        self.options = options
        self.deadline = deadline
        self.cachePolicy = cachePolicy
        self.processors = processors
        self.thumbnail = thumbnail
    }

    /// The processors' identifiers, joined: what tells one variant of an image from another.
    public var processorsIdentifier: String {
        processors.map(\.identifier).joined(separator: "|")
    }

    /// Requests are equal when every field is.
    public static func == (left: ImageRequest, right: ImageRequest) -> Bool {
        left.url == right.url && left.priority == right.priority && left.headers == right.headers
            && left.credentials == right.credentials && left.options == right.options && left.deadline == right.deadline
            && left.cachePolicy == right.cachePolicy && left.processorsIdentifier == right.processorsIdentifier
            && left.thumbnail == right.thumbnail && left.sources == right.sources && left.imageID == right.imageID
            && left.limits == right.limits && left.traceHeaders == right.traceHeaders && left.videoFrame == right.videoFrame && left.pages == right.pages
    }

    /// Hashes the fields that make requests equal.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(headers)
        hasher.combine(options)
        hasher.combine(processorsIdentifier)
    }

    /// Identifies the image this request makes, processors included: the memory cache's key.
    /// Requests that differ only in priority, previews, deadline or cache policy have the same key.
    public var cacheKey: CacheKey {
        CacheKey(source: sourceKey, decode: decodePlan, processors: processorsIdentifier)
    }

    /// Identifies the transfer this request needs; equal keys share one transfer (and its decode).
    /// Processors are not part of it. A request that must not be answered from disk does not join
    /// one that may be.
    public var transferKey: TransferKey {
        TransferKey(source: sourceKey, cachePolicy: cachePolicy, cacheOptions: options.intersection(Options.changingCacheUse))
    }

    /// What changes the bytes fetched.
    private var sourceKey: SourceKey {
        SourceKey(
            url: imageID.map { "id:" + $0 } ?? url.absoluteString,
            headers: headers.map { "\($0.name.lowercased()):\($0.value)" }.sorted(),
            credentials: credentials,
            options: options.intersection(Options.changingTransfer),
            maxResponseSize: limits.maxResponseSize
        )
    }

    /// One encoding of the image and its size in pixels.
    public struct Source: Sendable, Hashable {
        /// Where this encoding is.
        public var url: URL
        /// Its size in pixels, as the app knows it.
        public var pixelSize: PixelSize

        /// Makes a source.
        public init(url: URL, pixelSize: PixelSize) {
            self.url = url
            self.pixelSize = pixelSize
        }
    }

    /// A request for the best of `sources` (see ``sources``) at `thumbnail`.
    public init(sources: [Source], thumbnail: Thumbnail?, priority: Priority = .normal, options: Options = [], processors: [any ImageProcessing] = []) {
        precondition(!sources.isEmpty, "a request needs a source")
        self.init(
            url: sources.max { $0.pixelSize.width * $0.pixelSize.height < $1.pixelSize.width * $1.pixelSize.height }!.url,
            priority: priority, options: options, processors: processors, thumbnail: thumbnail)
        self.sources = sources
    }

    /// Pixels per point named by the URL's file name: `photo@2x.jpg` is 2, `photo@3x.jpg` 3.
    var scaleFromFileName: Double? {
        let name = url.deletingPathExtension().lastPathComponent
        guard let at = name.lastIndex(of: "@"), name.hasSuffix("x"),
            let scale = Double(name[name.index(after: at)..<name.index(before: name.endIndex)]), scale >= 1, scale <= 4
        else { return nil }
        return scale
    }

    /// How the bytes are decoded: reduced for a thumbnail, or for a leading shrinking resize
    /// folded into the decode, or scaled under the large-image limit, or at full size.
    struct DecodePlan: Sendable, Hashable {
        let thumbnail: Thumbnail?
        let scalesDown: Bool
        /// The request's first processor when it is a ``ImageProcessors/Resize`` (and the request
        /// has no thumbnail and does not scale down large images): decoders reduce as for a
        /// thumbnail, and the resize finishes from the reduced image, so `processors: [Resize]`
        /// is as fast as a thumbnail.
        let resize: ImageProcessors.Resize?
        /// The request's first processor's decode size when it is a ``ReducedDecodeProcessing``
        /// (and nothing above applies): that processor then runs on the reduced decode itself.
        var requirement: DecodeSizeRequirement?
        /// Whether the pixels stay in the file's colour profile (``Options/keepsColorProfile``).
        var keepsColorProfile = false
        /// The metadata the request keeps (``Options/keepsCopyright``, ``Options/keepsMetadata``),
        /// or nil for the configuration's.
        var metadata: DecodingOptions.MetadataHandling?
        /// Whether the gain map is kept (``Options/keepsGainMap``).
        var keepsGainMap = false
        /// Whether JPEG chroma is upsampled smoothly (``Options/smoothsChroma``).
        var smoothsChroma = false
        /// Whether a HEIF's embedded thumbnail is decoded instead (``Options/usesEmbeddedThumbnail``).
        var usesEmbeddedThumbnail = false
        /// The request's own decode limits (``Limits/maxPixels``, ``Limits/maxFrames``).
        var limits = Limits()
        /// The video frame the request asks for (``ImageRequest/videoFrame``).
        var videoFrame: VideoFrameSelection?
        /// The pages the request asks for (``ImageRequest/pages``).
        var pages: PageSelection?

        /// The full-size decode, keeping what this plan keeps.
        var full: DecodePlan {
            DecodePlan(
                thumbnail: nil, scalesDown: false, resize: nil, keepsColorProfile: keepsColorProfile, metadata: metadata, keepsGainMap: keepsGainMap,
                smoothsChroma: smoothsChroma, usesEmbeddedThumbnail: usesEmbeddedThumbnail, limits: limits, videoFrame: videoFrame, pages: pages)
        }
        /// Whether this is a full-size decode.
        var isFull: Bool { self == full }

        /// `options` with this plan's colour and metadata choices.
        func keeping(_ options: DecodingOptions) -> DecodingOptions {
            var options = options
            if keepsColorProfile { options.colorProfileHandling = .keep }
            if let metadata { options.metadataHandling = metadata }
            if keepsGainMap { options.gainMapHandling = .keep }
            if smoothsChroma { options.smoothsChroma = true }
            if usesEmbeddedThumbnail { options.usesEmbeddedThumbnail = true }
            if let maxPixels = limits.maxPixels { options.maxPixels = min(options.maxPixels, maxPixels) }
            if let maxFrames = limits.maxFrames { options.maxFrames = min(options.maxFrames, maxFrames) }
            if let videoFrame { options.videoFrame = videoFrame }
            if let pages { options.pages = pages }
            return options
        }
    }

    var decodePlan: DecodePlan {
        let scalesDown = thumbnail == nil && options.contains(.scaleDownLargeImages)
        let resize = thumbnail == nil && !scalesDown ? processors.first as? ImageProcessors.Resize : nil
        let metadata: DecodingOptions.MetadataHandling? =
            options.contains(.keepsMetadata) ? .all : options.contains(.keepsCopyright) ? .copyright : nil
        var plan = DecodePlan(
            thumbnail: thumbnail, scalesDown: scalesDown, resize: resize, keepsColorProfile: options.contains(.keepsColorProfile), metadata: metadata,
            keepsGainMap: options.contains(.keepsGainMap), smoothsChroma: options.contains(.smoothsChroma),
            usesEmbeddedThumbnail: options.contains(.usesEmbeddedThumbnail),
            limits: Limits(maxPixels: limits.maxPixels, maxFrames: limits.maxFrames), videoFrame: videoFrame, pages: pages)
        if thumbnail == nil, !scalesDown, resize == nil, let first = processors.first as? any ReducedDecodeProcessing {
            plan.requirement = DecodeSizeRequirement(first)
        }
        return plan
    }

    /// The processors that run on the decoded image: all of them, less a leading resize the
    /// decode plan folded in.
    var processorsAfterDecode: [any ImageProcessing] {
        decodePlan.resize == nil ? processors : Array(processors.dropFirst())
    }

    /// Whether the request asks for anything but the decoded original.
    var hasVariant: Bool { thumbnail != nil || !processors.isEmpty }

    /// The disk cache's key for this request's encoded variant.
    var variantDiskKey: String {
        diskCacheKey + "\nvariant:" + (thumbnail?.identifier ?? "") + "|" + processorsIdentifier
            + (options.contains(.keepsColorProfile) ? "|keeps-color-profile" : "")
            + (options.contains(.keepsMetadata) ? "|keeps-metadata" : options.contains(.keepsCopyright) ? "|keeps-copyright" : "")
            + (options.contains(.keepsGainMap) ? "|keeps-gain-map" : "") + (options.contains(.smoothsChroma) ? "|smooth-chroma" : "")
            + (options.contains(.usesEmbeddedThumbnail) ? "|embedded-thumbnail" : "") + (videoFrame.map { "|" + $0.identifier } ?? "")
            + (pages.map { "|" + $0.identifier } ?? "")
    }

    /// The key the original is kept under in the ``ImagePipeline/Configuration/diskCache``: the
    /// URL (or ``imageID``), and the headers and user name when the request sets them (never the
    /// password).
    public var diskCacheKey: String {
        var key = imageID.map { "id:" + $0 } ?? url.stringWithoutPassword
        let extra = headers.filter { !HeaderFields.namesMatch($0.name, "Authorization") }
            .map { "\($0.name.lowercased()):\($0.value)" }.sorted()
        if !extra.isEmpty { key += "\n" + extra.joined(separator: "\n") }
        if let user = credentials?.user ?? url.user { key += "\nuser:" + user }
        return key
    }
}

extension ImageRequest {
    /// Switches that change how a transfer is made.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The options' bits.
        public let rawValue: Int
        /// Makes options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Accept TLS certificates that do not verify (self-signed, expired, wrong host).
        public static let allowInvalidCertificates = Options(rawValue: 1 << 0)
        /// Send cookies from the configuration's cookie provider. Cookies are never sent otherwise.
        public static let sendCookies = Options(rawValue: 1 << 1)
        /// Deliver previews while the bytes arrive (progressive JPEG scans, partial rows), throttled
        /// by the configuration's `previewInterval`.
        public static let previews = Options(rawValue: 1 << 2)

        /// Do not look in the memory cache.
        public static let disableMemoryCacheReads = Options(rawValue: 1 << 3)
        /// Do not put the result in the memory cache.
        public static let disableMemoryCacheWrites = Options(rawValue: 1 << 4)
        /// Do not look in the disk cache.
        public static let disableDiskCacheReads = Options(rawValue: 1 << 5)
        /// Do not write the response to the disk cache.
        public static let disableDiskCacheWrites = Options(rawValue: 1 << 6)
        /// Keep this request's variant (its thumbnail and processors applied) in the disk cache too,
        /// encoded (PNG when it has alpha, else JPEG q90), and look for it there before loading the
        /// original: a fresh variant on disk costs one small decode and no transfer. Only for
        /// `http(s)` URLs with a disk cache; the disk read and write options apply to it as well.
        public static let storesVariantOnDisk = Options(rawValue: 1 << 7)
        /// Decode an image larger than the configuration's `largeImagePixelLimit` at a reduced
        /// scale and resample it under the limit (SDWebImage's `scaleDownLargeImages`). A
        /// thumbnail, when set, already bounds the size.
        public static let scaleDownLargeImages = Options(rawValue: 1 << 8)
        /// Deliver the pixels in the file's own colour profile, which travels with the image for
        /// encoders to embed, instead of converting them to sRGB (the configuration's
        /// ``DecodingOptions/colorProfileHandling`` set to `.keep` for this request). Part of the
        /// cache key: the two are different images.
        public static let keepsColorProfile = Options(rawValue: 1 << 9)
        /// Keep the file's copyright and author (EXIF `Copyright`/`Artist`, XMP
        /// `dc:rights`/`dc:creator`) in ``ImageMetadata`` for encoders to write
        /// (``DecodingOptions/MetadataHandling/copyright`` for this request). Part of the cache key.
        public static let keepsCopyright = Options(rawValue: 1 << 10)
        /// Keep all the file's EXIF and XMP, GPS included, the orientation reset to 1
        /// (``DecodingOptions/MetadataHandling/all`` for this request; wins over
        /// ``keepsCopyright``). Part of the cache key.
        public static let keepsMetadata = Options(rawValue: 1 << 11)
        /// Keep an HDR photo's gain map (Ultra HDR JPEG) with the image, decoded at the base's scale
        /// and moved by every processor, so a JPEG written from it stays HDR
        /// (``GainMapHandling/keep`` for this request). Part of the cache key.
        public static let keepsGainMap = Options(rawValue: 1 << 12)
        /// Upsample a JPEG's subsampled chroma smoothly, as libjpeg does by default and Pillow and
        /// libvips decode, instead of by replication (``DecodingOptions/smoothsChroma`` for this
        /// request). Part of the cache key: the pixels differ by a level or two at colour edges.
        public static let smoothsChroma = Options(rawValue: 1 << 13)
        /// Keep the bytes the image's decode and processing reserved in the pipeline's
        /// ``ImagePipeline/Configuration/decodeMemoryBudget`` held after delivery, in
        /// ``ImageResponse/memoryHold``, until it is released or dropped: for work that continues
        /// on the image under the same budget (an encode reserving through
        /// ``ImagePipeline/runOnCPUStage(priority:reserving:holding:for:_:)``), so that images
        /// waiting for it cannot pile up outside the budget.
        public static let holdsMemory = Options(rawValue: 1 << 14)
        /// Decode a HEIF's largest embedded thumbnail instead of its primary image when it has one
        /// (``DecodingOptions/usesEmbeddedThumbnail``; imgproxy's `enforce_thumbnail`). Part of
        /// the cache key: the source is then the thumbnail.
        public static let usesEmbeddedThumbnail = Options(rawValue: 1 << 15)

        /// The options that change how bytes are fetched, and so belong in the transfer key.
        static let changingTransfer: Options = [.allowInvalidCertificates, .sendCookies]
        /// The options that change whether a transfer may be answered from or written to disk.
        static let changingCacheUse: Options = [.disableDiskCacheReads, .disableDiskCacheWrites]
    }

    /// How the caches answer a request (SDWebImage's `refreshCached`, `ignoreCachedResponse` and
    /// URLRequest's cache policies).
    public enum CachePolicy: Sendable, Hashable {
        /// Memory, then disk while the entry is fresh by its HTTP headers, revalidating a stale one
        /// with a conditional request; then the network.
        case useProtocolCachePolicy
        /// Skips the memory cache and revalidates a disk entry even when fresh (unless it is
        /// `immutable` and fresh); the response replaces what was cached.
        case refreshCached
        /// Skips both caches for reading; the response still replaces what was cached.
        case reloadIgnoringCache
        /// Answers from memory or disk whatever their age, and never loads: a miss fails with
        /// ``ImagoError/Code/notCached``.
        case returnCacheDataDontLoad
    }

    /// Basic-auth user name and password.
    public struct Credentials: Sendable, Hashable {
        /// The user name.
        public var user: String
        /// The password; never logged, never part of a cache key.
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

    /// The URL and what changes the bytes fetched.
    struct SourceKey: Sendable, Hashable {
        let url: String
        let headers: [String]
        let credentials: Credentials?
        let options: Options
        /// A transfer stops at its request's own limit, so requests with other limits do not share it.
        let maxResponseSize: Int64?
    }

    /// A request's own limits on its source, each nil for the pipeline's (a request can only
    /// lower them): imgproxy's `max_src_file_size`, `max_src_resolution` and
    /// `max_animation_frames`, applied before the work they limit.
    public struct Limits: Sendable, Hashable {
        /// Most bytes the source may have: refused on its `Content-Length`, else stopped when the
        /// bytes pass it (``ImagoError/Code/tooLarge(limit:)``); a cached source over it fails too.
        public var maxResponseSize: Int64?
        /// Most pixels the image may declare (``DecodingOptions/maxPixels``), checked on its header.
        public var maxPixels: Int?
        /// Most frames an animation may have (``DecodingOptions/maxFrames``).
        public var maxFrames: Int?

        /// Limits; nil leaves the pipeline's.
        public init(maxResponseSize: Int64? = nil, maxPixels: Int? = nil, maxFrames: Int? = nil) {
            self.maxResponseSize = maxResponseSize
            self.maxPixels = maxPixels
            self.maxFrames = maxFrames
        }
    }

    /// The identity of an image variant: its source and the processors applied.
    public struct CacheKey: Sendable, Hashable {
        let source: SourceKey
        let decode: DecodePlan
        let processors: String
    }

    /// The identity of a transfer: requests with equal keys are coalesced into one.
    public struct TransferKey: Sendable, Hashable {
        let source: SourceKey
        let cachePolicy: CachePolicy
        let cacheOptions: Options
    }
}
