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
            "--health-check-path", "IMAGO_HEALTH_CHECK_PATH", peers: [.same("IMGPROXY_HEALTH_CHECK_PATH")], "another path answered like /health (default none)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.healthCheckPath = try ServerSetting.plainPath(text, "--health-check-path", "IMAGO_HEALTH_CHECK_PATH")
        },
        .boolean(
            "--gallery", "IMAGO_GALLERY", switch: true,
            "serve /gallery: the local root's images with srcset and ThumbHash placeholders", showsTrueFalse: true, \.servesGallery),
    ]
}
