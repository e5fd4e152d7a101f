import Foundation

/// One setting of `imago serve`, declared once: its flag, its variables (`IMAGO_*` and, where it
/// means the same, the peer's own `IMGPROXY_*` name), its help, and how its text sets the
/// configuration. The command's flags, the environment reading, docs/SERVER.md's table and the
/// help all come from ``ServerSettings/all``.
public struct ServerSetting: Sendable {
    /// The command-line flag (`--listen`).
    public let flag: String
    /// Imago's environment variable (`IMAGO_LISTEN`).
    public let variable: String
    /// The peer's own variables read when Imago's is not set (imgproxy's, same meaning).
    public let peerVariables: [String]
    /// A flag that takes no value (`--avif`): given, it sets `true`.
    public let isSwitch: Bool
    /// What it sets, for the help and the docs table.
    public let help: String
    let apply: @Sendable (inout ServerConfiguration, _ text: String, _ values: [String: String]) throws(ServerError) -> Void

    init(
        _ flag: String, _ variable: String, peers: [String] = [], switch isSwitch: Bool = false, _ help: String,
        apply: @escaping @Sendable (inout ServerConfiguration, _ text: String, _ values: [String: String]) throws(ServerError) -> Void
    ) {
        self.flag = flag
        self.variable = variable
        self.peerVariables = peers
        self.isSwitch = isSwitch
        self.help = help
        self.apply = apply
    }

    /// The 500 a value this setting cannot use gets, naming its flag and variable.
    var invalid: ServerError { Self.invalid(flag, variable) }

    /// The 500 a value the setting `flag` (`variable`) cannot use gets.
    static func invalid(_ flag: String, _ variable: String) -> ServerError {
        ServerError(status: 500, "\(flag) (\(variable)) has a value Imago cannot use")
    }

    /// Its text as a comma-separated list, blanks dropped.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

extension ServerSetting {
    static func text(
        _ flag: String, _ variable: String, peers: [String] = [], _ help: String, _ set: @escaping @Sendable (inout ServerConfiguration, String) -> Void
    ) -> ServerSetting {
        ServerSetting(flag, variable, peers: peers, help) { configuration, text, _ in set(&configuration, text) }
    }

    static func integer(
        _ flag: String, _ variable: String, _ range: ClosedRange<Int>, _ help: String, _ set: @escaping @Sendable (inout ServerConfiguration, Int) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, help) { configuration, text, _ throws(ServerError) in
            guard let value = Int(text), range.contains(value) else { throw ServerSetting.invalid(flag, variable) }
            set(&configuration, value)
        }
    }

    static func seconds(
        _ flag: String, _ variable: String, _ help: String, _ set: @escaping @Sendable (inout ServerConfiguration, Duration) -> Void
    ) -> ServerSetting {
        integer(flag, variable, 1...3600, help) { set(&$0, .seconds($1)) }
    }

    static func boolean(
        _ flag: String, _ variable: String, switch isSwitch: Bool = false, _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, Bool) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, switch: isSwitch, help) { configuration, text, _ throws(ServerError) in
            switch text.lowercased() {
            case "1", "true", "yes": set(&configuration, true)
            case "0", "false", "no": set(&configuration, false)
            default: throw ServerSetting.invalid(flag, variable)
            }
        }
    }

    static func number(
        _ flag: String, _ variable: String, _ range: ClosedRange<Double>, _ help: String,
        _ set: @escaping @Sendable (inout ServerConfiguration, Double) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, help) { configuration, text, _ throws(ServerError) in
            guard let value = Double(text), value.isFinite, range.contains(value) else { throw ServerSetting.invalid(flag, variable) }
            set(&configuration, value)
        }
    }

    /// `jpeg=60,avif=40`: a quality per format.
    static func qualities(
        _ flag: String, _ variable: String, _ help: String, _ set: @escaping @Sendable (inout ServerConfiguration, [String: Int]) -> Void
    ) -> ServerSetting {
        return ServerSetting(flag, variable, help) { configuration, text, _ throws(ServerError) in
            var table: [String: Int] = [:]
            for pair in list(text) {
                let parts = pair.split(separator: "=")
                guard parts.count == 2, let format = OutputFormat(extension: String(parts[0])), let quality = Int(parts[1]), (1...100).contains(quality)
                else { throw ServerSetting.invalid(flag, variable) }
                table[format.rawValue] = quality
            }
            set(&configuration, table)
        }
    }
}

