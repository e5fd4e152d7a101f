/// imgproxy's open-source environment variables, for docs/SERVER.md's "moving from imgproxy"
/// table: each is read by a setting's peers (``ServerSetting/peers``) or is not supported, with why.
enum ImgproxyVariables {
    /// Every variable imgproxy's open-source code reads (imgproxy 4.0 at eef3b312: `git grep` of
    /// its Go sources for `"IMGPROXY_…"`, and its Dockerfile's `IMGPROXY_MALLOC`), in the order of
    /// imgproxy-docs' options.mdx, the ones it leaves out beside their group. options.mdx also lists
    /// Pro variables without saying so; those are in ``notInOpenSource`` when Imago reads them.
    static let openSource: [String] = [
        "IMGPROXY_ENV_LOCAL_FILE_PATH", "IMGPROXY_ENV_AWS_SECRET_ID", "IMGPROXY_ENV_AWS_SECRET_VERSION_ID",
        "IMGPROXY_ENV_AWS_SECRET_VERSION_STAGE", "IMGPROXY_ENV_AWS_SECRET_REGION", "IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH",
        "IMGPROXY_ENV_AWS_SSM_PARAMETERS_REGION", "IMGPROXY_ENV_GCP_KEY", "IMGPROXY_ENV_GCP_SECRET_ID",
        "IMGPROXY_ENV_GCP_SECRET_VERSION_ID", "IMGPROXY_ENV_GCP_SECRET_PROJECT_ID", "IMGPROXY_KEY", "IMGPROXY_SALT",
        "IMGPROXY_SIGNATURE_SIZE", "IMGPROXY_TRUSTED_SIGNATURES", "IMGPROXY_BIND", "IMGPROXY_NETWORK", "IMGPROXY_TIMEOUT",
        "IMGPROXY_GRACEFUL_STOP_TIMEOUT", "IMGPROXY_READ_REQUEST_TIMEOUT", "IMGPROXY_WRITE_RESPONSE_TIMEOUT", "IMGPROXY_KEEP_ALIVE_TIMEOUT",
        "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT", "IMGPROXY_DOWNLOAD_TIMEOUT", "IMGPROXY_WORKERS", "IMGPROXY_REQUESTS_QUEUE_SIZE",
        "IMGPROXY_MAX_CLIENTS", "IMGPROXY_TTL", "IMGPROXY_CACHE_CONTROL_PASSTHROUGH", "IMGPROXY_SET_CANONICAL_HEADER",
        "IMGPROXY_SO_REUSEPORT", "IMGPROXY_PATH_PREFIX", "IMGPROXY_USER_AGENT", "IMGPROXY_USE_ETAG", "IMGPROXY_ETAG_BUSTER",
        "IMGPROXY_USE_LAST_MODIFIED", "IMGPROXY_LAST_MODIFIED_BUSTER", "IMGPROXY_ENABLE_DEBUG_HEADERS", "IMGPROXY_MAX_SRC_RESOLUTION",
        "IMGPROXY_MAX_SRC_FILE_SIZE", "IMGPROXY_MAX_ANIMATION_FRAMES", "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION",
        "IMGPROXY_MAX_RESULT_DIMENSION", "IMGPROXY_ALLOWED_PROCESSING_OPTIONS", "IMGPROXY_MAX_REDIRECTS", "IMGPROXY_SECRET",
        "IMGPROXY_ALLOW_ORIGIN", "IMGPROXY_ALLOWED_SOURCES", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES",
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES", "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES", "IMGPROXY_PNG_UNLIMITED",
        "IMGPROXY_TIFF_UNLIMITED", "IMGPROXY_SVG_UNLIMITED", "IMGPROXY_SANITIZE_SVG", "IMGPROXY_IGNORE_SSL_VERIFICATION",
        "IMGPROXY_ALLOW_SECURITY_OPTIONS", "IMGPROXY_COOKIE_PASSTHROUGH", "IMGPROXY_COOKIE_BASE_URL", "IMGPROXY_COOKIE_PASSTHROUGH_ALL",
        "IMGPROXY_QUALITY", "IMGPROXY_FORMAT_QUALITY", "IMGPROXY_JPEG_PROGRESSIVE", "IMGPROXY_PNG_INTERLACED", "IMGPROXY_PNG_QUANTIZE",
        "IMGPROXY_PNG_QUANTIZATION_COLORS", "IMGPROXY_WEBP_EFFORT", "IMGPROXY_WEBP_PRESET", "IMGPROXY_AVIF_SPEED", "IMGPROXY_JXL_EFFORT",
        "IMGPROXY_ALWAYS_RASTERIZE_SVG", "IMGPROXY_AUTO_WEBP", "IMGPROXY_ENFORCE_WEBP", "IMGPROXY_AUTO_AVIF", "IMGPROXY_ENFORCE_AVIF",
        "IMGPROXY_AUTO_JXL", "IMGPROXY_ENFORCE_JXL", "IMGPROXY_PREFERRED_FORMATS", "IMGPROXY_SKIP_PROCESSING_FORMATS",
        "IMGPROXY_PRESERVE_HDR", "IMGPROXY_ENABLE_CLIENT_HINTS", "IMGPROXY_WATERMARK_DATA", "IMGPROXY_WATERMARK_PATH",
        "IMGPROXY_WATERMARK_URL", "IMGPROXY_WATERMARK_OPACITY", "IMGPROXY_FALLBACK_IMAGE_DATA", "IMGPROXY_FALLBACK_IMAGE_PATH",
        "IMGPROXY_FALLBACK_IMAGE_URL", "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE", "IMGPROXY_FALLBACK_IMAGE_TTL", "IMGPROXY_PRESETS",
        "IMGPROXY_PRESETS_SEPARATOR", "IMGPROXY_PRESETS_PATH", "IMGPROXY_ONLY_PRESETS", "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR",
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT", "IMGPROXY_USE_S3", "IMGPROXY_S3_REGION", "IMGPROXY_S3_ENDPOINT",
        "IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE", "IMGPROXY_S3_USE_DECRYPTION_CLIENT", "IMGPROXY_S3_ASSUME_ROLE_ARN",
        "IMGPROXY_S3_ASSUME_ROLE_EXTERNAL_ID", "IMGPROXY_S3_ALLOWED_BUCKETS", "IMGPROXY_S3_DENIED_BUCKETS", "IMGPROXY_S3_ACCESS_POINTS",
        "IMGPROXY_USE_GCS", "IMGPROXY_GCS_KEY", "IMGPROXY_GCS_ENDPOINT", "IMGPROXY_GCS_ALLOWED_BUCKETS", "IMGPROXY_GCS_DENIED_BUCKETS",
        "IMGPROXY_USE_ABS", "IMGPROXY_ABS_NAME", "IMGPROXY_ABS_KEY", "IMGPROXY_ABS_ENDPOINT", "IMGPROXY_ABS_ALLOWED_BUCKETS",
        "IMGPROXY_ABS_DENIED_BUCKETS", "IMGPROXY_USE_SWIFT", "IMGPROXY_SWIFT_USERNAME", "IMGPROXY_SWIFT_API_KEY", "IMGPROXY_SWIFT_AUTH_URL",
        "IMGPROXY_SWIFT_AUTH_VERSION", "IMGPROXY_SWIFT_TENANT", "IMGPROXY_SWIFT_DOMAIN", "IMGPROXY_SWIFT_ALLOWED_BUCKETS",
        "IMGPROXY_SWIFT_DENIED_BUCKETS", "IMGPROXY_SWIFT_CONNECT_TIMEOUT_SECONDS", "IMGPROXY_SWIFT_TIMEOUT_SECONDS", "IMGPROXY_BASE_URL",
        "IMGPROXY_URL_REPLACEMENTS", "IMGPROXY_BASE64_URL_INCLUDES_FILENAME", "IMGPROXY_NEW_RELIC_KEY", "IMGPROXY_NEW_RELIC_APP_NAME",
        "IMGPROXY_NEW_RELIC_LABELS", "IMGPROXY_NEW_RELIC_PROPAGATE_EXTERNAL", "IMGPROXY_PROMETHEUS_BIND", "IMGPROXY_PROMETHEUS_NAMESPACE",
        "IMGPROXY_DATADOG_ENABLE", "IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS", "IMGPROXY_DATADOG_PROPAGATE_EXTERNAL",
        "IMGPROXY_OPEN_TELEMETRY_ENABLE", "IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS", "IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS",
        "IMGPROXY_OPEN_TELEMETRY_SERVER_CERT", "IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT", "IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY",
        "IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR", "IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL", "IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME",
        "IMGPROXY_CLOUD_WATCH_SERVICE_NAME", "IMGPROXY_CLOUD_WATCH_NAMESPACE", "IMGPROXY_CLOUD_WATCH_REGION",
        "IMGPROXY_REPORT_DOWNLOADING_ERRORS", "IMGPROXY_REPORT_IO_ERRORS", "IMGPROXY_DEVELOPMENT_ERRORS_MODE", "IMGPROXY_BUGSNAG_KEY",
        "IMGPROXY_BUGSNAG_STAGE", "IMGPROXY_HONEYBADGER_KEY", "IMGPROXY_HONEYBADGER_ENV", "IMGPROXY_SENTRY_DSN",
        "IMGPROXY_SENTRY_ENVIRONMENT", "IMGPROXY_SENTRY_RELEASE", "IMGPROXY_AIRBRAKE_PROJECT_ID", "IMGPROXY_AIRBRAKE_PROJECT_KEY",
        "IMGPROXY_AIRBRAKE_ENVIRONMENT", "IMGPROXY_LOG_FORMAT", "IMGPROXY_LOG_LEVEL", "IMGPROXY_SYSLOG_ENABLE", "IMGPROXY_SYSLOG_LEVEL",
        "IMGPROXY_SYSLOG_NETWORK", "IMGPROXY_SYSLOG_ADDRESS", "IMGPROXY_SYSLOG_TAG", "IMGPROXY_FREE_MEMORY_INTERVAL", "IMGPROXY_MALLOC",
        "IMGPROXY_LOG_MEM_STATS", "IMGPROXY_PPROF_BIND", "IMGPROXY_VIPS_CACHE_TRACE", "IMGPROXY_VIPS_LEAK_CHECK",
        "IMGPROXY_ARGUMENTS_SEPARATOR", "IMGPROXY_USE_LINEAR_COLORSPACE", "IMGPROXY_DISABLE_SHRINK_ON_LOAD", "IMGPROXY_STRIP_METADATA",
        "IMGPROXY_KEEP_COPYRIGHT", "IMGPROXY_STRIP_COLOR_PROFILE", "IMGPROXY_AUTO_ROTATE", "IMGPROXY_ENFORCE_THUMBNAIL",
        "IMGPROXY_HEALTH_CHECK_PATH", "IMGPROXY_FAIL_ON_DEPRECATION",
    ]

