import Foundation
import Imago

extension ServerSettings {
    /// What the server shows besides images: health and the gallery.
    static let observability: [ServerSetting] = [
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
