import Foundation
import HTTPTypes
import Imago
import Testing

@testable import ImagoServer

/// The settings that change an answer's bytes are one value, ``OutputSettings``, whose identity
/// is part of every stored variant's key and ETag: each of its members flipped gives a new key and
/// ETag, a restart with another setting makes its variants anew, and, the other way round, no server
/// setting changes an answer's bytes without changing its key and ETag.
@Suite("output identity: keys and ETags derived from every setting that changes bytes")
struct OutputIdentityTests {
    typealias Reference = ColorReference

    /// A local root with a tagged photo (Adobe RGB, EXIF GPS, copyright, orientation), a picture
    /// with alpha, an SVG and a watermark; removed by the caller.
    static func sources() async throws -> URL {
        let root = try temporaryDirectory()
        let photo = try await Reference.tagged(Reference.adobeRGB, "photo.jpg", in: root)
        try await runTool(
            "/usr/bin/exiftool",
            ["-q", "-overwrite_original", "-Copyright=(c) Jane Doe", "-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-Orientation#=6", photo.path])
        try await runTool(
            Reference.convert,
            [try Reference.source(in: root).path, "-alpha", "set", "-channel", "A", "-evaluate", "set", "60%", root.appendingPathComponent("alpha.png").path])
        try await runTool(Reference.convert, ["-size", "24x16", "xc:#c03020", root.appendingPathComponent("mark.png").path])
        let other = root.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: root.appendingPathComponent("mark.png"), to: other.appendingPathComponent("photo.jpg"))
        try Data(##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="#208040"/></svg>"##.utf8)
            .write(to: root.appendingPathComponent("image.svg"))
        return root
    }

    /// URLs of both dialects that the settings can change: negotiated and named formats, alpha,
    /// metadata, a watermark, a byte bound, smart and object gravities, SVG, thumbor's crops,
    /// filters, smart, formats and `meta/`.
    static let paths = [
        "/insecure/rs:fit:64:64/plain/local:///photo.jpg",
        "/insecure/rs:fit:64:64/plain/local:///photo.jpg@jpg",
        "/insecure/rs:fit:300:300/plain/local:///alpha.png",
        "/insecure/rs:fit:32:32/plain/local:///photo.jpg",
        "/insecure/rs:fit:48:48/wm:1:ce/plain/local:///photo.jpg@png",
        "/insecure/rs:fill:40:40/g:sm/mb:900/plain/local:///photo.jpg@webp",
        "/insecure/rs:fill:40:40/g:obj:face/plain/local:///photo.jpg@png",
        "/insecure/plain/local:///image.svg",
        "/insecure/plain/local:///alpha.png@png",
        "/thumbor/unsafe/64x64/photo.jpg",
        "/thumbor/unsafe/300x0/alpha.png",
        "/thumbor/unsafe/40x40/smart/filters:fill(red)/photo.jpg",
        "/thumbor/unsafe/64x0/filters:format(webp)/alpha.png",
        "/thumbor/unsafe/meta/64x64/photo.jpg",
    ]
    static let accept = "image/avif,image/webp,image/jxl,image/*,*/*;q=0.8"
    /// The paths asked for without `Accept` (the source's format, or the preferred ones).
    static let withoutAccept: Set<String> = ["/insecure/rs:fit:32:32/plain/local:///photo.jpg", "/insecure/plain/local:///alpha.png@png"]

    /// The settings every service here starts from: the sources' root, thumbor beside imgproxy.
    static func baseValues(_ root: URL) -> [String: String] {
        ["IMAGO_LOCAL_ROOT": root.path, "IMAGO_THUMBOR_PATH": "/thumbor"]
    }

    /// Waits for `service`'s work and writes its disk cache's queued entries. (Not `shutDown()`,
    /// which empties the process's colour caches under the tests running beside these.)
    static func finish(_ service: ImageService) async {
        await service.untilNoWork()
        service.pipeline.configuration.diskCache?.flush()
    }

    struct Answer: Equatable {
        var status: Int
        var etag: String?
        var body: Data
    }

