import Foundation

/// `imago serve`'s settings by name, from `IMAGO_*` environment variables and then flags (a flag
/// wins): one table, so docs/SERVER.md, the variables and the flags cannot drift apart.
public enum ServerSettings {
    /// (flag, variable, what it sets), in docs/SERVER.md's order.
    public static let table: [(flag: String, variable: String, help: String)] = [
        ("--listen", "IMAGO_LISTEN", "address and port to listen on (default 127.0.0.1:8080)"),
        ("--key", "IMAGO_KEY", "hex HMAC keys, comma-separated for rotation; none turns signature checks off"),
        ("--salt", "IMAGO_SALT", "hex salts, one per key"),
        ("--presets", "IMAGO_PRESETS", "named option lists: name=rs:fill:300:300/q:80,other=…; `default` applies to all"),
        ("--allowed-hosts", "IMAGO_ALLOWED_HOSTS", "hosts sources may come from, comma-separated (.example.com takes subdomains); default any public host"),
        ("--allow-private-addresses", "IMAGO_ALLOW_PRIVATE_ADDRESSES", "let sources resolve to loopback and private addresses (true/false; default false)"),
        ("--local-root", "IMAGO_LOCAL_ROOT", "folder served as local:///name sources; default none"),
        ("--gallery", "IMAGO_GALLERY", "serve /gallery: the local root's images with srcset and ThumbHash placeholders (true/false; default false)"),
        ("--cache-dir", "IMAGO_CACHE_DIR", "disk cache of sources and variants; default none"),
        ("--cache-control", "IMAGO_CACHE_CONTROL", "Cache-Control of images (default public, max-age=31536000, immutable)"),
        ("--quality", "IMAGO_QUALITY", "quality when the URL sets none (default 80)"),
        (
            "--autoquality-method", "IMAGO_AUTOQUALITY_METHOD",
            "none (default), ssimulacra2 (lowest quality scoring the target) or size (highest quality fitting target bytes)"
        ),
        ("--autoquality-target", "IMAGO_AUTOQUALITY_TARGET", "SSIMULACRA2 score (default 75), or bytes for size"),
        ("--autoquality-min", "IMAGO_AUTOQUALITY_MIN", "lowest quality autoquality may choose (default 70)"),
        ("--autoquality-max", "IMAGO_AUTOQUALITY_MAX", "highest quality autoquality may choose (default 80)"),
        ("--autoquality-format-min", "IMAGO_AUTOQUALITY_FORMAT_MIN", "lowest quality per format, e.g. jpeg=60,avif=40 (default avif=60)"),
        ("--autoquality-format-max", "IMAGO_AUTOQUALITY_FORMAT_MAX", "highest quality per format (default avif=65)"),
        ("--autoquality-allowed-error", "IMAGO_AUTOQUALITY_ALLOWED_ERROR", "SSIMULACRA2 points a score may miss the target by (default 0.5)"),
        ("--autoquality-max-resolution", "IMAGO_AUTOQUALITY_MAX_RESOLUTION", "pixels above which quality stays fixed (default 0: the metric's 16.7 MP limit)"),
        ("--avif", "IMAGO_AVIF", "offer AVIF to clients that accept it (true/false; default false)"),
        ("--max-source-bytes", "IMAGO_MAX_SOURCE_BYTES", "largest source in bytes (default 50000000)"),
        ("--max-source-pixels", "IMAGO_MAX_SOURCE_PIXELS", "most pixels a source may declare (default 50000000)"),
        ("--max-frames", "IMAGO_MAX_FRAMES", "most frames of an animated source (default 200)"),
        ("--source-timeout", "IMAGO_SOURCE_TIMEOUT", "seconds a source may take (default 20)"),
        ("--timeout", "IMAGO_TIMEOUT", "seconds a new image may take in all, source included, before a 504 (default 30)"),
        ("--max-concurrent-work", "IMAGO_MAX_CONCURRENT_WORK", "images made at once before 503 (default 4 per core)"),
        ("--memory-bytes", "IMAGO_MEMORY_BYTES", "bytes kept in memory between requests: encoded variants and their paths (default 268435456)"),
        ("--strip-color-profile", "IMAGO_STRIP_COLOR_PROFILE", "convert images to sRGB and drop their colour profile unless a URL says scp:0 (default true)"),
        ("--strip-metadata", "IMAGO_STRIP_METADATA", "drop EXIF and XMP unless a URL says sm:0 (default true)"),
        ("--keep-copyright", "IMAGO_KEEP_COPYRIGHT", "keep the copyright and author when metadata is dropped (default true)"),
        ("--watermark-path", "IMAGO_WATERMARK_PATH", "image file placed by the watermark option; default none"),
        ("--watermark-url", "IMAGO_WATERMARK_URL", "http(s) URL of the watermark image, fetched once on first use"),
        ("--watermark-data", "IMAGO_WATERMARK_DATA", "the watermark image as base64"),
        ("--watermark-opacity", "IMAGO_WATERMARK_OPACITY", "the watermark's opacity, multiplied by each URL's (0–1; default 1)"),
        ("--max-result-dimension", "IMAGO_MAX_RESULT_DIMENSION", "longest side of a result; larger ones are scaled down (default 0: none)"),
        ("--return-attachment", "IMAGO_RETURN_ATTACHMENT", "Content-Disposition: attachment unless a URL says att:0 (default false)"),
        ("--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS", "source formats sent as they came when asked in their own format (e.g. gif,svg)"),
        (
            "--preferred-formats", "IMAGO_PREFERRED_FORMATS",
            "formats a source keeps when none is asked, else the first that fits (default jpeg,png,webp,gif,avif)"
        ),
        ("--always-rasterize-svg", "IMAGO_ALWAYS_RASTERIZE_SVG", "rasterise SVG sources when the URL names no format (default false: sanitised SVG)"),
        ("--dialect", "IMAGO_DIALECT", "URLs answered at the root: imgproxy (default) or thumbor"),
        ("--path-prefix", "IMAGO_PATH_PREFIX", "path imgproxy's URLs are under, taken off before the signature is checked (default none: the root)"),
        ("--thumbor-path", "IMAGO_THUMBOR_PATH", "path thumbor's URLs are under, beside imgproxy's in one process (default none)"),
        ("--trusted-signatures", "IMAGO_TRUSTED_SIGNATURES", "imgproxy signatures accepted without checking, comma-separated (default none)"),
        ("--thumbor-key", "IMAGO_THUMBOR_KEY", "thumbor's SECURITY_KEY, for signed thumbor URLs; default none"),
        ("--allow-unsafe-url", "IMAGO_ALLOW_UNSAFE_URL", "answer thumbor's /unsafe/ URLs (true/false; default true without a thumbor key, false with one)"),
        ("--auto-webp", "IMAGO_AUTO_WEBP", "thumbor URLs without a format give WebP to clients that accept it (true/false; default false)"),
        ("--respect-orientation", "IMAGO_RESPECT_ORIENTATION", "thumbor URLs turn images by their EXIF orientation (true/false; default false, as thumbor)"),
        (
            "--request-head-timeout", "IMAGO_REQUEST_HEAD_TIMEOUT",
            "seconds a client may take to send a request's head before its connection is closed (default 10)"
        ),
    ]

