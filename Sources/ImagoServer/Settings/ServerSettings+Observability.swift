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
            "--health-check-path", "IMAGO_HEALTH_CHECK_PATH", peers: [.same("IMGPROXY_HEALTH_CHECK_PATH")], "another path answered like /health (default none)"
        ) { configuration, text, _ throws(ServerError) in
            configuration.healthCheckPath = try ServerSetting.plainPath(text, "--health-check-path", "IMAGO_HEALTH_CHECK_PATH")
        },
        .boolean(
            "--gallery", "IMAGO_GALLERY", switch: true,
            "serve /gallery: the local root's images with srcset and ThumbHash placeholders", showsTrueFalse: true, \.servesGallery),
    ]
}
