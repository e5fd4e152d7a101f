import ArgumentParser
import Foundation
import Hummingbird
import ImagoServer
import Logging
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve imgproxy (or thumbor) URLs: fetch, resize, convert and cache images over HTTP.",
        discussion:
            "Each flag may instead come from its IMAGO_* variable (docs/SERVER.md's table); a flag wins. SIGTERM or SIGINT stops accepting, finishes the requests in flight and exits 0."
    )

    @Option(help: "Address and port (IMAGO_LISTEN; default 127.0.0.1:8080).") var listen: String?
    @Option(help: "Hex HMAC keys, comma-separated (IMAGO_KEY).") var key: String?
    @Option(help: "Hex salts, one per key (IMAGO_SALT).") var salt: String?
    @Option(help: "Presets: name=rs:fill:300:300/q:80,… (IMAGO_PRESETS).") var presets: String?
    @Option(help: "Hosts sources may come from, comma-separated (IMAGO_ALLOWED_HOSTS).") var allowedHosts: String?
    @Flag(help: "Let sources resolve to loopback and private addresses (IMAGO_ALLOW_PRIVATE_ADDRESSES).") var allowPrivateAddresses = false
    @Option(help: "Folder served as local:///name (IMAGO_LOCAL_ROOT).") var localRoot: String?
    @Flag(help: "Serve /gallery: the local root's images with srcset and ThumbHash placeholders (IMAGO_GALLERY).") var gallery = false
    @Option(help: "Disk cache folder (IMAGO_CACHE_DIR).") var cacheDir: String?
    @Option(help: "Cache-Control of images (IMAGO_CACHE_CONTROL).") var cacheControl: String?
    @Option(help: "Quality when the URL sets none (IMAGO_QUALITY).") var quality: Int?
    @Option(help: "none, ssimulacra2 or size (IMAGO_AUTOQUALITY_METHOD).") var autoqualityMethod: String?
    @Option(help: "SSIMULACRA2 score, or bytes for size (IMAGO_AUTOQUALITY_TARGET).") var autoqualityTarget: String?
    @Option(help: "Lowest quality autoquality chooses (IMAGO_AUTOQUALITY_MIN).") var autoqualityMin: Int?
    @Option(help: "Highest quality autoquality chooses (IMAGO_AUTOQUALITY_MAX).") var autoqualityMax: Int?
    @Option(help: "Lowest quality per format: jpeg=60,avif=40 (IMAGO_AUTOQUALITY_FORMAT_MIN).") var autoqualityFormatMin: String?
    @Option(help: "Highest quality per format (IMAGO_AUTOQUALITY_FORMAT_MAX).") var autoqualityFormatMax: String?
    @Option(help: "SSIMULACRA2 points a score may miss the target by (IMAGO_AUTOQUALITY_ALLOWED_ERROR).") var autoqualityAllowedError: String?
    @Option(help: "Pixels above which quality stays fixed (IMAGO_AUTOQUALITY_MAX_RESOLUTION).") var autoqualityMaxResolution: Int?
    @Flag(help: "Offer AVIF to clients that accept it (IMAGO_AVIF).") var avif = false
    @Option(help: "Largest source in bytes (IMAGO_MAX_SOURCE_BYTES).") var maxSourceBytes: Int?
    @Option(help: "Most pixels a source may declare (IMAGO_MAX_SOURCE_PIXELS).") var maxSourcePixels: Int?
    @Option(help: "Most frames of an animated source (IMAGO_MAX_FRAMES).") var maxFrames: Int?
    @Option(help: "Seconds a source may take (IMAGO_SOURCE_TIMEOUT).") var sourceTimeout: Int?
    @Option(help: "Seconds a new image may take in all before a 504 (IMAGO_TIMEOUT).") var timeout: Int?
    @Option(help: "Images made at once before 503 (IMAGO_MAX_CONCURRENT_WORK).") var maxConcurrentWork: Int?
    @Option(help: "Bytes kept in memory between requests (IMAGO_MEMORY_BYTES).") var memoryBytes: Int?
    @Option(help: "Seconds a client may take to send a request's head (IMAGO_REQUEST_HEAD_TIMEOUT).") var requestHeadTimeout: Int?
    @Option(help: "true/false: convert to sRGB and drop colour profiles unless a URL says scp:0 (IMAGO_STRIP_COLOR_PROFILE).") var stripColorProfile: String?
    @Option(help: "true/false: drop EXIF and XMP unless a URL says sm:0 (IMAGO_STRIP_METADATA).") var stripMetadata: String?
    @Option(help: "true/false: keep the copyright and author when metadata is dropped (IMAGO_KEEP_COPYRIGHT).") var keepCopyright: String?
    @Option(help: "Image file the watermark option places (IMAGO_WATERMARK_PATH).") var watermarkPath: String?
    @Option(help: "http(s) URL of the watermark image (IMAGO_WATERMARK_URL).") var watermarkUrl: String?
    @Option(help: "The watermark image as base64 (IMAGO_WATERMARK_DATA).") var watermarkData: String?
    @Option(help: "The watermark's opacity, 0-1 (IMAGO_WATERMARK_OPACITY).") var watermarkOpacity: String?
    @Option(help: "Longest side of a result (IMAGO_MAX_RESULT_DIMENSION).") var maxResultDimension: Int?
    @Option(help: "true/false: Content-Disposition attachment unless a URL says att:0 (IMAGO_RETURN_ATTACHMENT).") var returnAttachment: String?
    @Option(help: "Source formats sent as they came, comma-separated (IMAGO_SKIP_PROCESSING_FORMATS).") var skipProcessingFormats: String?
    @Option(help: "Formats a source keeps when none is asked, comma-separated (IMAGO_PREFERRED_FORMATS).") var preferredFormats: String?
    @Option(help: "true/false: rasterise SVG sources when the URL names no format (IMAGO_ALWAYS_RASTERIZE_SVG).") var alwaysRasterizeSvg: String?
    @Option(help: "URLs answered at the root: imgproxy (default) or thumbor (IMAGO_DIALECT).") var dialect: String?
    @Option(help: "Path imgproxy's URLs are under (IMAGO_PATH_PREFIX).") var pathPrefix: String?
    @Option(help: "Path thumbor's URLs are under, beside imgproxy's (IMAGO_THUMBOR_PATH).") var thumborPath: String?
    @Option(help: "imgproxy signatures accepted without checking, comma-separated (IMAGO_TRUSTED_SIGNATURES).") var trustedSignatures: String?
    @Option(help: "thumbor's SECURITY_KEY, for signed thumbor URLs (IMAGO_THUMBOR_KEY).") var thumborKey: String?
    @Option(help: "true/false: answer thumbor's /unsafe/ URLs (IMAGO_ALLOW_UNSAFE_URL; default: only without a thumbor key).") var allowUnsafeUrl: String?
    @Option(help: "true/false: WebP for thumbor URLs without a format when accepted (IMAGO_AUTO_WEBP).") var autoWebp: String?
    @Option(help: "true/false: thumbor URLs turn images by their EXIF orientation (IMAGO_RESPECT_ORIENTATION).") var respectOrientation: String?

    /// The environment's IMAGO_* values with the flags given on top.
    func settings(environment: [String: String]) -> [String: String] {
        var values = environment.filter { $0.key.hasPrefix("IMAGO_") }
        let flags: [(String, String?)] = [
            ("IMAGO_LISTEN", listen), ("IMAGO_KEY", key), ("IMAGO_SALT", salt), ("IMAGO_PRESETS", presets),
            ("IMAGO_ALLOWED_HOSTS", allowedHosts), ("IMAGO_ALLOW_PRIVATE_ADDRESSES", allowPrivateAddresses ? "true" : nil),
            ("IMAGO_LOCAL_ROOT", localRoot), ("IMAGO_GALLERY", gallery ? "true" : nil), ("IMAGO_CACHE_DIR", cacheDir), ("IMAGO_CACHE_CONTROL", cacheControl),
            ("IMAGO_QUALITY", quality.map(String.init)), ("IMAGO_AVIF", avif ? "true" : nil),
            ("IMAGO_AUTOQUALITY_METHOD", autoqualityMethod), ("IMAGO_AUTOQUALITY_TARGET", autoqualityTarget),
            ("IMAGO_AUTOQUALITY_MIN", autoqualityMin.map(String.init)), ("IMAGO_AUTOQUALITY_MAX", autoqualityMax.map(String.init)),
            ("IMAGO_AUTOQUALITY_FORMAT_MIN", autoqualityFormatMin), ("IMAGO_AUTOQUALITY_FORMAT_MAX", autoqualityFormatMax),
            ("IMAGO_AUTOQUALITY_ALLOWED_ERROR", autoqualityAllowedError),
            ("IMAGO_AUTOQUALITY_MAX_RESOLUTION", autoqualityMaxResolution.map(String.init)),
            ("IMAGO_MAX_SOURCE_BYTES", maxSourceBytes.map(String.init)), ("IMAGO_MAX_SOURCE_PIXELS", maxSourcePixels.map(String.init)),
            ("IMAGO_MAX_FRAMES", maxFrames.map(String.init)), ("IMAGO_SOURCE_TIMEOUT", sourceTimeout.map(String.init)),
            ("IMAGO_TIMEOUT", timeout.map(String.init)), ("IMAGO_MAX_CONCURRENT_WORK", maxConcurrentWork.map(String.init)),
            ("IMAGO_MEMORY_BYTES", memoryBytes.map(String.init)),
            ("IMAGO_REQUEST_HEAD_TIMEOUT", requestHeadTimeout.map(String.init)), ("IMAGO_STRIP_COLOR_PROFILE", stripColorProfile),
            ("IMAGO_STRIP_METADATA", stripMetadata), ("IMAGO_KEEP_COPYRIGHT", keepCopyright),
            ("IMAGO_WATERMARK_PATH", watermarkPath), ("IMAGO_WATERMARK_URL", watermarkUrl), ("IMAGO_WATERMARK_DATA", watermarkData),
            ("IMAGO_WATERMARK_OPACITY", watermarkOpacity), ("IMAGO_MAX_RESULT_DIMENSION", maxResultDimension.map(String.init)),
            ("IMAGO_RETURN_ATTACHMENT", returnAttachment), ("IMAGO_SKIP_PROCESSING_FORMATS", skipProcessingFormats),
            ("IMAGO_ALWAYS_RASTERIZE_SVG", alwaysRasterizeSvg), ("IMAGO_PREFERRED_FORMATS", preferredFormats),
            ("IMAGO_DIALECT", dialect), ("IMAGO_PATH_PREFIX", pathPrefix), ("IMAGO_THUMBOR_PATH", thumborPath),
            ("IMAGO_TRUSTED_SIGNATURES", trustedSignatures), ("IMAGO_THUMBOR_KEY", thumborKey), ("IMAGO_ALLOW_UNSAFE_URL", allowUnsafeUrl),
            ("IMAGO_AUTO_WEBP", autoWebp), ("IMAGO_RESPECT_ORIENTATION", respectOrientation),
        ]
        for case (let variable, let value?) in flags { values[variable] = value }
        return values
    }

    func run() async throws {
        let (host, port, configuration): (String, Int, ServerConfiguration)
        do {
            (host, port, configuration) = try ServerSettings.configuration(settings(environment: ProcessInfo.processInfo.environment))
        } catch {
            throw ValidationError(error.message)
        }
        var logger = Logger(label: "imago-serve")
        logger.logLevel = .info
        if !configuration.signer.isEnabled {
            logger.warning("no IMAGO_KEY/IMAGO_SALT: signatures are not checked, any URL is served")
        }
        Self.returnLargeBuffersToTheSystem()
        let service = try ImageService(configuration: configuration, logger: logger)
        let application = Application(
            router: ImageServer.router(service: service),
            server: ImageServer.server(service),
            configuration: .init(address: .hostname(host, port: port), serverName: ImageServer.serverName),
            onServerRunning: { channel in
                // Tests and scripts read the port from this line when they asked for port 0.
                say("imago serve: listening on \(host):\(channel.localAddress?.port ?? port)")
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// glibc raises its mmap threshold after a large block is freed (up to 32 MB), after which
    /// pixel buffers come from its heaps and their memory stays with the process when freed: the
    /// server's RSS then keeps the high-water mark of its busiest moment. A fixed threshold keeps
    /// every buffer past 256 KB mapped on its own and unmapped when freed (`make soak`: RSS under
    /// the same load 99–250 MB instead of 187–345 MB, 3% fewer requests).
    private static func returnLargeBuffersToTheSystem() {
        #if canImport(Glibc)
            // malloc.h is not in Swift's Glibc module: found by name (nil, RTLD_DEFAULT, searches
            // the process); M_MMAP_THRESHOLD is -3.
            guard let symbol = dlsym(nil, "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            _ = mallopt(-3, 256 << 10)
        #endif
    }
}