    /// The listen address and the configuration `values` (variable name → text) give.
    public static func configuration(_ values: [String: String]) throws(ServerError) -> (host: String, port: Int, configuration: ServerConfiguration) {
        func invalid(_ variable: String) -> ServerError { ServerError(status: 500, "\(flag(variable)) (\(variable)) has a value Imago cannot use") }
        func list(_ variable: String) -> [String]? {
            values[variable].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        }
        func integer(_ variable: String, _ range: ClosedRange<Int>) throws(ServerError) -> Int? {
            guard let text = values[variable] else { return nil }
            guard let value = Int(text), range.contains(value) else { throw invalid(variable) }
            return value
        }
        func boolean(_ variable: String) throws(ServerError) -> Bool? {
            guard let text = values[variable]?.lowercased() else { return nil }
            switch text {
            case "1", "true", "yes": return true
            case "0", "false", "no": return false
            default: throw invalid(variable)
            }
        }

        var configuration = ServerConfiguration()
        do {
            configuration.signer = try URLSigner(hexKeys: list("IMAGO_KEY") ?? [], hexSalts: list("IMAGO_SALT") ?? [])
        } catch {
            throw ServerError(status: 500, "\(flag("IMAGO_KEY")) (IMAGO_KEY) and \(flag("IMAGO_SALT")) (IMAGO_SALT): \(error.message)")
        }
        for preset in list("IMAGO_PRESETS") ?? [] {
            let parts = preset.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty else { throw invalid("IMAGO_PRESETS") }
            configuration.presets[String(parts[0])] = parts[1].split(separator: "/").map(String.init)
        }
        for (name, options) in configuration.presets {
            do { _ = try ProcessingOptions(parsing: options) } catch { throw ServerError(status: 500, "preset \(name): \(error.message)") }
        }
        configuration.allowedHosts = list("IMAGO_ALLOWED_HOSTS")
        configuration.allowsPrivateAddresses = try boolean("IMAGO_ALLOW_PRIVATE_ADDRESSES") ?? false
        configuration.localRoot = values["IMAGO_LOCAL_ROOT"].map { URL(fileURLWithPath: $0) }
        configuration.cacheDirectory = values["IMAGO_CACHE_DIR"].map { URL(fileURLWithPath: $0) }
        configuration.servesGallery = try boolean("IMAGO_GALLERY") ?? configuration.servesGallery
        configuration.cacheControl = values["IMAGO_CACHE_CONTROL"] ?? configuration.cacheControl
        configuration.defaultQuality = try integer("IMAGO_QUALITY", 1...100) ?? configuration.defaultQuality
        configuration.negotiatesAVIF = try boolean("IMAGO_AVIF") ?? configuration.negotiatesAVIF
        func qualities(_ variable: String) throws(ServerError) -> [String: Int]? {
            guard let pairs = list(variable) else { return nil }
            var table: [String: Int] = [:]
            for pair in pairs {
                let parts = pair.split(separator: "=")
                guard parts.count == 2, let format = OutputFormat(extension: String(parts[0])), let quality = Int(parts[1]),
                    (1...100).contains(quality)
                else { throw invalid(variable) }
                table[format.rawValue] = quality
            }
            return table
        }
        if let text = values["IMAGO_AUTOQUALITY_METHOD"] {
            guard let method = AutoQualitySettings.Method(rawValue: text.lowercased()) else { throw invalid("IMAGO_AUTOQUALITY_METHOD") }
            configuration.autoQuality.method = method
        }
        if let text = values["IMAGO_AUTOQUALITY_TARGET"] {
            guard let target = Double(text), target.isFinite, target >= 0 else { throw invalid("IMAGO_AUTOQUALITY_TARGET") }
            configuration.autoQuality.target = target
        }
        configuration.autoQuality.minQuality = try integer("IMAGO_AUTOQUALITY_MIN", 1...100) ?? configuration.autoQuality.minQuality
        configuration.autoQuality.maxQuality = try integer("IMAGO_AUTOQUALITY_MAX", 1...100) ?? configuration.autoQuality.maxQuality
        configuration.autoQuality.formatMin = try qualities("IMAGO_AUTOQUALITY_FORMAT_MIN") ?? configuration.autoQuality.formatMin
        configuration.autoQuality.formatMax = try qualities("IMAGO_AUTOQUALITY_FORMAT_MAX") ?? configuration.autoQuality.formatMax
        if let text = values["IMAGO_AUTOQUALITY_ALLOWED_ERROR"] {
            guard let error = Double(text), (0...100).contains(error) else { throw invalid("IMAGO_AUTOQUALITY_ALLOWED_ERROR") }
            configuration.autoQuality.allowedError = error
        }
        configuration.autoQuality.maxResolution =
            try integer("IMAGO_AUTOQUALITY_MAX_RESOLUTION", 0...1_000_000_000) ?? configuration.autoQuality.maxResolution
        configuration.maxSourceBytes = Int64(try integer("IMAGO_MAX_SOURCE_BYTES", 1...(1 << 40)) ?? Int(configuration.maxSourceBytes))
        configuration.maxSourcePixels = try integer("IMAGO_MAX_SOURCE_PIXELS", 1...1_000_000_000) ?? configuration.maxSourcePixels
        configuration.maxFrames = try integer("IMAGO_MAX_FRAMES", 1...100_000) ?? configuration.maxFrames
        configuration.sourceTimeout = try integer("IMAGO_SOURCE_TIMEOUT", 1...3600).map { .seconds($0) } ?? configuration.sourceTimeout
        configuration.workTimeout = try integer("IMAGO_TIMEOUT", 1...3600).map { .seconds($0) } ?? configuration.workTimeout
        configuration.maxConcurrentWork = try integer("IMAGO_MAX_CONCURRENT_WORK", 1...100_000) ?? configuration.maxConcurrentWork
        configuration.memoryBytes = try integer("IMAGO_MEMORY_BYTES", (1 << 20)...(1 << 40)) ?? configuration.memoryBytes
        configuration.requestHeadTimeout =
            try integer("IMAGO_REQUEST_HEAD_TIMEOUT", 1...3600).map { .seconds($0) } ?? configuration.requestHeadTimeout
        configuration.stripsColorProfile = try boolean("IMAGO_STRIP_COLOR_PROFILE") ?? configuration.stripsColorProfile
        configuration.stripsMetadata = try boolean("IMAGO_STRIP_METADATA") ?? configuration.stripsMetadata
        configuration.keepsCopyright = try boolean("IMAGO_KEEP_COPYRIGHT") ?? configuration.keepsCopyright

        let watermarks = ["IMAGO_WATERMARK_PATH", "IMAGO_WATERMARK_URL", "IMAGO_WATERMARK_DATA"].filter { values[$0] != nil }
        guard watermarks.count <= 1 else { throw ServerError(status: 500, "set one of \(watermarks.map(flag).joined(separator: ", "))") }
        if let path = values["IMAGO_WATERMARK_PATH"] { configuration.watermark = .path(path) }
        if let text = values["IMAGO_WATERMARK_URL"] {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { throw invalid("IMAGO_WATERMARK_URL") }
            configuration.watermark = .url(url)
        }
        if let text = values["IMAGO_WATERMARK_DATA"] {
            guard let data = Data(base64Encoded: text), !data.isEmpty else { throw invalid("IMAGO_WATERMARK_DATA") }
            configuration.watermark = .data(data)
        }
        if let text = values["IMAGO_WATERMARK_OPACITY"] {
            guard let opacity = Double(text), (0...1).contains(opacity) else { throw invalid("IMAGO_WATERMARK_OPACITY") }
            configuration.watermarkOpacity = opacity
        }
        configuration.maxResultDimension = try integer("IMAGO_MAX_RESULT_DIMENSION", 0...65_535) ?? configuration.maxResultDimension
        configuration.returnsAttachment = try boolean("IMAGO_RETURN_ATTACHMENT") ?? configuration.returnsAttachment
        configuration.alwaysRasterizesSVG = try boolean("IMAGO_ALWAYS_RASTERIZE_SVG") ?? configuration.alwaysRasterizesSVG
        if let names = list("IMAGO_PREFERRED_FORMATS") {
            let formats = names.compactMap(OutputFormat.init(extension:)).filter { $0.isEncoded }
            guard formats.count == names.count, !formats.isEmpty else { throw invalid("IMAGO_PREFERRED_FORMATS") }
            configuration.preferredFormats = formats
        }
        for name in list("IMAGO_SKIP_PROCESSING_FORMATS") ?? [] {
            guard let format = ImageFormatName.canonical(name) else { throw invalid("IMAGO_SKIP_PROCESSING_FORMATS") }
            configuration.skipProcessingFormats.append(format)
        }

        if let name = values["IMAGO_DIALECT"] {
            guard let dialect = ServerConfiguration.Dialect(rawValue: name.lowercased()) else { throw invalid("IMAGO_DIALECT") }
            configuration.dialect = dialect
        }
        configuration.pathPrefix = values["IMAGO_PATH_PREFIX"] ?? configuration.pathPrefix
        configuration.thumborPath = values["IMAGO_THUMBOR_PATH"]
        configuration.trustedSignatures = Set(list("IMAGO_TRUSTED_SIGNATURES") ?? [])
        if let thumbor = configuration.thumborMount, thumbor == configuration.imgproxyMount {
            throw ServerError(status: 500, "imgproxy's and thumbor's URLs cannot both be at '\(thumbor.isEmpty ? "/" : thumbor)'")
        }
        configuration.thumborSigner = ThumborSigner(key: values["IMAGO_THUMBOR_KEY"], allowsUnsafe: try boolean("IMAGO_ALLOW_UNSAFE_URL"))
        configuration.thumborAutoWebP = try boolean("IMAGO_AUTO_WEBP") ?? configuration.thumborAutoWebP
        configuration.thumborRespectsOrientation = try boolean("IMAGO_RESPECT_ORIENTATION") ?? configuration.thumborRespectsOrientation

        let listen = values["IMAGO_LISTEN"] ?? "127.0.0.1:8080"
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
            throw invalid("IMAGO_LISTEN")
        }
        let host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (host.isEmpty ? "0.0.0.0" : host, port, configuration)
    }

    /// The flag that sets `variable`.
    public static func flag(_ variable: String) -> String {
        table.first { $0.variable == variable }?.flag ?? variable
    }
}