    static func answers(_ service: ImageService, _ paths: [String] = paths) async -> [Answer] {
        var answers: [Answer] = []
        for path in paths {
            let response = await service.respond(to: ServiceRequest(path: path, accept: withoutAccept.contains(path) ? nil : accept))
            answers.append(Answer(status: response.status, etag: response.headerFields[HTTPField.Name("ETag")!], body: Data(buffer: response.body)))
        }
        return answers
    }

    /// A change to every member of the output group, by its name (a property wrapper's with `_`).
    static func groupFlips(watermark: Data) -> [String: @Sendable (inout OutputSettings) -> Void] {
        [
            "defaultQuality": { $0.defaultQuality = 50 },
            "formatQuality": { $0.formatQuality["webp"] = 50 },
            "autoQuality": { $0.autoQuality.method = .ssimulacra2 },
            "encoding": { $0.encoding.progressive = true },
            "autoFormats": { $0.autoFormats = [.avif] },
            "enforcedFormats": { $0.enforcedFormats = [.webp] },
            "preferredFormats": { $0.preferredFormats = [.png] },
            "alwaysRasterizesSVG": { $0.alwaysRasterizesSVG = true },
            "stripsColorProfile": { $0.stripsColorProfile = false },
            "keepsGainMap": { $0.keepsGainMap = false },
            "stripsMetadata": { $0.stripsMetadata = false },
            "keepsCopyright": { $0.keepsCopyright = false },
            "watermark": { $0.watermark = .data(watermark) },
            "watermarkOpacity": { $0.watermarkOpacity = 0.5 },
            "maxResultDimension": { $0.maxResultDimension = 32 },
            "decodesWhole": { $0.decodesWhole = true },
            "resizesInLinearLight": { $0.resizesInLinearLight = true },
            "sanitizesSVG": { $0.sanitizesSVG = false },
            "enforcesThumbnail": { $0.enforcesThumbnail = true },
            "video": { $0.video.second = 2 },
            "readsRAW": { $0.readsRAW = true },
            "readsPDF": { $0.readsPDF = true },
            "pdfTransparentBackground": { $0.pdfTransparentBackground = true },
            "etagBuster": { $0.etagBuster = "2" },
            "skipProcessingFormats": { $0.skipProcessingFormats = ["png"] },
            "thumborAutoWebP": { $0.thumborAutoWebP = true },
            "thumborRespectsOrientation": { $0.thumborRespectsOrientation = true },
            "thumborMaxWidth": { $0.thumborMaxWidth = 50 },
            "thumborMaxHeight": { $0.thumborMaxHeight = 50 },
            "_thumborFilters": { $0.thumborFilters.remove("fill") },
            "thumborAutoPNGToJPG": { $0.thumborAutoPNGToJPG = true },
            "thumborFormatQuality": { $0.thumborFormatQuality[.webp] = 50 },
        ]
    }

    @Test("every member of the output group flipped gives a new identity, stored key and ETag")
    func everyMember() async throws {
        let root = try await Self.sources()
        defer { try? FileManager.default.removeItem(at: root) }
        let flips = Self.groupFlips(watermark: try Data(contentsOf: root.appendingPathComponent("mark.png")))
        let members = Mirror(reflecting: OutputSettings()).children.compactMap(\.label)
        #expect(Set(members) == Set(flips.keys), "a member of OutputSettings without a flip here, or a flip of none")

        let base = try ServerSettings.configuration(Self.baseValues(root)).configuration
        let thumbor = ServiceRequest(path: "/thumbor/unsafe/64x64/photo.jpg")
        func facts(_ configuration: ServerConfiguration) async throws -> (identity: String, key: String, etag: String?) {
            let service = try ImageService(configuration: configuration)
            let plan = try service.thumborPlan(
                "/unsafe/64x64/photo.jpg", Negotiation(thumbor, auto: configuration.output.autoFormats, enforced: configuration.output.enforcedFormats))
            let answer = await service.respond(to: thumbor)
            #expect(answer.status == 200)
            await Self.finish(service)
            return (configuration.output.identity, service.diskKey(for: plan), answer.headerFields[HTTPField.Name("ETag")!])
        }
        let original = try await facts(base)
        for (member, flip) in flips.sorted(by: { $0.key < $1.key }) {
            var configuration = base
            flip(&configuration.output)
            #expect(configuration.output != base.output, "\(member)")
            let flipped = try await facts(configuration)
            #expect(flipped.identity != original.identity, "\(member): identity")
            #expect(flipped.key != original.key, "\(member): stored key")
            #expect(flipped.etag != nil && flipped.etag != original.etag, "\(member): ETag")
        }
    }

