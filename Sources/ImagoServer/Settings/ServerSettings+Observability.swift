import Foundation
import Imago
import Logging

extension ServerSettings {
    /// imgproxy's `IMGPROXY_LOG_LEVEL` values, and swift-log's names for the same levels.
    static let logLevels: [String: Logger.Level] = [
        "error": .error, "warn": .warning, "warning": .warning, "info": .info, "debug": .debug, "trace": .trace,
    ]

    /// What the server shows besides images: health and the gallery.
    static let observability: [ServerSetting] = [
        ServerSetting(
            "--log-level", "IMAGO_LOG_LEVEL", peers: [.same("IMGPROXY_LOG_LEVEL")],
            "least severe message logged: error, warn, info (default: a line per answer) or debug"
        ) { configuration, text, _ throws(ServerError) in
            guard let level = ServerSettings.logLevels[text.lowercased()] else { throw ServerSetting.invalid("--log-level", "IMAGO_LOG_LEVEL") }
            configuration.logLevel = level
        },
        ServerSetting(
            "--log-format", "IMAGO_LOG_FORMAT", peers: [.same("IMGPROXY_LOG_FORMAT")],
            "pretty (swift-log's lines, the default), structured (key=value), json, or gcp (JSON with Google Cloud's severity and message)"
        ) { configuration, text, _ throws(ServerError) in
            guard let format = LogFormat(rawValue: text.lowercased()) else { throw ServerSetting.invalid("--log-format", "IMAGO_LOG_FORMAT") }
            configuration.logFormat = format
        },
        .boolean("--syslog", "IMAGO_SYSLOG", peers: [.boolean("IMGPROXY_SYSLOG_ENABLE")], "lines also go to a syslog daemon") { $0.syslog.enabled = $1 },
        ServerSetting(
            "--syslog-level", "IMAGO_SYSLOG_LEVEL", peers: [.same("IMGPROXY_SYSLOG_LEVEL")],
            "least severe line sent to syslog: debug, info (default), warn, error or crit"
        ) { configuration, text, _ throws(ServerError) in
            let levels: [String: Logger.Level] = ["debug": .debug, "info": .info, "warn": .warning, "error": .error, "crit": .critical]
            guard let level = levels[text.lowercased()] else { throw ServerSetting.invalid("--syslog-level", "IMAGO_SYSLOG_LEVEL") }
            configuration.syslog.level = level
        },
        ServerSetting(
            "--syslog-network", "IMAGO_SYSLOG_NETWORK", peers: [.same("IMGPROXY_SYSLOG_NETWORK")],
            "udp, tcp, unix or unixgram (default none: the local daemon's socket)"
        ) { configuration, text, _ throws(ServerError) in
            guard ["", "udp", "tcp", "unix", "unixgram"].contains(text.lowercased()) else {
                throw ServerSetting.invalid("--syslog-network", "IMAGO_SYSLOG_NETWORK")
            }
            configuration.syslog.network = text.lowercased()
        },
        .text(
            "--syslog-address", "IMAGO_SYSLOG_ADDRESS", peers: [.same("IMGPROXY_SYSLOG_ADDRESS")],
            "host:port, or a socket's path, of the syslog daemon (needed with --syslog-network)"
        ) { $0.syslog.address = $1 },
        .text("--syslog-tag", "IMAGO_SYSLOG_TAG", peers: [.same("IMGPROXY_SYSLOG_TAG")], "the tag of syslog lines (default imago)") { $0.syslog.tag = $1 },
        ServerSetting(
            "--prometheus-namespace", "IMAGO_PROMETHEUS_NAMESPACE", peers: [.same("IMGPROXY_PROMETHEUS_NAMESPACE")],
            "what every metric's name in /metrics starts with, then _ (letters, digits and _; default none)"
        ) { configuration, text, _ throws(ServerError) in
            let valid = text.utf8.enumerated().allSatisfy { index, byte in
                byte == 0x5F || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || (index > 0 && byte >= 0x30 && byte <= 0x39)
            }
            guard !text.isEmpty, text.utf8.count <= 64, valid else {
                throw ServerSetting.invalid("--prometheus-namespace", "IMAGO_PROMETHEUS_NAMESPACE")
            }
            configuration.prometheusNamespace = text
        },
        .seconds(
            "--trim-interval", "IMAGO_TRIM_INTERVAL", peers: [.same("IMGPROXY_FREE_MEMORY_INTERVAL")],
            "seconds between giving freed heap memory past 16 MB back to the system (malloc_trim)", \.trimInterval),
        .boolean(
            "--log-memory-stats", "IMAGO_LOG_MEMORY_STATS", peers: [.boolean("IMGPROXY_LOG_MEM_STATS")],
            "log the process's memory (resident, heap, what the service keeps) at debug level every --trim-interval", showsTrueFalse: true,
            \.logsMemoryStats),
        ServerSetting(
            "--metrics-listen", "IMAGO_METRICS_LISTEN", peers: [.same("IMGPROXY_PROMETHEUS_BIND")],
            "address and port to serve /metrics on instead of beside the images (default: beside them)"
        ) { configuration, text, _ throws(ServerError) in
            guard let address = HostAndPort(text) else { throw ServerSetting.invalid("--metrics-listen", "IMAGO_METRICS_LISTEN") }
            configuration.metricsAddress = address
        },
        .boolean(
            "--open-telemetry", "IMAGO_OPEN_TELEMETRY", peers: [.boolean("IMGPROXY_OPEN_TELEMETRY_ENABLE")],
            "a span per request, with the fetch, decode, processing and encode as its children, sent over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318)"
        ) { $0.telemetry.traces = $1 },
        .boolean(
            "--open-telemetry-metrics", "IMAGO_OPEN_TELEMETRY_METRICS", peers: [.boolean("IMGPROXY_OPEN_TELEMETRY_ENABLE_METRICS")],
            "/metrics' metrics also sent as OTLP metrics (every OTEL_METRIC_EXPORT_INTERVAL ms, default 60000)"
        ) { $0.telemetry.metrics = $1 },
        .boolean(
            "--open-telemetry-logs", "IMAGO_OPEN_TELEMETRY_LOGS", peers: [.boolean("IMGPROXY_OPEN_TELEMETRY_ENABLE_LOGS")],
            "every log line also sent as an OTLP log record"
        ) { $0.telemetry.logs = $1 },
        .boolean(
            "--open-telemetry-propagate-external", "IMAGO_OPEN_TELEMETRY_PROPAGATE_EXTERNAL", peers: [.boolean("IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL")],
            "source fetches carry the request's W3C traceparent"
        ) { $0.telemetry.propagatesToSources = $1 },
        ServerSetting(
            "--open-telemetry-trace-id-generator", "IMAGO_OPEN_TELEMETRY_TRACE_ID_GENERATOR", peers: [.same("IMGPROXY_OPEN_TELEMETRY_TRACE_ID_GENERATOR")],
            "random, the only one: trace ids are W3C's random ones (which AWS X-Ray also takes); xray is refused"
        ) { _, text, _ throws(ServerError) in
            guard text.lowercased() == "random" else {
                throw ServerSetting.invalid("--open-telemetry-trace-id-generator", "IMAGO_OPEN_TELEMETRY_TRACE_ID_GENERATOR")
            }
        },
        .text(
            "--open-telemetry-server-cert", "IMAGO_OPEN_TELEMETRY_SERVER_CERT", peers: [.same("IMGPROXY_OPEN_TELEMETRY_SERVER_CERT")],
            "the collector's certificate authority, PEM (\\n for line breaks)"
        ) { $0.telemetry.serverCertificate = $1 },
        .text(
            "--open-telemetry-client-cert", "IMAGO_OPEN_TELEMETRY_CLIENT_CERT", peers: [.same("IMGPROXY_OPEN_TELEMETRY_CLIENT_CERT")],
            "the certificate Imago shows a collector that asks (mTLS), PEM"
        ) { $0.telemetry.clientCertificate = $1 },
        .text(
            "--open-telemetry-client-key", "IMAGO_OPEN_TELEMETRY_CLIENT_KEY", peers: [.same("IMGPROXY_OPEN_TELEMETRY_CLIENT_KEY")],
            "the key of --open-telemetry-client-cert, PEM"
        ) { $0.telemetry.clientKey = $1 },
        ServerSetting(
            "--health-check-path", "IMAGO_HEALTH_CHECK_PATH", peers: [.same("IMGPROXY_HEALTH_CHECK_PATH")], "another path answered like /health (default none)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.healthCheckPath = try ServerSetting.plainPath(text, "--health-check-path", "IMAGO_HEALTH_CHECK_PATH")
        },
        .boolean(
            "--gallery", "IMAGO_GALLERY", switch: true,
            "serve /gallery: the local root's images with srcset and ThumbHash placeholders", showsTrueFalse: true, \.servesGallery),
    ]
}
