import Foundation
import Imago

/// What imgproxy's URLs need beyond the configuration, made once per service: the server's
/// watermark, the face cascade and its settings, and the rules that rewrite a URL's source
/// (`IMGPROXY_URL_REPLACEMENTS`, `IMGPROXY_BASE_URL`) before the server's own source rules.
final class ImgproxyDialect: Sendable {
    let watermarks: WatermarkLoader
    /// Smart and object gravities' faces, the cascade read once.
    let faces: ImgproxySteps.FaceSettings
    /// What a URL whose source cannot be had answers instead; nil for the failure.
    let fallback: FallbackImage?
    /// Which client cookies go on to a source; nil when none do.
    let cookies: CookiePassthrough?
    private let sources: SourceResolver
    private let baseURL: String?
    private let replacements: [(pattern: SourcePattern, replacement: String)]
    /// The longest side a result may have (`IMGPROXY_MAX_RESULT_DIMENSION`), 0 for none.
    private let maxResultDimension: Int

    init(_ configuration: ServerConfiguration, sources: SourceResolver, pipeline: ImagePipeline) throws {
        self.sources = sources
        watermarks = try WatermarkLoader(configuration.output.watermark, opacity: configuration.output.watermarkOpacity, pipeline: pipeline)
        faces = try Self.faceSettings(configuration)
        fallback = try FallbackImage(configuration, pipeline: pipeline)
        cookies = CookiePassthrough(configuration)
        baseURL = configuration.sourceBaseURL.flatMap { $0.isEmpty ? nil : $0 }
        replacements = configuration.sourceURLReplacements.map { (SourcePattern($0.pattern), Self.template($0.replacement)) }
        maxResultDimension = configuration.output.maxResultDimension
    }

    /// A URL's source as imgproxy's parser preprocesses it: each replacement applied, then the base
    /// URL put before it unless it starts with it already; then the server's source rules.
    func source(_ source: String) throws(ServerError) -> URL {
        var text = source
        for (pattern, replacement) in replacements { text = pattern.replacing(in: text, with: replacement) }
        if let baseURL, !text.hasPrefix(baseURL) { text = baseURL + text }
        return try sources.url(for: text)
    }

    /// The pixel work `options` ask for, its watermark loaded when it places one.
    func steps(_ options: ProcessingOptions, key: String) -> any StepsLoading {
        Steps(options: options, optionsKey: key, maxResultDimension: maxResultDimension, dialect: self)
    }

    private struct Steps: StepsLoading {
        let options: ProcessingOptions
        let optionsKey: String
        let maxResultDimension: Int
        let dialect: ImgproxyDialect

        func loaded() async throws -> (planner: any StepPlanning, overlayIdentity: String) {
            let watermark = options.watermark == nil ? nil : try await dialect.watermarks.watermark()
            var planner = ImgproxySteps(options: options, optionsKey: optionsKey, maxResultDimension: maxResultDimension, watermark: watermark)
            planner.faces = dialect.faces
            return (planner, watermark?.identifier ?? "")
        }
    }

    /// imgproxy's statuses: by the error's kind (``ServerError/init(loading:)``); a URL's own
    /// limit is a 422.
    struct Failures: FailureExplaining {
        func explain(_ error: ImagoError, limits: SourceLimits) -> any Error { limits.explain(error) ?? error }
    }

    /// imgproxy's face settings from `configuration`: the cascade it names (or Debian's, when
    /// installed) read once; one named, or needed by face-aware smart crop, is read now, and when
    /// it cannot be read stops the service with the reason. Debian's default is read when a URL
    /// first asks for faces.
    static func faceSettings(_ configuration: ServerConfiguration) throws(ServerError) -> ImgproxySteps.FaceSettings {
        var settings = ImgproxySteps.FaceSettings()
        settings.smartCropFindsFaces = configuration.imgproxySmartCropFindsFaces
        settings.objectsFallBackToSmart = configuration.imgproxyObjectsFallBackToSmart
        let path = configuration.faceCascade ?? FaceDetector.systemCascadePath
        let required = configuration.faceCascade != nil || configuration.imgproxySmartCropFindsFaces
        guard required else {
            if FileManager.default.fileExists(atPath: path) { settings.cascade = FaceCascade(path: path) }
            return settings
        }
        do {
            settings.cascade = FaceCascade(try FaceDetector(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ServerError(
                status: 500, "--face-cascade (IMAGO_FACE_CASCADE) cannot use \(path): \(error.description) (Debian's opencv-data installs the cascades)")
        }
        return settings
    }

    /// Go's replacement template (`$1`, `${1}`) as NSRegularExpression's (`$1`), other `\` and
    /// `$` taken literally.
    private static func template(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let first = rest.first {
            rest = rest.dropFirst()
            if first == "\\" {
                out += "\\\\"
            } else if first == "$" {
                if rest.first == "{", let close = rest.firstIndex(of: "}"), let number = Int(rest[rest.index(after: rest.startIndex)..<close]) {
                    out += "$\(number)"
                    rest = rest[rest.index(after: close)...]
                } else if let digit = rest.first, digit.isASCII, digit.isNumber {
                    out += "$"
                } else {
                    out += "\\$"
                }
            } else {
                out.append(first)
            }
        }
        return out
    }
}

extension SourceLimits {
    /// The limits `options` set, with the server's frame resolution (`server`'s
    /// ``SourceLimitSettings/maxFramePixels``) where the URL sets none or a larger one.
    init(options: ProcessingOptions, server: SourceLimitSettings = SourceLimitSettings()) {
        self.init()
        maxBytes = options.maxSourceBytes
        maxPixels = options.maxSourcePixels
        maxFrames = options.maxFrames
        maxFramePixels = [options.maxFramePixels, server.maxFramePixels].filter { $0 > 0 }.min() ?? 0
    }
}