    /// Variables Imago reads that imgproxy's open-source code does not, with whose they are.
    static let notInOpenSource: [String: String] = [
        "IMGPROXY_ALLOWED_INFO_OPTIONS": "Pro", "IMGPROXY_INFO_ONLY_PRESETS": "Pro", "IMGPROXY_RETURN_ATTACHMENT": "imgproxy 3",
        "IMGPROXY_CACHE_USE": "imgproxy 4 Pro's cache", "IMGPROXY_CACHE_BUCKET": "imgproxy 4 Pro's cache",
        "IMGPROXY_CACHE_PATH_PREFIX": "imgproxy 4 Pro's cache", "IMGPROXY_CACHE_FS_ROOT": "imgproxy 4 Pro's cache",
        "IMGPROXY_CACHE_S3_ENDPOINT": "imgproxy 4 Pro's cache", "IMGPROXY_CACHE_S3_REGION": "imgproxy 4 Pro's cache",
        "IMGPROXY_CACHE_GCS_ENDPOINT": "imgproxy 4 Pro's cache", "IMGPROXY_CACHE_GCS_KEY": "imgproxy 4 Pro's cache",
    ]

    /// Why an unsupported variable is not needed, or what to use instead.
    static let notes: [String: String] = [
        "IMGPROXY_PNG_UNLIMITED":
            "Imago never limits how many chunks a PNG has; their bytes stay bounded (libspng's chunk limits, 64 MiB), as every C library's allocations are: lifting that is what a hostile file wants",
        "IMGPROXY_SVG_UNLIMITED":
            "librsvg's XML limits (10 MB of text, a million elements) are kept: its parser's memory is outside Imago's decode budget, so lifting them is what a hostile SVG wants",
        "IMGPROXY_TIFF_UNLIMITED":
            "libtiff's allocations stay bounded by the decode budget (its single-allocation limit): lifting that is what a hostile file wants",
        "IMGPROXY_S3_USE_DECRYPTION_CLIENT":
            "client-side encrypted objects are not decrypted: no AWS S3 Encryption Client (Go's or Java's SDK) runs here to write objects in its envelope format, and a decryption proved only against an encryption of Imago's own would prove nothing",
        "IMGPROXY_S3_ACCESS_POINTS":
            "no S3 access points: an access point's ARN is reached at its own host name (name-account.s3-accesspoint.region…), which moto, the S3 server the tests run, does not answer; name the bucket itself in s3:// URLs",
        "IMGPROXY_USE_ABS": "no Azure Blob Storage sources: no Azure API server runs in the tests (Azurite is an npm package)",
        "IMGPROXY_SWIFT_TENANT": "Swift sign-in is v1 auth only (a tenant is Keystone v2's: no Keystone server runs here to prove it against)",
        "IMGPROXY_SWIFT_DOMAIN": "Swift sign-in is v1 auth only (a domain is Keystone v3's: no Keystone server runs here to prove it against)",
        "IMGPROXY_PRESERVE_HDR": "16-bit output is not written yet",
        "IMGPROXY_NEW_RELIC_KEY":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_NEW_RELIC_APP_NAME":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_NEW_RELIC_LABELS":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_NEW_RELIC_PROPAGATE_EXTERNAL":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_DATADOG_ENABLE":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_DATADOG_ENABLE_ADDITIONAL_METRICS":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_DATADOG_PROPAGATE_EXTERNAL":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_CLOUD_WATCH_SERVICE_NAME":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_CLOUD_WATCH_NAMESPACE":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_CLOUD_WATCH_REGION":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_REPORT_DOWNLOADING_ERRORS":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_BUGSNAG_KEY":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_BUGSNAG_STAGE":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_HONEYBADGER_KEY":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_HONEYBADGER_ENV":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_SENTRY_DSN":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_SENTRY_ENVIRONMENT":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_SENTRY_RELEASE":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_AIRBRAKE_PROJECT_ID":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_AIRBRAKE_PROJECT_KEY":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_AIRBRAKE_ENVIRONMENT":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_ABS_NAME": "no Azure Blob Storage sources (see IMGPROXY_USE_ABS)",
        "IMGPROXY_ABS_KEY": "no Azure Blob Storage sources (see IMGPROXY_USE_ABS)",
        "IMGPROXY_ABS_ENDPOINT": "no Azure Blob Storage sources (see IMGPROXY_USE_ABS)",
        "IMGPROXY_ABS_ALLOWED_BUCKETS": "no Azure Blob Storage sources (see IMGPROXY_USE_ABS)",
        "IMGPROXY_ABS_DENIED_BUCKETS": "no Azure Blob Storage sources (see IMGPROXY_USE_ABS)",
        "IMGPROXY_MALLOC":
            "a setting of imgproxy's Go runtime and buffer pools, which Imago has not: its memory is bounded by `--memory-bytes`, the decode budget and the container's limit",
        "IMGPROXY_ENV_GCP_KEY": gcpSecrets, "IMGPROXY_ENV_GCP_SECRET_ID": gcpSecrets, "IMGPROXY_ENV_GCP_SECRET_VERSION_ID": gcpSecrets,
        "IMGPROXY_ENV_GCP_SECRET_PROJECT_ID": gcpSecrets,
        "IMGPROXY_REPORT_IO_ERRORS":
            "an error-reporting or monitoring service is not built in: send `--open-telemetry` spans, metrics and logs to an OpenTelemetry collector, which exports to it",
        "IMGPROXY_OPEN_TELEMETRY_LOGGER_NAME":
            "swift-otel 1.6 names every log record's instrumentation scope `swift-otel` and has no setting for it; the records carry `service.name` (`OTEL_SERVICE_NAME`)",
        "IMGPROXY_PPROF_BIND": "Go's profiler, which Imago has not: profile it with `perf` (docs/BENCHMARKS.md)",
        "IMGPROXY_VIPS_CACHE_TRACE": "a libvips debugging switch: Imago has no libvips",
        "IMGPROXY_VIPS_LEAK_CHECK": "a libvips debugging switch: Imago has no libvips",
        "IMGPROXY_FAIL_ON_DEPRECATION":
            "imgproxy 4 deprecates no variable (its `logger.Deprecated` is called nowhere), and Imago reads none that imgproxy 3 deprecated: nothing could fail",
    ]

    private static let gcpSecrets =
        "no Google Secret Manager: no Secret Manager API server runs here to prove it against; put the variables in `IMGPROXY_ENV_LOCAL_FILE_PATH`'s file or in AWS Secrets Manager"
}
