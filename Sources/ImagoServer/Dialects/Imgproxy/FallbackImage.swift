import Crypto
import Foundation
import Imago

/// imgproxy's fallback image (`IMGPROXY_FALLBACK_IMAGE_*`): what an imgproxy URL answers, made
/// with the URL's own options, when its source cannot be had. It is a source like any other to
/// the pipeline: an http(s) URL fetched (and cached) when needed, or bytes read when the service
/// starts and loaded from `imago-fallback:<digest>`, a scheme no URL's source can name.
struct FallbackImage: Sendable {
    /// Where the pipeline loads it from.
    let source: URL
    /// The answer's status; 0 for the failure's own.
    let status: Int
    /// The answer's `Cache-Control`.
    let cacheControl: String

    /// The fallback `configuration` names, nil for none; bytes it names are read and checked now
    /// (a file that cannot be read, or bytes that are no image, stop the service), and given to
    /// `pipeline` to load.
    init?(_ configuration: ServerConfiguration, pipeline: ImagePipeline) throws(ServerError) {
        guard let image = configuration.fallbackImage else { return nil }
        let bytes: Data
        switch image {
        case .url(let url):
            source = url
            bytes = Data()
        case .path(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ServerError(status: 500, "--fallback-image-path (IMAGO_FALLBACK_IMAGE_PATH) cannot read \(path)")
            }
            bytes = data
            source = Self.source(for: data)
        case .data(let data):
            bytes = data
            source = Self.source(for: data)
        }
        if source.scheme == Self.scheme {
            guard bytes.count <= configuration.limits.maxSourceBytes, ImageFormat.sniff(bytes, decoders: pipeline.decoders) != nil else {
                throw ServerError(status: 500, "the fallback image is not an image Imago reads within --max-source-bytes")
            }
            pipeline.loaders.register(Loader(url: source, data: bytes))
        }
        status = configuration.fallbackStatus
        cacheControl = configuration.fallbackTTL > 0 ? "public, max-age=\(configuration.fallbackTTL)" : configuration.cacheControl
    }

    /// Whether `error`, from making a variant, means its source could not be had: it failed to
    /// load or decode, or was over a limit of the server's or the URL's. Not the server's own
    /// state (its memory, a full queue, the work's deadline) or the options.
    static func covers(_ error: any Error) -> Bool {
        switch error {
        case let error as ImagoError:
            guard error.stage == .loading || error.stage == .decoding else { return false }
            switch error.code.kind {
            case .cancelled, .codecUnavailable: return false
            case .imageTooLarge: return error.code.limit?.isMemory != true
            default: return true
            }
        case let error as ServerError:
            return error.status == 422 && error.message == ServerError.invalidSource
        default:
            return false
        }
    }

    static let scheme = "imago-fallback"

    /// The bytes' URL: named by their digest, so other bytes are another source.
    private static func source(for data: Data) -> URL {
        let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
        return URL(string: scheme + ":" + digest)!
    }

    /// Loads the fallback's bytes at its URL.
    private struct Loader: DataLoading {
        let url: URL
        let data: Data

        func canLoad(_ url: URL) -> Bool { url == self.url }

        func load(_ request: DataLoadRequest, into sink: DataSink) async throws {
            try sink.receive(ResponseHead(url: request.url, headers: [:], expectedContentLength: Int64(data.count)))
            try sink.receive(data)
        }
    }
}