/// `imago serve`'s settings by name, from flags, then `IMAGO_*` variables, then the peer's own
/// (a flag wins): each declared once in ``all``, so docs/SERVER.md, the variables, the flags and
/// the configuration cannot drift apart.
public enum ServerSettings {
    /// Every setting, in docs/SERVER.md's order.
    public static let all: [ServerSetting] = [
        .text("--listen", "IMAGO_LISTEN", "address and port to listen on (default 127.0.0.1:8080)") { _, _ in },
        ServerSetting("--key", "IMAGO_KEY", peers: ["IMGPROXY_KEY"], "hex HMAC keys, comma-separated for rotation; none turns signature checks off") {
            configuration, text, values throws(ServerError) in
            do {
                configuration.signer = try URLSigner(
                    hexKeys: ServerSetting.list(text), hexSalts: ServerSetting.list(values["IMAGO_SALT"] ?? values["IMGPROXY_SALT"] ?? ""))
            } catch let error as ServerError {
                throw ServerError(status: 500, "--key (IMAGO_KEY) and --salt (IMAGO_SALT): \(error.message)")
            } catch {
                throw ServerSetting.invalid("--key", "IMAGO_KEY")
            }
        },
        ServerSetting("--salt", "IMAGO_SALT", peers: ["IMGPROXY_SALT"], "hex salts, one per key") { _, _, values throws(ServerError) in
            // Read with the keys; salts without any key are a mistake worth stopping for.
            if (values["IMAGO_KEY"] ?? values["IMGPROXY_KEY"]) == nil { throw ServerError(status: 500, "--salt (IMAGO_SALT) is set without --key (IMAGO_KEY)") }
        },
        ServerSetting("--presets", "IMAGO_PRESETS", "named option lists: name=rs:fill:300:300/q:80,other=…; `default` applies to all") {
            configuration, text, _ throws(ServerError) in
            for preset in ServerSetting.list(text) {
                let parts = preset.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !parts[0].isEmpty else { throw ServerSetting.invalid("--presets", "IMAGO_PRESETS") }
                configuration.presets[String(parts[0])] = parts[1].split(separator: "/").map(String.init)
            }
            for (name, options) in configuration.presets {
                do {
                    _ = try ProcessingOptions(parsing: options)
                } catch let error as ServerError {
                    throw ServerError(status: 500, "preset \(name): \(error.message)")
                } catch {
                    throw ServerSetting.invalid("--presets", "IMAGO_PRESETS")
                }
            }
        },
        .text("--allowed-hosts", "IMAGO_ALLOWED_HOSTS", "hosts sources may come from, comma-separated (.example.com takes subdomains); default any public host")
        {
            $0.allowedHosts = ServerSetting.list($1)
        },
        .boolean(
            "--allow-private-addresses", "IMAGO_ALLOW_PRIVATE_ADDRESSES", switch: true,
            "let sources resolve to loopback and private addresses (true/false; default false)"
        ) { $0.allowsPrivateAddresses = $1 },
        .text("--local-root", "IMAGO_LOCAL_ROOT", peers: ["IMGPROXY_LOCAL_FILESYSTEM_ROOT"], "folder served as local:///name sources; default none") {
            $0.localRoot = URL(fileURLWithPath: $1)
        },
        .boolean(
            "--gallery", "IMAGO_GALLERY", switch: true,
            "serve /gallery: the local root's images with srcset and ThumbHash placeholders (true/false; default false)"
        ) { $0.servesGallery = $1 },
        .text("--cache-dir", "IMAGO_CACHE_DIR", "disk cache of sources and variants; default none") { $0.cacheDirectory = URL(fileURLWithPath: $1) },
        .text("--cache-control", "IMAGO_CACHE_CONTROL", "Cache-Control of images (default public, max-age=31536000, immutable)") { $0.cacheControl = $1 },
        .integer("--quality", "IMAGO_QUALITY", 1...100, "quality when the URL sets none (default 80)") { $0.defaultQuality = $1 },
        ServerSetting(
            "--autoquality-method", "IMAGO_AUTOQUALITY_METHOD",
            "none (default), ssimulacra2 (lowest quality scoring the target) or size (highest quality fitting target bytes)"
        ) { configuration, text, _ throws(ServerError) in
            guard let method = AutoQualitySettings.Method(rawValue: text.lowercased()) else {
                throw ServerSetting.invalid("--autoquality-method", "IMAGO_AUTOQUALITY_METHOD")
            }
            configuration.autoQuality.method = method
        },
        .number("--autoquality-target", "IMAGO_AUTOQUALITY_TARGET", 0...Double.greatestFiniteMagnitude, "SSIMULACRA2 score (default 75), or bytes for size") {
            $0.autoQuality.target = $1
        },
        .integer("--autoquality-min", "IMAGO_AUTOQUALITY_MIN", 1...100, "lowest quality autoquality may choose (default 70)") {
            $0.autoQuality.minQuality = $1
        },
        .integer("--autoquality-max", "IMAGO_AUTOQUALITY_MAX", 1...100, "highest quality autoquality may choose (default 80)") {
            $0.autoQuality.maxQuality = $1
        },
        .qualities("--autoquality-format-min", "IMAGO_AUTOQUALITY_FORMAT_MIN", "lowest quality per format, e.g. jpeg=60,avif=40 (default avif=60)") {
            $0.autoQuality.formatMin = $1
        },
        .qualities("--autoquality-format-max", "IMAGO_AUTOQUALITY_FORMAT_MAX", "highest quality per format (default avif=65)") {
            $0.autoQuality.formatMax = $1
        },
        .number("--autoquality-allowed-error", "IMAGO_AUTOQUALITY_ALLOWED_ERROR", 0...100, "SSIMULACRA2 points a score may miss the target by (default 0.5)") {
            $0.autoQuality.allowedError = $1
        },
        .integer(
            "--autoquality-max-resolution", "IMAGO_AUTOQUALITY_MAX_RESOLUTION", 0...1_000_000_000,
            "pixels above which quality stays fixed (default 0: the metric's 16.7 MP limit)"
        ) { $0.autoQuality.maxResolution = $1 },
        .boolean("--avif", "IMAGO_AVIF", switch: true, "offer AVIF to clients that accept it (true/false; default false)") { $0.negotiatesAVIF = $1 },
        .integer("--max-source-bytes", "IMAGO_MAX_SOURCE_BYTES", 1...(1 << 40), "largest source in bytes (default 50000000)") {
            $0.maxSourceBytes = Int64($1)
        },
        .integer("--max-source-pixels", "IMAGO_MAX_SOURCE_PIXELS", 1...1_000_000_000, "most pixels a source may declare (default 50000000)") {
            $0.maxSourcePixels = $1
        },
        .integer("--max-frames", "IMAGO_MAX_FRAMES", 1...100_000, "most frames of an animated source (default 200)") { $0.maxFrames = $1 },
        .seconds("--source-timeout", "IMAGO_SOURCE_TIMEOUT", "seconds a source may take (default 20)") { $0.sourceTimeout = $1 },
        .seconds("--timeout", "IMAGO_TIMEOUT", "seconds a new image may take in all, source included, before a 504 (default 30)") { $0.workTimeout = $1 },
        .integer("--max-concurrent-work", "IMAGO_MAX_CONCURRENT_WORK", 1...100_000, "images made at once before 503 (default 4 per core)") {
            $0.maxConcurrentWork = $1
        },
        .integer(
            "--memory-bytes", "IMAGO_MEMORY_BYTES", (1 << 20)...(1 << 40),
            "bytes kept in memory between requests: encoded variants and their paths (default 268435456)"
        ) { $0.memoryBytes = $1 },
        .boolean(
            "--strip-color-profile", "IMAGO_STRIP_COLOR_PROFILE",
            "convert images to sRGB and drop their colour profile unless a URL says scp:0 (default true)"
        ) { $0.stripsColorProfile = $1 },
        .boolean("--strip-metadata", "IMAGO_STRIP_METADATA", "drop EXIF and XMP unless a URL says sm:0 (default true)") { $0.stripsMetadata = $1 },
        .boolean("--keep-copyright", "IMAGO_KEEP_COPYRIGHT", "keep the copyright and author when metadata is dropped (default true)") {
            $0.keepsCopyright = $1
        },
        .text("--watermark-path", "IMAGO_WATERMARK_PATH", "image file placed by the watermark option; default none") { $0.watermark = .path($1) },
        ServerSetting("--watermark-url", "IMAGO_WATERMARK_URL", "http(s) URL of the watermark image, fetched once on first use") {
            configuration, text, _ throws(ServerError) in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw ServerSetting.invalid("--watermark-url", "IMAGO_WATERMARK_URL")
            }
            configuration.watermark = .url(url)
        },
        ServerSetting("--watermark-data", "IMAGO_WATERMARK_DATA", "the watermark image as base64") { configuration, text, _ throws(ServerError) in
            guard let data = Data(base64Encoded: text), !data.isEmpty else {
                throw ServerSetting.invalid("--watermark-data", "IMAGO_WATERMARK_DATA")
            }
            configuration.watermark = .data(data)
        },
        .number("--watermark-opacity", "IMAGO_WATERMARK_OPACITY", 0...1, "the watermark's opacity, multiplied by each URL's (0–1; default 1)") {
            $0.watermarkOpacity = $1
        },
        .integer(
            "--max-result-dimension", "IMAGO_MAX_RESULT_DIMENSION", 0...65_535, "longest side of a result; larger ones are scaled down (default 0: none)"
        ) { $0.maxResultDimension = $1 },
        .boolean("--return-attachment", "IMAGO_RETURN_ATTACHMENT", "Content-Disposition: attachment unless a URL says att:0 (default false)") {
            $0.returnsAttachment = $1
        },
        ServerSetting(
            "--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS", "source formats sent as they came when asked in their own format (e.g. gif,svg)"
        ) { configuration, text, _ throws(ServerError) in
            for name in ServerSetting.list(text) {
                guard let format = ImageFormatName.canonical(name) else {
                    throw ServerSetting.invalid("--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS")
                }
                configuration.skipProcessingFormats.append(format)
            }
        },
        ServerSetting(
            "--preferred-formats", "IMAGO_PREFERRED_FORMATS",
            "formats a source keeps when none is asked, else the first that fits (default jpeg,png,webp,gif,avif)"
        ) { configuration, text, _ throws(ServerError) in
            let names = ServerSetting.list(text)
            let formats = names.compactMap(OutputFormat.init(extension:)).filter { $0.isEncoded }
            guard formats.count == names.count, !formats.isEmpty else {
                throw ServerSetting.invalid("--preferred-formats", "IMAGO_PREFERRED_FORMATS")
            }
            configuration.preferredFormats = formats
        },
        .boolean("--always-rasterize-svg", "IMAGO_ALWAYS_RASTERIZE_SVG", "rasterise SVG sources when the URL names no format (default false: sanitised SVG)") {
            $0.alwaysRasterizesSVG = $1
        },
        ServerSetting("--dialect", "IMAGO_DIALECT", "URLs answered at the root: imgproxy (default) or thumbor") { configuration, text, _ throws(ServerError) in
            guard let dialect = ServerConfiguration.Dialect(rawValue: text.lowercased()) else {
                throw ServerSetting.invalid("--dialect", "IMAGO_DIALECT")
            }
            configuration.dialect = dialect
        },
        .text(
            "--path-prefix", "IMAGO_PATH_PREFIX", peers: ["IMGPROXY_PATH_PREFIX"],
            "path imgproxy's URLs are under, taken off before the signature is checked (default none: the root)"
        ) { $0.pathPrefix = $1 },
        .text("--thumbor-path", "IMAGO_THUMBOR_PATH", "path thumbor's URLs are under, beside imgproxy's in one process (default none)") {
            $0.thumborPath = $1
        },
        .text(
            "--trusted-signatures", "IMAGO_TRUSTED_SIGNATURES", peers: ["IMGPROXY_TRUSTED_SIGNATURES"],
            "imgproxy signatures accepted without checking, comma-separated (default none)"
        ) { $0.trustedSignatures = Set(ServerSetting.list($1)) },
        ServerSetting("--thumbor-key", "IMAGO_THUMBOR_KEY", "thumbor's SECURITY_KEY, for signed thumbor URLs; default none") {
            configuration, text, _ in
            // --allow-unsafe-url, read after, may change what the key implies.
            configuration.thumborSigner = ThumborSigner(key: text)
        },
        .boolean(
            "--allow-unsafe-url", "IMAGO_ALLOW_UNSAFE_URL",
            "answer thumbor's /unsafe/ URLs (true/false; default true without a thumbor key, false with one)"
        ) { configuration, allows in
            let key = configuration.thumborSigner.key.map { String(decoding: $0, as: UTF8.self) }
            configuration.thumborSigner = ThumborSigner(key: key, allowsUnsafe: allows)
        },
        .boolean("--auto-webp", "IMAGO_AUTO_WEBP", "thumbor URLs without a format give WebP to clients that accept it (true/false; default false)") {
            $0.thumborAutoWebP = $1
        },
        .integer(
            "--thumbor-max-age", "IMAGO_THUMBOR_MAX_AGE", 0...(1 << 31),
            "thumbor's MAX_AGE: seconds thumbor answers without max_age() may be cached, as max-age=N,public (0: no Cache-Control); default the server's"
        ) { $0.thumborMaxAge = $1 },
        .boolean(
            "--respect-orientation", "IMAGO_RESPECT_ORIENTATION", "thumbor URLs turn images by their EXIF orientation (true/false; default false, as thumbor)"
        ) { $0.thumborRespectsOrientation = $1 },
        .seconds(
            "--request-head-timeout", "IMAGO_REQUEST_HEAD_TIMEOUT",
            "seconds a client may take to send a request's head before its connection is closed (default 10)"
        ) { $0.requestHeadTimeout = $1 },
    ]

    /// (flag, variable, what it sets), in docs/SERVER.md's order.
    public static var table: [(flag: String, variable: String, help: String)] { all.map { ($0.flag, $0.variable, $0.help) } }

    /// Each setting's text from `values` (variable name → text): Imago's variable, else the
    /// first of the peer's that is set.
    static func text(of setting: ServerSetting, in values: [String: String]) -> String? {
        values[setting.variable] ?? setting.peerVariables.lazy.compactMap { values[$0] }.first
    }

    /// The listen address and the configuration `values` (variable name → text) give.
    public static func configuration(_ values: [String: String]) throws(ServerError) -> (host: String, port: Int, configuration: ServerConfiguration) {
        var configuration = ServerConfiguration()
        for setting in all {
            guard let text = text(of: setting, in: values) else { continue }
            try setting.apply(&configuration, text, values)
        }
        let watermarks = ["IMAGO_WATERMARK_PATH", "IMAGO_WATERMARK_URL", "IMAGO_WATERMARK_DATA"].filter { values[$0] != nil }
        guard watermarks.count <= 1 else { throw ServerError(status: 500, "set one of \(watermarks.map(flag).joined(separator: ", "))") }
        if let thumbor = configuration.thumborMount, thumbor == configuration.imgproxyMount {
            throw ServerError(status: 500, "imgproxy's and thumbor's URLs cannot both be at '\(thumbor.isEmpty ? "/" : thumbor)'")
        }
        let listen = values["IMAGO_LISTEN"] ?? "127.0.0.1:8080"
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ServerSetting.invalid("--listen", "IMAGO_LISTEN")
        }
        let host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (host.isEmpty ? "0.0.0.0" : host, port, configuration)
    }

    /// The settings `arguments` give (`--flag value`, `--flag=value`, or a switch alone), on top of
    /// `environment`'s `IMAGO_*` and peer variables: a flag wins. Throws naming an unknown flag or
    /// a flag without its value.
    public static func values(arguments: [String], environment: [String: String]) throws(ServerError) -> [String: String] {
        let variables = Set(all.flatMap { [$0.variable] + $0.peerVariables })
        var values = environment.filter { variables.contains($0.key) }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1)
            guard let setting = all.first(where: { $0.flag == parts[0] }) else { throw ServerError(status: 500, "unknown option '\(argument)'") }
            if parts.count == 2 {
                values[setting.variable] = String(parts[1])
            } else if setting.isSwitch {
                values[setting.variable] = "true"
            } else {
                guard let value = rest.popFirst() else { throw ServerError(status: 500, "\(setting.flag) needs a value") }
                values[setting.variable] = value
            }
        }
        return values
    }

    /// docs/SERVER.md's table of the settings, as Markdown.
    public static var markdownTable: String {
        let rows = all.map { setting in
            let variables = ([setting.variable] + setting.peerVariables).map { "`\($0)`" }.joined(separator: ", ")
            return "| `\(setting.flag)` | \(variables) | \(setting.help) |"
        }
        return (["| flag | variables | sets |", "| --- | --- | --- |"] + rows).joined(separator: "\n") + "\n"
    }

    /// The settings as the command's help lists them.
    public static var help: String {
        all.map { setting in
            let peers = setting.peerVariables.isEmpty ? "" : ", " + setting.peerVariables.joined(separator: ", ")
            return "  \(setting.flag)\(setting.isSwitch ? "" : " <value>") (\(setting.variable)\(peers))\n      \(setting.help)"
        }
        .joined(separator: "\n")
    }

    /// The flag that sets `variable`.
    public static func flag(_ variable: String) -> String {
        all.first { $0.variable == variable }?.flag ?? variable
    }
}
