import Foundation
import Imago

/// What thumbor's URLs need beyond the configuration, made once per service: its detectors (their
/// cascades read once), the overlay images its filters place (fetched and decoded once, kept),
/// and its loaders' rules for where an image may come from (`ALLOWED_SOURCES`).
final class ThumborDialect: Sendable {
    /// thumbor's detectors, their cascades read once.
    let detectors: ThumborDetectors
    /// thumbor's watermark and frame images, decoded, by URL: a few images many variants place,
    /// kept so each is fetched and decoded once (at most 16 MB, trimmed on memory pressure).
    let overlays = MemoryCache<String, Image>(limits: .init(cost: 16 << 20))
    /// Overlay images being loaded.
    private let overlayFlights = SingleFlight<String, Image>()
    /// `ALLOWED_SOURCES` for its URLs' http images; nil allows any host.
    private let allowedHosts: [ThumborHostPattern]?
    private let sources: SourceResolver
    private let pipeline: ImagePipeline

    init(_ configuration: ServerConfiguration, sources: SourceResolver, pipeline: ImagePipeline) throws {
        detectors = try ThumborDetectors(configuration.thumborDetectors, files: configuration.thumborCascadeFiles)
        allowedHosts = configuration.thumborAllowedSources.flatMap { $0.isEmpty ? nil : $0.map(ThumborHostPattern.init) }
        self.sources = sources
        self.pipeline = pipeline
        MemoryPressureMonitor.shared.register(overlays)
    }

    /// What thumbor's HTTP loader leaves unencoded (Python's `quote` with its `safe` list).
    private static let urlSafe = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~@#$&()*!+=:;,?/'")

    /// The image's URL as thumbor's loaders take it: with `--local-root`, a file under it (its file
    /// loader, through the one ``LocalRoot`` rule: never outside it, a refusal is a 404); else an
    /// http(s) URL, `http://` added when it has no scheme and percent-encoded when it is not
    /// already (its HTTP loader), from hosts the server allows (thumbor's `ALLOWED_SOURCES`).
    func source(_ image: String) throws(ServerError) -> URL {
        if let localRoot = sources.localRoot { return try localRoot.file(encodedPath: image) }
        var text = image
        if text == text.removingPercentEncoding {
            text = text.addingPercentEncoding(withAllowedCharacters: Self.urlSafe) ?? text
        }
        if !text.hasPrefix("http") { text = "http://" + text }
        guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
            throw ServerError.badRequest("no original image was specified in the given URL")
        }
        if let allowedHosts, !allowedHosts.contains(where: { $0.matches(host.lowercased()) }) {
            // thumbor's loader says the path is not valid: its handler answers 400.
            throw ServerError.badRequest("source not allowed")
        }
        do {
            return try sources.url(for: url.absoluteString)
        } catch {
            throw ServerError.badRequest("source not allowed")
        }
    }

    /// `transformation` with the overlay images its filters place.
    func loaded(_ transformation: ThumborTransformation, overlays locations: [String]) async throws -> ThumborTransformation {
        var transformation = transformation
        for location in locations where transformation.overlays[location] == nil {
            transformation.overlays[location] = try await overlay(location)
        }
        return transformation
    }

    /// The watermark or frame image at `location`, fetched and decoded once however many variants
    /// place it; thumbor answers 400 when one cannot be had.
    private func overlay(_ location: String) async throws -> Image {
        if let kept = overlays.value(forKey: location) { return kept }
        do {
            let url = try source(location)
            return try await overlayFlights.value(for: location) { [pipeline, overlays] in
                let image = try await pipeline.image(for: ImageRequest(url: url, options: [.disableMemoryCacheWrites]))
                overlays.setValue(image, forKey: location, cost: image.cost)
                return image
            }
        } catch {
            throw ServerError.badRequest("the watermark or frame image could not be loaded")
        }
    }

    /// The pixel work of `transformation`, its overlay images loaded first.
    func steps(_ transformation: ThumborTransformation, overlays: [String]) -> any StepsLoading {
        Steps(transformation: transformation, overlays: overlays, dialect: self)
    }

    private struct Steps: StepsLoading {
        let transformation: ThumborTransformation
        let overlays: [String]
        let dialect: ThumborDialect

        func loaded() async throws -> (planner: any StepPlanning, overlayIdentity: String) {
            (try await dialect.loaded(transformation, overlays: overlays), "")
        }
    }

    /// thumbor's statuses (``ServerError/init(thumborLoading:)``). thumbor has no queue and no
    /// 429; a full queue is the 503 with `Retry-After` every proxy in front of it retries.
    struct Failures: FailureExplaining {
        func explain(_ error: ImagoError, limits: SourceLimits) -> any Error { ServerError(thumborLoading: error) }
        var queueFull: ServerError { .overloaded }
    }
}
