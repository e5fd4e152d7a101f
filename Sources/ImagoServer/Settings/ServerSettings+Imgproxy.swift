import Foundation
import Imago

extension ServerSettings {
    /// imgproxy's own: its signatures, presets, source rewriting, path prefix and face settings.
    static let imgproxy: [ServerSetting] =
        // The signer is one fact in three variables: read together, in any order.
        ServerSetting.compound(
            .part("--key", "IMAGO_KEY", peers: [.same("IMGPROXY_KEY")], "hex HMAC keys, comma-separated for rotation; none turns signature checks off"),
            .part("--salt", "IMAGO_SALT", peers: [.same("IMGPROXY_SALT")], "hex salts, one per key"),
            .part(
                "--signature-size", "IMAGO_SIGNATURE_SIZE", peers: [.same("IMGPROXY_SIGNATURE_SIZE")],
                "bytes of the HMAC an imgproxy signature carries (default 32)")
        ) { configuration, texts throws(ServerError) in
            let (keys, salts, size) = (texts[0], texts[1], texts[2])
            if keys == nil, salts != nil { throw ServerError(status: 500, "--salt (IMAGO_SALT) is set without --key (IMAGO_KEY)") }
            if let keys {
                do {
                    configuration.signer = try URLSigner(hexKeys: ServerSetting.list(keys), hexSalts: ServerSetting.list(salts ?? ""))
                } catch let error as ServerError {
                    throw ServerError(status: 500, "--key (IMAGO_KEY) and --salt (IMAGO_SALT): \(error.message)")
                } catch {
                    throw ServerSetting.invalid("--key", "IMAGO_KEY")
                }
            }
            if let size {
                guard let bytes = Int(size), (1...32).contains(bytes) else { throw ServerSetting.invalid("--signature-size", "IMAGO_SIGNATURE_SIZE") }
                configuration.signer.signatureSize = bytes
            }
        }
        + [
            ServerSetting(
                "--presets", "IMAGO_PRESETS", peers: [.same("IMGPROXY_PRESETS")],
                "named option lists: name=rs:fill:300:300/q:80,other=…; `default` applies to all"
            ) {
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
            .text(
                "--source-base-url", "IMAGO_SOURCE_BASE_URL", peers: [.same("IMGPROXY_BASE_URL")],
                "put before imgproxy source URLs that do not start with it (default none)"
            ) { $0.sourceBaseURL = $1 },
            ServerSetting(
                "--source-url-replacements", "IMAGO_SOURCE_URL_REPLACEMENTS", peers: [.same("IMGPROXY_URL_REPLACEMENTS")],
                "pattern=replacement;… applied to imgproxy source URLs before the base URL (a pattern is a prefix, * matching anything but /; $1 names it)"
            ) { configuration, text, _ throws(ServerError) in
                configuration.sourceURLReplacements = try text.split(separator: ";").map { pair throws(ServerError) in
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    guard parts.count == 2 else { throw ServerSetting.invalid("--source-url-replacements", "IMAGO_SOURCE_URL_REPLACEMENTS") }
                    return (String(parts[0]), String(parts[1]))
                }
            },
            .text(
                "--path-prefix", "IMAGO_PATH_PREFIX", peers: [.same("IMGPROXY_PATH_PREFIX")],
                "path imgproxy's URLs are under, taken off before the signature is checked (default none: the root)"
            ) { $0.pathPrefix = $1 },
            .text(
                "--trusted-signatures", "IMAGO_TRUSTED_SIGNATURES", peers: [.same("IMGPROXY_TRUSTED_SIGNATURES")],
                "imgproxy signatures accepted without checking, comma-separated (default none)"
            ) { $0.trustedSignatures = Set(ServerSetting.list($1)) },
            .text(
                "--face-cascade", "IMAGO_FACE_CASCADE",
                "the OpenCV face cascade imgproxy's object gravity (g:obj:face) and face-aware smart gravity use (default Debian's haarcascade_frontalface_alt.xml, when installed)"
            ) { $0.faceCascade = $1 },
            .boolean(
                "--smart-crop-face-detection", "IMAGO_SMART_CROP_FACE_DETECTION", peers: [.boolean("IMGPROXY_SMART_CROP_FACE_DETECTION")],
                "imgproxy's smart gravity keeps the faces --face-cascade finds before saliency decides", \.imgproxySmartCropFindsFaces),
            .boolean(
                "--object-detection-fallback-to-smart-crop", "IMAGO_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP",
                peers: [.boolean("IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP")],
                "an object gravity (g:obj) that finds no face is smart gravity; false: the centre", \.imgproxyObjectsFallBackToSmart),
        ]
}
