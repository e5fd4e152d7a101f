import Foundation
import Imago

extension ServerSettings {
    /// thumbor's own (thumbor.conf's names): its signatures, output rules, limits, filters and detectors.
    static let thumbor: [ServerSetting] =
        // thumbor's signer: the key, and whether unsafe URLs are answered (by default only without one).
        ServerSetting.compound(
            .part("--thumbor-key", "IMAGO_THUMBOR_KEY", peers: [.thumbor("SECURITY_KEY")], "thumbor's SECURITY_KEY, for signed thumbor URLs; default none"),
            .part(
                "--allow-unsafe-url", "IMAGO_ALLOW_UNSAFE_URL", peers: [.thumbor("ALLOW_UNSAFE_URL")],
                "answer thumbor's /unsafe/ URLs (true/false; default true without a thumbor key, false with one)")
        ) { configuration, texts, _ throws(ServerError) in
            let allowsUnsafe = try texts[1].map { text throws(ServerError) in try ServerSetting.truth(text, "--allow-unsafe-url", "IMAGO_ALLOW_UNSAFE_URL") }
            configuration.thumborSigner = ThumborSigner(key: texts[0], allowsUnsafe: allowsUnsafe)
        }
        + [
            .text(
                "--thumbor-config", "IMAGO_THUMBOR_CONFIG",
                "thumbor.conf to read thumbor's own settings from (SECURITY_KEY, QUALITY, …; docs/SERVER.md); thumbor's URLs then answer at the root unless --dialect or --thumbor-path says otherwise"
            ) { _, _ in },
            .text("--thumbor-path", "IMAGO_THUMBOR_PATH", "path thumbor's URLs are under, beside imgproxy's in one process (default none)") {
                $0.thumborPath = $1
            },
            .boolean(
                "--auto-webp", "IMAGO_AUTO_WEBP", peers: [.thumbor("AUTO_WEBP")],
                "thumbor URLs without a format give WebP to clients that accept it", showsTrueFalse: true, \.output.thumborAutoWebP),
            .integer(
                "--thumbor-max-age", "IMAGO_THUMBOR_MAX_AGE", 0...(1 << 31), peers: [.thumbor("MAX_AGE")],
                "thumbor's MAX_AGE: seconds thumbor answers without max_age() may be cached, as max-age=N,public (0: no Cache-Control); default the server's"
            ) { $0.thumborMaxAge = $1 },
            .boolean(
                "--respect-orientation", "IMAGO_RESPECT_ORIENTATION", peers: [.thumbor("RESPECT_ORIENTATION")],
                "thumbor URLs turn images by their EXIF orientation", note: ", as thumbor", showsTrueFalse: true, \.output.thumborRespectsOrientation),
            .integer(
                "--thumbor-max-width", "IMAGO_THUMBOR_MAX_WIDTH", 0...(1 << 20), peers: [.thumbor("MAX_WIDTH")],
                "thumbor's MAX_WIDTH: the widest box thumbor URLs get, and the width a wider source is scaled to on load", note: ": none",
                \.output.thumborMaxWidth),
            .integer(
                "--thumbor-max-height", "IMAGO_THUMBOR_MAX_HEIGHT", 0...(1 << 20), peers: [.thumbor("MAX_HEIGHT")],
                "thumbor's MAX_HEIGHT: as --thumbor-max-width, for heights", note: ": none", \.output.thumborMaxHeight),
            .text(
                "--thumbor-filters", "IMAGO_THUMBOR_FILTERS", peers: [.thumbor("FILTERS")],
                "thumbor's FILTERS: the filters thumbor URLs may use, comma-separated names or module paths (default thumbor's BUILTIN_FILTERS, without autojpg)"
            ) { $0.output.thumborFilters = Set(ServerSetting.list($1).map(ThumborFilter.name(ofModule:))) },
            .boolean(
                "--thumbor-auto-png-to-jpg", "IMAGO_THUMBOR_AUTO_PNG_TO_JPG", peers: [.thumbor("AUTO_PNG_TO_JPG")],
                "thumbor's AUTO_PNG_TO_JPG: a PNG without transparency answered as JPEG unless autojpg() says not", showsTrueFalse: true,
                \.output.thumborAutoPNGToJPG),
            .integer(
                "--thumbor-webp-quality", "IMAGO_THUMBOR_WEBP_QUALITY", 1...100, peers: [.thumbor("WEBP_QUALITY")],
                "thumbor's WEBP_QUALITY: quality of WebP answers whose URL sets none (default --quality)"
            ) { $0.output.thumborFormatQuality[.webp] = $1 },
            .integer(
                "--thumbor-avif-quality", "IMAGO_THUMBOR_AVIF_QUALITY", 1...100, peers: [.thumbor("AVIF_QUALITY")],
                "thumbor's AVIF_QUALITY: quality of AVIF answers whose URL sets none (default --quality)"
            ) { $0.output.thumborFormatQuality[.avif] = $1 },
            .text(
                "--thumbor-allowed-sources", "IMAGO_THUMBOR_ALLOWED_SOURCES", peers: [.thumbor("ALLOWED_SOURCES")],
                "thumbor's ALLOWED_SOURCES: hosts thumbor URLs' images may come from, comma-separated, each a name or a regular expression of the whole host (default any)"
            ) { $0.thumborAllowedSources = ServerSetting.list($1) },
            ServerSetting(
                "--thumbor-healthcheck-route", "IMAGO_THUMBOR_HEALTHCHECK_ROUTE", peers: [.thumbor("HEALTHCHECK_ROUTE")],
                "thumbor's HEALTHCHECK_ROUTE, answered WORKING under thumbor's mount (default /healthcheck)"
            ) { configuration, route, _ throws(ServerError) in
                // thumbor's default is the expression `/healthcheck/?`: the optional final slash is implied.
                let path = route.hasSuffix("/?") ? String(route.dropLast(2)) : route
                configuration.thumborHealthcheckRoute = try ServerSetting.plainPath(path, "--thumbor-healthcheck-route", "IMAGO_THUMBOR_HEALTHCHECK_ROUTE")
            },
            ServerSetting(
                "--thumbor-detectors", "IMAGO_THUMBOR_DETECTORS", peers: [.thumbor("DETECTORS")],
                "thumbor's DETECTORS: what /smart/ URLs look for, in order, comma-separated names or module paths: face_detector, profile_detector, glasses_detector, feature_detector (default none: Imago's saliency)"
            ) { configuration, text, _ throws(ServerError) in
                configuration.thumborDetectors = try ServerSetting.list(text).map { module throws(ServerError) in
                    guard let kind = ThumborDetectors.Kind(module: module) else {
                        throw ServerError(status: 500, "--thumbor-detectors (IMAGO_THUMBOR_DETECTORS): Imago has no detector \(module)")
                    }
                    return kind
                }
            },
            .text(
                "--thumbor-cascade-dir", "IMAGO_THUMBOR_CASCADE_DIR",
                "the folder thumbor's cascade file names are read from when not absolute (default /usr/share/opencv4/haarcascades, Debian's opencv-data)"
            ) { $0.thumborCascadeFiles.directory = $1 },
            .text(
                "--thumbor-face-cascade", "IMAGO_THUMBOR_FACE_CASCADE", peers: [.thumbor("FACE_DETECTOR_CASCADE_FILE")],
                "thumbor's FACE_DETECTOR_CASCADE_FILE: the face detector's OpenCV cascade (default haarcascade_frontalface_alt.xml)"
            ) { $0.thumborCascadeFiles.face = $1 },
            .text(
                "--thumbor-profile-cascade", "IMAGO_THUMBOR_PROFILE_CASCADE", peers: [.thumbor("PROFILE_DETECTOR_CASCADE_FILE")],
                "thumbor's PROFILE_DETECTOR_CASCADE_FILE (default haarcascade_profileface.xml)"
            ) { $0.thumborCascadeFiles.profile = $1 },
            .text(
                "--thumbor-glasses-cascade", "IMAGO_THUMBOR_GLASSES_CASCADE", peers: [.thumbor("GLASSES_DETECTOR_CASCADE_FILE")],
                "thumbor's GLASSES_DETECTOR_CASCADE_FILE (default haarcascade_eye_tree_eyeglasses.xml)"
            ) { $0.thumborCascadeFiles.glasses = $1 },
        ]
}
