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
        ) { configuration, texts, _ throws(ServerError) in
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
        + presets + fallback
        + [
            .boolean(
                "--only-presets", "IMAGO_ONLY_PRESETS", peers: [.boolean("IMGPROXY_ONLY_PRESETS")],
                "an image URL's options are one segment of preset names (thumb:sharp) and nothing else", \.onlyPresets),
            .boolean(
                "--info-only-presets", "IMAGO_INFO_ONLY_PRESETS", peers: [.boolean("IMGPROXY_INFO_ONLY_PRESETS")],
                "the same for /info URLs (default --only-presets)"
            ) { $0.infoOnlyPresets = $1 },
            .text(
                "--allowed-processing-options", "IMAGO_ALLOWED_PROCESSING_OPTIONS", peers: [.same("IMGPROXY_ALLOWED_PROCESSING_OPTIONS")],
                "option names an image URL may use, comma-separated, full and short names each as written (others are 404; presets may use any); default all"
            ) { $0.allowedProcessingOptions = Set(ServerSetting.list($1)) },
            .text(
                "--allowed-info-options", "IMAGO_ALLOWED_INFO_OPTIONS", peers: [.same("IMGPROXY_ALLOWED_INFO_OPTIONS")],
                "option names an /info URL may use, comma-separated (others are 404); default all"
            ) { $0.allowedInfoOptions = Set(ServerSetting.list($1)) },
            .text(
                "--source-base-url", "IMAGO_SOURCE_BASE_URL", peers: [.same("IMGPROXY_BASE_URL")],
                "put before imgproxy source URLs that do not start with it (default none)"
            ) { $0.sourceBaseURL = $1 },
            ServerSetting(
                "--arguments-separator", "IMAGO_ARGUMENTS_SEPARATOR", peers: [.same("IMGPROXY_ARGUMENTS_SEPARATOR")],
                "what divides an imgproxy option's name and arguments, in URLs and presets (default :)"
            ) { configuration, text, _ throws(ServerError) in
                guard !text.isEmpty, !text.contains(where: { $0 == "/" || $0 == "=" || $0.isWhitespace }) else {
                    throw ServerSetting.invalid("--arguments-separator", "IMAGO_ARGUMENTS_SEPARATOR")
                }
                configuration.argumentsSeparator = text
            },
            ServerSetting(
                "--source-url-query-separator", "IMAGO_SOURCE_URL_QUERY_SEPARATOR", peers: [.sameOrBlank("IMGPROXY_SOURCE_URL_QUERY_SEPARATOR")],
                "what parts an s3://, gs://, swift:// or local:// source into its object and its query (a version): blank for none, a ? is then part of the name (default ?)"
            ) { configuration, text, _ throws(ServerError) in
                guard !text.contains(where: { $0 == "/" || $0.isNewline }) else {
                    throw ServerSetting.invalid("--source-url-query-separator", "IMAGO_SOURCE_URL_QUERY_SEPARATOR")
                }
                configuration.sourceQuerySeparator = text
            },
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
            .boolean(
                "--auto-rotate", "IMAGO_AUTO_ROTATE", peers: [.boolean("IMGPROXY_AUTO_ROTATE")],
                "imgproxy's URLs turn images by their EXIF orientation unless they say ar:0", \.autoRotates),
            .boolean(
                "--allow-security-options", "IMAGO_ALLOW_SECURITY_OPTIONS", peers: [.boolean("IMGPROXY_ALLOW_SECURITY_OPTIONS")],
                "URLs and presets may use msr, msfs, maf, mafr and mrd (which only lower the server's limits); false: 403 as imgproxy", \.allowsSecurityOptions),
            .boolean(
                "--development-errors", "IMAGO_DEVELOPMENT_ERRORS", peers: [.boolean("IMGPROXY_DEVELOPMENT_ERRORS_MODE")],
                "an error's answer says what failed in full, the source's URL and reason included (never on a public server)", \.developmentErrors),
            .boolean(
                "--base64-url-includes-filename", "IMAGO_BASE64_URL_INCLUDES_FILENAME", peers: [.boolean("IMGPROXY_BASE64_URL_INCLUDES_FILENAME")],
                "a base64 source split by / ends in a file name for the client (…/aHR0cDov…/photo.jpg), not part of the source",
                \.base64URLIncludesFilename),
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

extension ServerSettings {
    /// imgproxy's presets for images and `/info`: the variables' definitions, split by one
    /// separator, then the files' lines; read together so the separator and the files apply
    /// whatever the order, and each preset checked once all are known.
    static let presets: [ServerSetting] = ServerSetting.compound(
        .part(
            "--presets", "IMAGO_PRESETS", peers: [.same("IMGPROXY_PRESETS")],
            "named option lists: name=rs:fill:300:300/q:80,other=…; `default` applies to all"),
        .part(
            "--presets-separator", "IMAGO_PRESETS_SEPARATOR", peers: [.same("IMGPROXY_PRESETS_SEPARATOR")], "what divides --presets' definitions (default ,)"),
        .part(
            "--presets-path", "IMAGO_PRESETS_PATH", peers: [.same("IMGPROXY_PRESETS_PATH")],
            "a file of preset definitions, one per line (# starts a comment), after --presets'"),
        .part("--info-presets", "IMAGO_INFO_PRESETS", peers: [.same("IMGPROXY_INFO_PRESETS")], "named /info option lists, as --presets"),
        .part(
            "--info-presets-path", "IMAGO_INFO_PRESETS_PATH", peers: [.same("IMGPROXY_INFO_PRESETS_PATH")],
            "a file of /info preset definitions, as --presets-path")
    ) { configuration, texts, _ throws(ServerError) in
        let (list, separator, path, infoList, infoPath) = (texts[0], texts[1] ?? ",", texts[2], texts[3], texts[4])
        guard !separator.isEmpty else { throw ServerSetting.invalid("--presets-separator", "IMAGO_PRESETS_SEPARATOR") }
        var images = PresetDefinitions(), info = PresetDefinitions()
        let argumentsSeparator = configuration.argumentsSeparator
        (images.argumentsSeparator, info.argumentsSeparator) = (argumentsSeparator, argumentsSeparator)
        if let list { try images.add(list, separator: separator, origin: "--presets (IMAGO_PRESETS)") }
        if let path { try images.add(fileAt: path, origin: "--presets-path (IMAGO_PRESETS_PATH)") }
        if let infoList { try info.add(infoList, separator: separator, origin: "--info-presets (IMAGO_INFO_PRESETS)") }
        if let infoPath { try info.add(fileAt: infoPath, origin: "--info-presets-path (IMAGO_INFO_PRESETS_PATH)") }
        let allowsSecurityOptions = configuration.allowsSecurityOptions
        configuration.presets = try images.table { segments, table throws(ServerError) in
            _ = try ProcessingOptions(
                parsing: segments, presets: table, startingFrom: ProcessingOptions(), allowsSecurityOptions: allowsSecurityOptions,
                argumentsSeparator: argumentsSeparator)
        }
        configuration.infoPresets = try info.table { segments, table throws(ServerError) in
            _ = try InfoOptions(parsing: segments, presets: table, argumentsSeparator: argumentsSeparator)
        }
    }
}

extension ServerSettings {
    /// imgproxy's fallback image: where it comes from (one of three), its status and its lifetime.
    static let fallback: [ServerSetting] =
        ServerSetting.compound(
            .part(
                "--fallback-image-path", "IMAGO_FALLBACK_IMAGE_PATH", peers: [.same("IMGPROXY_FALLBACK_IMAGE_PATH")],
                "image file an imgproxy URL answers, processed with its options, when its source cannot be had (read at start); default none"),
            .part(
                "--fallback-image-url", "IMAGO_FALLBACK_IMAGE_URL", peers: [.same("IMGPROXY_FALLBACK_IMAGE_URL")],
                "http(s) URL of the fallback image, fetched through the pipeline when needed"),
            .part("--fallback-image-data", "IMAGO_FALLBACK_IMAGE_DATA", peers: [.same("IMGPROXY_FALLBACK_IMAGE_DATA")], "the fallback image as base64")
        ) { configuration, texts, _ throws(ServerError) in
            configuration.fallbackImage = try ServerSetting.auxiliaryImage(
                texts, flags: ["--fallback-image-path", "--fallback-image-url", "--fallback-image-data"])
        }
        + [
            ServerSetting(
                "--fallback-image-status", "IMAGO_FALLBACK_IMAGE_STATUS", peers: [.same("IMGPROXY_FALLBACK_IMAGE_HTTP_CODE")],
                "status of an answer with the fallback image, 0 for the failure's own (default 200)"
            ) { configuration, text, _ throws(ServerError) in
                guard let status = Int(text), status == 0 || (100...599).contains(status) else {
                    throw ServerSetting.invalid("--fallback-image-status", "IMAGO_FALLBACK_IMAGE_STATUS")
                }
                configuration.fallbackStatus = status
            },
            .integer(
                "--fallback-image-ttl", "IMAGO_FALLBACK_IMAGE_TTL", 0...(10 * 365 * 86_400), peers: [.same("IMGPROXY_FALLBACK_IMAGE_TTL")],
                "Cache-Control max-age in seconds of an answer with the fallback image, 0 for --cache-control's", \.fallbackTTL),
        ]
}