    @Test("the identity is the same for equal settings however their sets and tables were built")
    func identityIsStable() {
        var one = OutputSettings()
        var other = OutputSettings()
        one.thumborFilters = []
        for name in ThumborFilter.builtinNames.sorted() { one.thumborFilters.insert(name) }
        other.thumborFilters.reserveCapacity(4096)
        for name in ThumborFilter.builtinNames.sorted().reversed() { other.thumborFilters.insert(name) }
        for (format, quality) in [("webp", 61), ("jpeg", 62), ("avif", 63), ("jxl", 64)] { one.formatQuality[format] = quality }
        for (format, quality) in [("jxl", 64), ("avif", 63), ("jpeg", 62), ("webp", 61)] { other.formatQuality[format] = quality }
        one.thumborFormatQuality = [.webp: 50, .avif: 40, .jpeg: 30]
        other.thumborFormatQuality = [.jpeg: 30, .avif: 40, .webp: 50]
        #expect(one == other)
        #expect(one.identity == other.identity)
        #expect(one.identity != OutputSettings().identity)
    }

    @Test("a restart with --strip-metadata true on the same cache: the answer is made anew, without EXIF, with a new ETag")
    func restartStripsMetadata() async throws {
        let root = try await Self.sources()
        let cache = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: root)
            try? FileManager.default.removeItem(at: cache)
        }
        let path = "/insecure/rs:fit:64:64/plain/local:///photo.jpg@jpg"
        func serve(stripMetadata: String, cache: URL?) async throws -> (etag: String?, body: Data) {
            var values = Self.baseValues(root)
            values["IMAGO_STRIP_METADATA"] = stripMetadata
            if let cache { values["IMAGO_CACHE_DIR"] = cache.path }
            let service = try ImageService(configuration: try ServerSettings.configuration(values).configuration)
            let answer = await service.respond(to: ServiceRequest(path: path))
            #expect(answer.status == 200)
            await Self.finish(service)
            return (answer.headerFields[HTTPField.Name("ETag")!], Data(buffer: answer.body))
        }
        func gps(_ data: Data) async throws -> String {
            let file = root.appendingPathComponent("answer-\(UUID().uuidString).jpg")
            try data.write(to: file)
            let output = try await runProcess(URL(fileURLWithPath: "/usr/bin/exiftool"), ["-s3", "-n", "-GPSLatitude", file.path]).output
            return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let leaking = try await serve(stripMetadata: "false", cache: cache)
        #expect(try await gps(leaking.body) == "48.85")
        // The stored variant is on disk: the same settings after a restart are answered from it.
        let again = try await serve(stripMetadata: "false", cache: cache)
        #expect(again.etag == leaking.etag && again.body == leaking.body)

        let stripped = try await serve(stripMetadata: "true", cache: cache)
        #expect(try await gps(stripped.body) == "")
        #expect(stripped.etag != nil && stripped.etag != leaking.etag)
        let fresh = try await serve(stripMetadata: "true", cache: nil)
        #expect(stripped.body == fresh.body && stripped.etag == fresh.etag)
    }

    /// A value for every server setting other than its default, by variable; each must be one the
    /// setting accepts.
    static func settingFlips(_ root: URL) async throws -> [String: String] {
        let watermark = root.appendingPathComponent("mark.png")
        let thumborConfig = root.appendingPathComponent("thumbor.conf")
        try Data("QUALITY = 41\nRESPECT_ORIENTATION = True\n".utf8).write(to: thumborConfig)
        let key = try await runProcess(URL(fileURLWithPath: "/usr/bin/openssl"), ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]).output
        let account = try JSONSerialization.data(withJSONObject: [
            "client_email": "imago@example.iam.gserviceaccount.com", "private_key": String(decoding: key, as: UTF8.self),
        ])
        let cascades = "/usr/share/opencv4/haarcascades"
        let presets = root.appendingPathComponent("presets.conf")
        try Data("# flipped\ndefault=q:31\n".utf8).write(to: presets)
        let infoPresets = root.appendingPathComponent("info-presets.conf")
        try Data("default=size:0\n".utf8).write(to: infoPresets)
        return [
            "IMAGO_LISTEN": "127.0.0.1:18080",
            "IMAGO_KEY": "736563726574",
            "IMAGO_SALT": "68656c6c6f",
            "IMAGO_PRESETS": "default=q:30",
            "IMAGO_ALLOWED_HOSTS": "example.com",
            "IMAGO_ALLOW_PRIVATE_ADDRESSES": "true",
            "IMAGO_ALLOW_LOOPBACK_ADDRESSES": "true",
            "IMAGO_ALLOW_LINK_LOCAL_ADDRESSES": "true",
            "IMAGO_ALLOW_PRIVATE_NETWORK_ADDRESSES": "true",
            "IMAGO_ALLOWED_SOURCES": "local:///photo",
            "IMAGO_SOURCE_BASE_URL": "local:///",
            "IMAGO_SOURCE_URL_REPLACEMENTS": "local:///alpha=local:///photo",
            "IMAGO_SECRET": "hush",
            "IMAGO_ALLOW_ORIGIN": "*",
            "IMAGO_HEALTH_CHECK_PATH": "/alive",
            "IMAGO_LOG_LEVEL": "warn",
            "IMAGO_SIGNATURE_SIZE": "8",
            "IMAGO_USER_AGENT": "Other/1.0",
            "IMAGO_MAX_REDIRECTS": "1",
            "IMAGO_IGNORE_CERTIFICATE_ERRORS": "true",
            "IMAGO_LOCAL_ROOT": root.appendingPathComponent("other").path,
            "IMAGO_PROXY": "http://127.0.0.1:3128",
            "IMAGO_NO_PROXY": "example.com",
            "IMAGO_USE_S3": "true",
            "IMAGO_S3_REGION": "eu-west-3",
            "IMAGO_S3_ENDPOINT": "127.0.0.1:9000",
            "IMAGO_S3_ENDPOINT_USE_PATH_STYLE": "false",
            "IMAGO_S3_ALLOWED_BUCKETS": "photos",
            "IMAGO_S3_DENIED_BUCKETS": "secrets",
            "IMAGO_USE_GCS": "true",
            "IMAGO_GCS_KEY": String(decoding: account, as: UTF8.self),
            "IMAGO_GCS_ENDPOINT": "127.0.0.1:9023",
            "IMAGO_GCS_ALLOWED_BUCKETS": "photos",
            "IMAGO_GCS_DENIED_BUCKETS": "secrets",
            "IMAGO_USE_SWIFT": "true",
            "IMAGO_SWIFT_AUTH_URL": "http://127.0.0.1:8081/auth/v1.0",
            "IMAGO_SWIFT_USERNAME": "test:tester",
            "IMAGO_SWIFT_API_KEY": "testing",
            "IMAGO_SWIFT_AUTH_VERSION": "1",
            "IMAGO_SWIFT_ALLOWED_CONTAINERS": "photos",
            "IMAGO_SWIFT_DENIED_CONTAINERS": "secrets",
            "IMAGO_GALLERY": "true",
            "IMAGO_CACHE_DIR": "",  // the test's own: every flip runs on the baseline's cache
            "IMAGO_CACHE_CONTROL": "max-age=60",
            "IMAGO_QUALITY": "35",
            "IMAGO_FORMAT_QUALITY": "jpeg=40,webp=40,png=40",
            "IMAGO_AUTOQUALITY_METHOD": "size",
            "IMAGO_AUTOQUALITY_TARGET": "700",
            "IMAGO_AUTOQUALITY_MIN": "20",
            "IMAGO_AUTOQUALITY_MAX": "30",
            "IMAGO_AUTOQUALITY_FORMAT_MIN": "jpeg=10",
            "IMAGO_AUTOQUALITY_FORMAT_MAX": "jpeg=20",
            "IMAGO_AUTOQUALITY_ALLOWED_ERROR": "5",
            "IMAGO_AUTOQUALITY_MAX_RESOLUTION": "100",
            "IMAGO_AVIF": "true",
            "IMAGO_AUTO_FORMATS": "jxl,avif",
            "IMAGO_ENFORCE_FORMATS": "webp",
            "IMAGO_MAX_SOURCE_BYTES": "2000",
            "IMAGO_MAX_SOURCE_PIXELS": "10000",
            "IMAGO_MAX_FRAMES": "1",
            "IMAGO_SOURCE_TIMEOUT": "3",
            "IMAGO_TIMEOUT": "25",
            "IMAGO_WORKERS": "1",
            "IMAGO_REQUESTS_QUEUE_SIZE": "3",
            "IMAGO_MAX_CLIENTS": "64",
            "IMAGO_MEMORY_BYTES": "1048576",
            "IMAGO_STRIP_COLOR_PROFILE": "false",
            "IMAGO_KEEP_HDR": "false",
            "IMAGO_STRIP_METADATA": "false",
            "IMAGO_KEEP_COPYRIGHT": "false",
            "IMAGO_WATERMARK_PATH": watermark.path,
            "IMAGO_WATERMARK_URL": "http://127.0.0.1:1/mark.png",
            "IMAGO_WATERMARK_DATA": try Data(contentsOf: watermark).base64EncodedString(),
            "IMAGO_WATERMARK_OPACITY": "0.5",
            "IMAGO_MAX_RESULT_DIMENSION": "32",
            "IMAGO_RETURN_ATTACHMENT": "true",
            "IMAGO_SKIP_PROCESSING_FORMATS": "png,svg",
            "IMAGO_PREFERRED_FORMATS": "png",
            "IMAGO_JPEG_PROGRESSIVE": "true",
            "IMAGO_JPEG_OPTIMIZE_CODING": "false",
            "IMAGO_PNG_INTERLACED": "true",
            "IMAGO_PNG_QUANTIZE": "true",
            "IMAGO_PNG_QUANTIZATION_COLORS": "16",
            "IMAGO_WEBP_COMPRESSION": "lossless",
            "IMAGO_WEBP_SMART_SUBSAMPLE": "true",
            "IMAGO_WEBP_EFFORT": "1",
            "IMAGO_WEBP_PRESET": "drawing",
            "IMAGO_AVIF_SPEED": "2",
            "IMAGO_JXL_EFFORT": "7",
            "IMAGO_ALWAYS_RASTERIZE_SVG": "true",
            "IMAGO_DIALECT": "thumbor",
            "IMAGO_PATH_PREFIX": "/img",
            "IMAGO_THUMBOR_CONFIG": thumborConfig.path,
            "IMAGO_THUMBOR_PATH": "/thumbor-elsewhere",
            "IMAGO_TRUSTED_SIGNATURES": "insecure",
            "IMAGO_THUMBOR_KEY": "thumbor-secret",
            "IMAGO_ALLOW_UNSAFE_URL": "false",
            "IMAGO_AUTO_WEBP": "true",
            "IMAGO_THUMBOR_MAX_AGE": "60",
            "IMAGO_RESPECT_ORIENTATION": "true",
            "IMAGO_THUMBOR_MAX_WIDTH": "50",
            "IMAGO_THUMBOR_MAX_HEIGHT": "30",
            "IMAGO_THUMBOR_FILTERS": "format,quality",
            "IMAGO_THUMBOR_AUTO_PNG_TO_JPG": "true",
            "IMAGO_THUMBOR_WEBP_QUALITY": "20",
            "IMAGO_THUMBOR_AVIF_QUALITY": "20",
            "IMAGO_THUMBOR_ALLOWED_SOURCES": "example.com",
            "IMAGO_THUMBOR_HEALTHCHECK_ROUTE": "/alive",
            "IMAGO_THUMBOR_DETECTORS": "feature_detector",
            "IMAGO_THUMBOR_CASCADE_DIR": root.path,
            "IMAGO_THUMBOR_FACE_CASCADE": "\(cascades)/haarcascade_frontalface_default.xml",
            "IMAGO_THUMBOR_PROFILE_CASCADE": "\(cascades)/haarcascade_frontalface_default.xml",
            "IMAGO_THUMBOR_GLASSES_CASCADE": "\(cascades)/haarcascade_frontalface_default.xml",
            "IMAGO_FACE_CASCADE": "\(cascades)/haarcascade_frontalface_default.xml",
            "IMAGO_SMART_CROP_FACE_DETECTION": "true",
            "IMAGO_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP": "false",
            "IMAGO_REQUEST_HEAD_TIMEOUT": "3",
            "IMAGO_KEEP_ALIVE_TIMEOUT": "0",
            "IMAGO_WRITE_RESPONSE_TIMEOUT": "3",
            "IMAGO_SOURCE_KEEP_ALIVE_TIMEOUT": "5",
            "IMAGO_GRACEFUL_STOP_TIMEOUT": "1",
            "IMAGO_PRESETS_SEPARATOR": ";",
            "IMAGO_PRESETS_PATH": presets.path,
            "IMAGO_INFO_PRESETS": "default=size:0",
            "IMAGO_INFO_PRESETS_PATH": infoPresets.path,
            "IMAGO_ONLY_PRESETS": "true",
            "IMAGO_INFO_ONLY_PRESETS": "true",
            "IMAGO_ALLOWED_PROCESSING_OPTIONS": "w",
            "IMAGO_ALLOWED_INFO_OPTIONS": "size",
            "IMAGO_FALLBACK_IMAGE_PATH": watermark.path,
            "IMAGO_FALLBACK_IMAGE_URL": "http://127.0.0.1:1/mark.png",
            "IMAGO_FALLBACK_IMAGE_DATA": try Data(contentsOf: watermark).base64EncodedString(),
            "IMAGO_FALLBACK_IMAGE_STATUS": "404",
            "IMAGO_FALLBACK_IMAGE_TTL": "60",
            "IMAGO_MAX_FRAME_PIXELS": "100",
            "IMAGO_ETAG": "false",
            "IMAGO_ETAG_BUSTER": "2",
            "IMAGO_SET_CANONICAL_HEADER": "true",
            "IMAGO_DEBUG_HEADERS": "true",
            "IMAGO_CLIENT_HINTS": "true",
            "IMAGO_BASE64_URL_INCLUDES_FILENAME": "true",
            "IMAGO_AUTO_ROTATE": "false",
            "IMAGO_ALLOW_SECURITY_OPTIONS": "false",
            "IMAGO_DEVELOPMENT_ERRORS": "true",
            "IMAGO_COOKIE_PASSTHROUGH": "true",
            "IMAGO_COOKIE_BASE_URL": "https://example.com/",
            "IMAGO_COOKIE_PASSTHROUGH_ALL": "true",
            "IMAGO_LOG_FORMAT": "json",
            "IMAGO_SYSLOG": "true",
            "IMAGO_SYSLOG_LEVEL": "error",
            "IMAGO_SYSLOG_NETWORK": "udp",
            "IMAGO_SYSLOG_ADDRESS": "127.0.0.1:514",
            "IMAGO_SYSLOG_TAG": "other",
            "IMAGO_SOURCE_URL_QUERY_SEPARATOR": "|",
            "IMAGO_ARGUMENTS_SEPARATOR": ",",
            "IMAGO_LAST_MODIFIED": "true",
            "IMAGO_LAST_MODIFIED_BUSTER": "2026-06-01T00:00:00Z",
            "IMAGO_CACHE_CONTROL_PASSTHROUGH": "true",
            "IMAGO_PROMETHEUS_NAMESPACE": "edge",
            "IMAGO_WHOLE_DECODE": "true",
            "IMAGO_LINEAR_RESIZE": "true",
            "IMAGO_SWIFT_CONNECT_TIMEOUT": "3",
            "IMAGO_SWIFT_TIMEOUT": "5",
            "IMAGO_SANITIZE_SVG": "false",
            "IMAGO_ENFORCE_THUMBNAIL": "true",
            "IMAGO_VIDEO_THUMBNAILS": "true",
            "IMAGO_VIDEO_THUMBNAIL_SECOND": "3",
            "IMAGO_VIDEO_THUMBNAIL_KEYFRAMES": "true",
            "IMAGO_VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES": "true",
            "IMAGO_VIDEO_PROBE_SIZE": "100000",
            "IMAGO_VIDEO_MAX_ANALYZE_DURATION": "500",
            "IMAGO_RAW_FORMATS": "true",
            "IMAGO_PDF": "true",
            "IMAGO_PDF_NO_BACKGROUND": "true",
            "IMAGO_TRIM_INTERVAL": "10",
            "IMAGO_LOG_MEMORY_STATS": "true",
            "IMAGO_S3_ASSUME_ROLE": "arn:aws:iam::123456789012:role/reader",
            "IMAGO_S3_ASSUME_ROLE_EXTERNAL_ID": "imago",
            "IMAGO_METRICS_LISTEN": "127.0.0.1:9464",
            // A store of made variants (its parts flipped beside a folder store): a cache, never the bytes.
            "IMAGO_RESULT_STORAGE": "fs",
            "IMAGO_RESULT_STORAGE_FOLDER": root.appendingPathComponent("results").path,
            "IMAGO_RESULT_STORAGE_BUCKET": "fleet",
            "IMAGO_RESULT_STORAGE_PREFIX": "variants",
            "IMAGO_RESULT_STORAGE_ENDPOINT": "127.0.0.1:9000",
            "IMAGO_RESULT_STORAGE_REGION": "eu-west-3",
            "IMAGO_RESULT_STORAGE_TTL": "3600",
            "IMAGO_RESULT_STORAGE_TIMEOUT": "1",
            "IMAGO_RESULT_STORAGE_UNSAFE": "false",
            "IMAGO_RESULT_STORAGE_KEY":
                #"{"client_email":"a@b.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"}"#,
            // A store of originals, likewise (named by thumbor's module, which takes a folder).
            "IMAGO_SOURCE_STORAGE": "thumbor.storages.file_storage",
            "IMAGO_SOURCE_STORAGE_FOLDER": root.appendingPathComponent("originals").path,
            "IMAGO_SOURCE_STORAGE_BUCKET": "fleet",
            "IMAGO_SOURCE_STORAGE_PREFIX": "sources",
            "IMAGO_SOURCE_STORAGE_ENDPOINT": "127.0.0.1:9000",
            "IMAGO_SOURCE_STORAGE_REGION": "eu-west-3",
            "IMAGO_SOURCE_STORAGE_TTL": "3600",
            "IMAGO_SOURCE_STORAGE_TIMEOUT": "1",
            "IMAGO_SOURCE_STORAGE_KEY":
                #"{"client_email":"a@b.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"}"#,
            // Where more variables come from: read before the settings (ConfigurationSources),
            // set nothing themselves.
            "IMAGO_ENV_FILE": "/etc/imago.env",
            "IMAGO_ENV_AWS_SECRET": "imago/prod",
            "IMAGO_ENV_AWS_SECRET_VERSION": "1",
            "IMAGO_ENV_AWS_SECRET_STAGE": "AWSPREVIOUS",
            "IMAGO_ENV_AWS_SECRET_REGION": "eu-west-1",
            "IMAGO_ENV_AWS_SSM_PATH": "/imago",
            "IMAGO_ENV_AWS_SSM_REGION": "eu-west-1",
            "IMAGO_NETWORK": "tcp4",
            "IMAGO_SO_REUSEPORT": "true",
            "IMAGO_OPEN_TELEMETRY": "true",
            "IMAGO_OPEN_TELEMETRY_METRICS": "true",
            "IMAGO_OPEN_TELEMETRY_LOGS": "true",
            "IMAGO_OPEN_TELEMETRY_PROPAGATE_EXTERNAL": "true",
            "IMAGO_OPEN_TELEMETRY_TRACE_ID_GENERATOR": "random",
            "IMAGO_OPEN_TELEMETRY_SERVER_CERT": "-----BEGIN CERTIFICATE-----",
            "IMAGO_OPEN_TELEMETRY_CLIENT_CERT": "-----BEGIN CERTIFICATE-----",
            "IMAGO_OPEN_TELEMETRY_CLIENT_KEY": "-----BEGIN PRIVATE KEY-----",
        ]
    }

    @Test("every server setting flipped over both dialects' URLs: where the bytes change, the key and ETag change, and no stored answer is served stale")
    func everySetting() async throws {
        let root = try await Self.sources()
        let cache = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: root)
            try? FileManager.default.removeItem(at: cache)
        }
        let flips = try await Self.settingFlips(root)
        #expect(Set(ServerSettings.all.map(\.variable)) == Set(flips.keys), "a setting without a flip here, or a flip of none")
        var base = Self.baseValues(root)
        base["IMAGO_CACHE_DIR"] = cache.path
        let baseline = try ImageService(configuration: try ServerSettings.configuration(base).configuration)
        let expected = await Self.answers(baseline)
        await Self.finish(baseline)
        #expect(expected.filter { $0.status == 200 }.count == Self.paths.count, "\(expected.map(\.status))")

        var changed: [String] = []
        for setting in ServerSettings.all where setting.variable != "IMAGO_CACHE_DIR" {
            var values = base
            values[setting.variable] = flips[setting.variable]
            // Keys and salts are read as pairs: one alone stops the server.
            if ["IMAGO_KEY", "IMAGO_SALT"].contains(setting.variable) {
                (values["IMAGO_KEY"], values["IMAGO_SALT"]) = (flips["IMAGO_KEY"], flips["IMAGO_SALT"])
            }
            // A result storage's parts are read with the store they belong to.
            if setting.variable.hasPrefix("IMAGO_RESULT_STORAGE") {
                (values["IMAGO_RESULT_STORAGE"], values["IMAGO_RESULT_STORAGE_FOLDER"]) = ("fs", flips["IMAGO_RESULT_STORAGE_FOLDER"])
            }
            if setting.variable.hasPrefix("IMAGO_SOURCE_STORAGE") {
                (values["IMAGO_SOURCE_STORAGE"], values["IMAGO_SOURCE_STORAGE_FOLDER"]) =
                    (flips["IMAGO_SOURCE_STORAGE"], flips["IMAGO_SOURCE_STORAGE_FOLDER"])
            }
            // As the command reads them: a thumbor.conf's settings merged in.
            let configuration = try ServerSettings.configuration(try ServerSettings.values(arguments: [], environment: values)).configuration
            // Made from nothing, then, where that differs from the baseline, on the baseline's
            // stored variants: the same answers (where nothing differs, nothing can be stale).
            var fresh = configuration
            fresh.cacheDirectory = nil
            let fromNothing = try ImageService(configuration: fresh)
            let made = await Self.answers(fromNothing, Self.paths)
            await Self.finish(fromNothing)
            let differing = Self.paths.indices.filter { made[$0].status != expected[$0].status || made[$0].body != expected[$0].body }
            guard !differing.isEmpty else { continue }
            let onStored = try ImageService(configuration: configuration)
            let stored = await Self.answers(onStored, differing.map { Self.paths[$0] })
            await Self.finish(onStored)
            for (storedIndex, index) in differing.enumerated() {
                let path = Self.paths[index]
                #expect(stored[storedIndex] == made[index], "\(setting.flag) on \(path): a stale answer")
                guard made[index].status == 200, expected[index].status == 200 else { continue }
                changed.append("\(setting.flag) \(path)")
                #expect(made[index].etag != expected[index].etag, "\(setting.flag) changes \(path)'s bytes but not its ETag")
            }
        }
        // The URLs are chosen so that the output settings do change them.
        for flag in [
            "--quality", "--strip-metadata", "--strip-color-profile", "--keep-copyright", "--max-result-dimension", "--preferred-formats",
            "--always-rasterize-svg", "--respect-orientation", "--thumbor-max-width", "--watermark-path",
        ] {
            #expect(changed.contains { $0.hasPrefix(flag + " ") }, "\(flag) changes none of the answers")
        }
    }
}
