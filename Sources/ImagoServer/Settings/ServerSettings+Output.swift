import Foundation
import Imago

extension ServerSettings {
    /// What changes an answer's bytes (the configuration's ``OutputSettings``) and its headers: qualities, formats, encoders, metadata, the watermark.
    static let output: [ServerSetting] =
        // The watermark comes from one of three places.
        ServerSetting.compound(
            .part(
                "--watermark-path", "IMAGO_WATERMARK_PATH", peers: [.same("IMGPROXY_WATERMARK_PATH")], "image file placed by the watermark option; default none"
            ),
            .part(
                "--watermark-url", "IMAGO_WATERMARK_URL", peers: [.same("IMGPROXY_WATERMARK_URL")],
                "http(s) URL of the watermark image, fetched once on first use"),
            .part("--watermark-data", "IMAGO_WATERMARK_DATA", peers: [.same("IMGPROXY_WATERMARK_DATA")], "the watermark image as base64")
        ) { configuration, texts, _ throws(ServerError) in
            configuration.output.watermark = try ServerSetting.auxiliaryImage(texts, flags: ["--watermark-path", "--watermark-url", "--watermark-data"])
        }
        + [
            .text(
                "--cache-control", "IMAGO_CACHE_CONTROL",
                peers: [
                    PeerVariable("IMGPROXY_TTL") { text, _ throws(ServerError) in
                        guard let seconds = Int(text), seconds >= 0 else { throw PeerVariable.invalid("IMGPROXY_TTL") }
                        return "max-age=\(seconds), public"
                    }
                ], "Cache-Control of images (default public, max-age=31536000, immutable)"
            ) { $0.cacheControl = $1 },
            .integer(
                "--quality", "IMAGO_QUALITY", 1...100, peers: [.same("IMGPROXY_QUALITY"), .thumbor("QUALITY")], "quality when the URL sets none",
                \.output.defaultQuality),
            .qualities(
                "--format-quality", "IMAGO_FORMAT_QUALITY", peers: [.same("IMGPROXY_FORMAT_QUALITY")],
                "quality per format when the URL sets none, before --quality, e.g. jpeg=70,webp=60 (default webp=79,avif=63,jxl=77)"
            ) { $0.output.formatQuality.merge($1) { $1 } },
            ServerSetting(
                "--autoquality-method", "IMAGO_AUTOQUALITY_METHOD",
                peers: [
                    PeerVariable("IMGPROXY_AUTOQUALITY_METHOD") { text, _ throws(ServerError) in
                        // imgproxy Pro's dssim and ml have no counterpart; size is the same search.
                        guard ["none", "size"].contains(text.lowercased()) else {
                            throw PeerVariable.invalid("IMGPROXY_AUTOQUALITY_METHOD", "is '\(text)': Imago's methods are none, size and ssimulacra2")
                        }
                        return text.lowercased()
                    }
                ],
                "none (default), ssimulacra2 (lowest quality scoring the target) or size (highest quality fitting target bytes)"
            ) { configuration, text, _ throws(ServerError) in
                guard let method = AutoQualitySettings.Method(rawValue: text.lowercased()) else {
                    throw ServerSetting.invalid("--autoquality-method", "IMAGO_AUTOQUALITY_METHOD")
                }
                configuration.output.autoQuality.method = method
            },
            .number(
                "--autoquality-target", "IMAGO_AUTOQUALITY_TARGET", 0...Double.greatestFiniteMagnitude, peers: [.same("IMGPROXY_AUTOQUALITY_TARGET")],
                "SSIMULACRA2 score (default 75), or bytes for size"
            ) {
                $0.output.autoQuality.target = $1
            },
            .integer(
                "--autoquality-min", "IMAGO_AUTOQUALITY_MIN", 1...100, peers: [.same("IMGPROXY_AUTOQUALITY_MIN")],
                "lowest quality autoquality may choose", \.output.autoQuality.minQuality),
            .integer(
                "--autoquality-max", "IMAGO_AUTOQUALITY_MAX", 1...100, peers: [.same("IMGPROXY_AUTOQUALITY_MAX")],
                "highest quality autoquality may choose", \.output.autoQuality.maxQuality),
            .qualities(
                "--autoquality-format-min", "IMAGO_AUTOQUALITY_FORMAT_MIN", peers: [.same("IMGPROXY_AUTOQUALITY_FORMAT_MIN")],
                "lowest quality per format, e.g. jpeg=60,avif=40 (default avif=60)"
            ) {
                $0.output.autoQuality.formatMin = $1
            },
            .qualities(
                "--autoquality-format-max", "IMAGO_AUTOQUALITY_FORMAT_MAX", peers: [.same("IMGPROXY_AUTOQUALITY_FORMAT_MAX")],
                "highest quality per format (default avif=65)"
            ) {
                $0.output.autoQuality.formatMax = $1
            },
            .number(
                "--autoquality-allowed-error", "IMAGO_AUTOQUALITY_ALLOWED_ERROR", 0...100, peers: [.same("IMGPROXY_AUTOQUALITY_ALLOWED_ERROR")],
                "SSIMULACRA2 points a score may miss the target by", \.output.autoQuality.allowedError),
            .integer(
                "--autoquality-max-resolution", "IMAGO_AUTOQUALITY_MAX_RESOLUTION", 0...1_000_000_000, peers: [.same("IMGPROXY_AUTOQUALITY_MAX_RESOLUTION")],
                "pixels above which quality stays fixed", note: ": the metric's 16.7 MP limit", \.output.autoQuality.maxResolution),
            .boolean(
                "--avif", "IMAGO_AVIF", switch: true, "offer AVIF to clients that accept it, as avif in --auto-formats", showsTrueFalse: true,
                \.output.negotiatesAVIF),
            .formats(
                "--auto-formats", "IMAGO_AUTO_FORMATS",
                peers: [
                    .listMember("IMGPROXY_AUTO_WEBP", "webp", start: "webp"), .listMember("IMGPROXY_ENABLE_WEBP_DETECTION", "webp", start: "webp"),
                    .listMember("IMGPROXY_AUTO_AVIF", "avif", start: "webp"), .listMember("IMGPROXY_ENABLE_AVIF_DETECTION", "avif", start: "webp"),
                    .listMember("IMGPROXY_AUTO_JXL", "jxl", start: "webp"),
                ],
                "formats (webp, avif, jxl) given to clients that accept them when the URL names none, best first jxl, avif, webp (default webp)"
            ) { $0.output.autoFormats = $1 },
            .formats(
                "--enforce-formats", "IMAGO_ENFORCE_FORMATS",
                peers: [
                    .listMember("IMGPROXY_ENFORCE_WEBP", "webp", start: ""), .listMember("IMGPROXY_ENFORCE_AVIF", "avif", start: ""),
                    .listMember("IMGPROXY_ENFORCE_JXL", "jxl", start: ""),
                ],
                "formats (webp, avif, jxl) given to clients that accept them even over the URL's format (default none)"
            ) { $0.output.enforcedFormats = $1 },
            .boolean(
                "--strip-color-profile", "IMAGO_STRIP_COLOR_PROFILE", peers: [.boolean("IMGPROXY_STRIP_COLOR_PROFILE")],
                "convert images to sRGB and drop their colour profile unless a URL says scp:0", \.output.stripsColorProfile),
            .boolean(
                "--keep-hdr", "IMAGO_KEEP_HDR", peers: [.boolean("IMGPROXY_PRESERVE_HDR")],
                "keep an HDR photo's gain map in JPEG answers (Ultra HDR) unless a URL says preserve_hdr:0", \.output.keepsGainMap),
            .boolean(
                "--strip-metadata", "IMAGO_STRIP_METADATA", peers: [.boolean("IMGPROXY_STRIP_METADATA"), .thumborNot("PRESERVE_EXIF_INFO")],
                "drop EXIF and XMP unless a URL says sm:0", \.output.stripsMetadata),
            .boolean(
                "--keep-copyright", "IMAGO_KEEP_COPYRIGHT", peers: [.boolean("IMGPROXY_KEEP_COPYRIGHT")],
                "keep the copyright and author when metadata is dropped", \.output.keepsCopyright),
            .number(
                "--watermark-opacity", "IMAGO_WATERMARK_OPACITY", 0...1, peers: [.same("IMGPROXY_WATERMARK_OPACITY")],
                "the watermark's opacity, multiplied by each URL's (0–1; default 1)"
            ) {
                $0.output.watermarkOpacity = $1
            },
            .integer(
                "--max-result-dimension", "IMAGO_MAX_RESULT_DIMENSION", 0...65_535, peers: [.same("IMGPROXY_MAX_RESULT_DIMENSION")],
                "longest side of a result; larger ones are scaled down", note: ": none", \.output.maxResultDimension),
            .boolean(
                "--linear-resize", "IMAGO_LINEAR_RESIZE", peers: [.boolean("IMGPROXY_USE_LINEAR_COLORSPACE")],
                "resize in linear light, the sRGB curve undone and redone (a fine pattern keeps its brightness; slower)", showsTrueFalse: true,
                \.output.resizesInLinearLight),
            .boolean(
                "--whole-decode", "IMAGO_WHOLE_DECODE", peers: [.boolean("IMGPROXY_DISABLE_SHRINK_ON_LOAD")],
                "decode JPEG and WebP sources whole, never reduced to what the result needs (slower, more memory)", showsTrueFalse: true,
                \.output.decodesWhole),
            .boolean(
                "--return-attachment", "IMAGO_RETURN_ATTACHMENT", peers: [.boolean("IMGPROXY_RETURN_ATTACHMENT")],
                "Content-Disposition: attachment unless a URL says att:0", \.returnsAttachment),
            .boolean(
                "--etag", "IMAGO_ETAG", peers: [.boolean("IMGPROXY_USE_ETAG")],
                "imgproxy's answers carry an ETag and answer If-None-Match with 304", \.sendsETag),
            .boolean(
                "--last-modified", "IMAGO_LAST_MODIFIED", peers: [.boolean("IMGPROXY_USE_LAST_MODIFIED")],
                "imgproxy's answers carry their source's Last-Modified and answer If-Modified-Since with 304", \.sendsLastModified),
            ServerSetting(
                "--last-modified-buster", "IMAGO_LAST_MODIFIED_BUSTER", peers: [.same("IMGPROXY_LAST_MODIFIED_BUSTER")],
                "an RFC 3339 instant: an older Last-Modified is answered as it (change it with settings that change images; default none)"
            ) { configuration, text, _ throws(ServerError) in
                guard let instant = ServerSetting.rfc3339(text) else {
                    throw ServerSetting.invalid("--last-modified-buster", "IMAGO_LAST_MODIFIED_BUSTER")
                }
                configuration.lastModifiedBuster = instant
            },
            .boolean(
                "--cache-control-passthrough", "IMAGO_CACHE_CONTROL_PASSTHROUGH", peers: [.boolean("IMGPROXY_CACHE_CONTROL_PASSTHROUGH")],
                "imgproxy's answers reuse their source's Cache-Control, else its Expires, in place of --cache-control", \.passesSourceCacheControl),
            .text(
                "--etag-buster", "IMAGO_ETAG_BUSTER", peers: [.same("IMGPROXY_ETAG_BUSTER")],
                "text mixed into every ETag and stored variant's key: change it to make every ETag new (default none)"
            ) { $0.output.etagBuster = $1 },
            .boolean(
                "--client-hints", "IMAGO_CLIENT_HINTS", peers: [.boolean("IMGPROXY_ENABLE_CLIENT_HINTS")],
                "a request's Sec-CH-DPR/DPR and Sec-CH-Width/Width are its dpr and width unless the URL sets them; answers Vary with them",
                \.takesClientHints),
            .boolean(
                "--debug-headers", "IMAGO_DEBUG_HEADERS", peers: [.boolean("IMGPROXY_ENABLE_DEBUG_HEADERS")],
                "imgproxy's answers carry X-Origin-Content-Length, X-Origin-Width, X-Origin-Height, X-Result-Width and X-Result-Height",
                \.sendsDebugHeaders),
            .boolean(
                "--set-canonical-header", "IMAGO_SET_CANONICAL_HEADER", peers: [.boolean("IMGPROXY_SET_CANONICAL_HEADER")],
                "imgproxy's answers say Link: <source>; rel=\"canonical\" for an http(s) source", \.setsCanonicalHeader),
            ServerSetting(
                "--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS", peers: [.same("IMGPROXY_SKIP_PROCESSING_FORMATS")],
                "source formats sent as they came when asked in their own format (e.g. gif,svg)"
            ) { configuration, text, _ throws(ServerError) in
                for name in ServerSetting.list(text) {
                    guard let format = ImageFormatName.canonical(name) else {
                        throw ServerSetting.invalid("--skip-processing-formats", "IMAGO_SKIP_PROCESSING_FORMATS")
                    }
                    configuration.output.skipProcessingFormats.append(format)
                }
            },
            ServerSetting(
                "--preferred-formats", "IMAGO_PREFERRED_FORMATS", peers: [.same("IMGPROXY_PREFERRED_FORMATS")],
                "formats a source keeps when none is asked, else the first that fits (default jpeg,png,webp,gif,avif)"
            ) { configuration, text, _ throws(ServerError) in
                let names = ServerSetting.list(text)
                let formats = names.compactMap(OutputFormat.init(extension:)).filter { $0.isEncoded }
                guard formats.count == names.count, !formats.isEmpty else {
                    throw ServerSetting.invalid("--preferred-formats", "IMAGO_PREFERRED_FORMATS")
                }
                configuration.output.preferredFormats = formats
            },
            .boolean(
                "--jpeg-progressive", "IMAGO_JPEG_PROGRESSIVE", peers: [.boolean("IMGPROXY_JPEG_PROGRESSIVE"), .thumbor("PROGRESSIVE_JPEG")],
                "write progressive JPEG", \.output.encoding.progressive),
            .boolean(
                "--jpeg-optimize-coding", "IMAGO_JPEG_OPTIMIZE_CODING", "JPEG Huffman tables computed per image, as libvips' optimize_coding",
                \.output.encoding.optimizesCoding),
            .boolean(
                "--png-interlaced", "IMAGO_PNG_INTERLACED", peers: [.boolean("IMGPROXY_PNG_INTERLACED")], "write Adam7-interlaced PNG",
                \.output.encoding.interlaced),
            .boolean(
                "--png-quantize", "IMAGO_PNG_QUANTIZE", peers: [.boolean("IMGPROXY_PNG_QUANTIZE")],
                "write PNG with a palette (median cut) unless it has partial transparency (default false)"
            ) { $0.output.encoding.paletteColors = $1 ? ($0.output.encoding.paletteColors ?? 256) : nil },
            .integer(
                "--png-quantization-colors", "IMAGO_PNG_QUANTIZATION_COLORS", 2...256, peers: [.same("IMGPROXY_PNG_QUANTIZATION_COLORS")],
                "most palette entries with --png-quantize (default 256)"
            ) { configuration, colors in
                if configuration.output.encoding.paletteColors != nil { configuration.output.encoding.paletteColors = colors }
            },
            ServerSetting(
                "--webp-compression", "IMAGO_WEBP_COMPRESSION", peers: [.same("IMGPROXY_WEBP_COMPRESSION")],
                "lossy (default), near_lossless or lossless"
            ) { configuration, text, _ throws(ServerError) in
                switch text.lowercased() {
                case "lossy": (configuration.output.encoding.lossless, configuration.output.encoding.nearLossless) = (false, false)
                case "near_lossless": (configuration.output.encoding.lossless, configuration.output.encoding.nearLossless) = (false, true)
                case "lossless": (configuration.output.encoding.lossless, configuration.output.encoding.nearLossless) = (true, false)
                default: throw ServerSetting.invalid("--webp-compression", "IMAGO_WEBP_COMPRESSION")
                }
            },
            .boolean(
                "--webp-smart-subsample", "IMAGO_WEBP_SMART_SUBSAMPLE", peers: [.boolean("IMGPROXY_WEBP_SMART_SUBSAMPLE")],
                "WebP's sharper RGB→YUV conversion: coloured edges kept, slower", \.output.encoding.smartSubsample),
            .integer(
                "--webp-effort", "IMAGO_WEBP_EFFORT", 1...6, peers: [.same("IMGPROXY_WEBP_EFFORT")], "WebP effort 1–6, slower and smaller",
                \.output.encoding.webpEffort),
            ServerSetting(
                "--webp-preset", "IMAGO_WEBP_PRESET", peers: [.same("IMGPROXY_WEBP_PRESET")], "default, photo, picture, drawing, icon or text (default default)"
            ) { configuration, text, _ throws(ServerError) in
                guard let preset = WebPEncoder.Preset(rawValue: text.lowercased()) else { throw ServerSetting.invalid("--webp-preset", "IMAGO_WEBP_PRESET") }
                configuration.output.encoding.webpPreset = preset
            },
            .integer(
                "--avif-speed", "IMAGO_AVIF_SPEED", 0...9, peers: [.same("IMGPROXY_AVIF_SPEED")], "AVIF speed 0 (slowest, smallest) to 9",
                \.output.encoding.speed),
            .integer(
                "--jxl-effort", "IMAGO_JXL_EFFORT", 1...9, peers: [.same("IMGPROXY_JXL_EFFORT")], "JPEG XL effort 1–9, slower and smaller",
                \.output.encoding.effort),
            .boolean(
                "--always-rasterize-svg", "IMAGO_ALWAYS_RASTERIZE_SVG", peers: [.boolean("IMGPROXY_ALWAYS_RASTERIZE_SVG")],
                "rasterise SVG sources when the URL names no format", note: ": sanitised SVG", \.output.alwaysRasterizesSVG),
            .boolean(
                "--enforce-thumbnail", "IMAGO_ENFORCE_THUMBNAIL", peers: [.boolean("IMGPROXY_ENFORCE_THUMBNAIL")],
                "a HEIF's largest embedded thumbnail is the source when it has one (a URL's enforce_thumbnail wins)", showsTrueFalse: true,
                \.output.enforcesThumbnail),
            .boolean(
                "--sanitize-svg", "IMAGO_SANITIZE_SVG", peers: [.boolean("IMGPROXY_SANITIZE_SVG")],
                "remove scripts, event handlers and outside references from SVG passed through (false passes it as it came: only for SVG you trust)",
                showsTrueFalse: true, \.output.sanitizesSVG),
            .boolean(
                "--video-thumbnails", "IMAGO_VIDEO_THUMBNAILS", peers: [.boolean("IMGPROXY_ENABLE_VIDEO_THUMBNAILS")],
                "read video sources (MP4, QuickTime, WebM, Matroska, AVI) for a frame through FFmpeg", showsTrueFalse: true, \.output.video.enabled),
            .number(
                "--video-thumbnail-second", "IMAGO_VIDEO_THUMBNAIL_SECOND", 0...86_400, peers: [.same("IMGPROXY_VIDEO_THUMBNAIL_SECOND")],
                "the second whose frame a video's picture is when the URL names none (the last frame of a shorter video)", \.output.video.second),
            .boolean(
                "--video-thumbnail-keyframes", "IMAGO_VIDEO_THUMBNAIL_KEYFRAMES", peers: [.boolean("IMGPROXY_VIDEO_THUMBNAIL_KEYFRAMES")],
                "take the keyframe at or before that second (faster, up to a keyframe interval earlier)", showsTrueFalse: true,
                \.output.video.keyframesOnly),
            .boolean(
                "--video-thumbnail-tile-auto-keyframes", "IMAGO_VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES",
                peers: [.boolean("IMGPROXY_VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES")],
                "take keyframes only for a sprite (vtt) whose step is longer than the video's keyframe interval", showsTrueFalse: true,
                \.output.video.tileAutoKeyframes),
            .integer(
                "--video-probe-size", "IMAGO_VIDEO_PROBE_SIZE", 2_048...1_000_000_000, peers: [.same("IMGPROXY_VIDEO_THUMBNAIL_PROBE_SIZE")],
                "bytes FFmpeg reads to find a video's streams", \.output.video.probeBytes),
            .integer(
                "--video-max-analyze-duration", "IMAGO_VIDEO_MAX_ANALYZE_DURATION", 0...3_600_000,
                peers: [.same("IMGPROXY_VIDEO_THUMBNAIL_MAX_ANALYZE_DURATION")],
                "milliseconds of a video's streams FFmpeg analyses, 0 for its own heuristic", \.output.video.maxAnalyzeMilliseconds),
            .boolean(
                "--raw-formats", "IMAGO_RAW_FORMATS", peers: [.boolean("IMGPROXY_ENABLE_RAW_FORMATS")],
                "read camera RAW sources (DNG, CR2, CR3, NEF, ARW, ORF, RAF, RW2, PEF, SRW) through LibRaw: the embedded preview when large enough, else a demosaic",
                showsTrueFalse: true, \.output.readsRAW),
            .boolean(
                "--pdf", "IMAGO_PDF", peers: [],
                "read PDF sources: a page rendered at the size asked by Poppler's pdftoppm (poppler-utils) in a child process killed at the deadline",
                showsTrueFalse: true, \.output.readsPDF),
            .boolean(
                "--pdf-no-background", "IMAGO_PDF_NO_BACKGROUND", peers: [.boolean("IMGPROXY_PDF_NO_BACKGROUND")],
                "render PDF pages with no background (transparent where the page paints nothing) instead of on white", showsTrueFalse: true,
                \.output.pdfTransparentBackground),
        ]
}
