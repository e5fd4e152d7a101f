import Foundation
import Imago

/// The server's watermark, loaded once: from a file or base64 when the service starts (a bad one
/// stops it), from a URL through the pipeline (and its address policy) the first time a request
/// asks for it; kept decoded afterwards. Without one, `watermark` options place nothing, as in
/// imgproxy.
final class WatermarkLoader: Sendable {
    private let ready: Watermark?
    private let url: URL?
    private let opacity: Double
    private let pipeline: ImagePipeline
    private let loaded = KeptOnce<Watermark>()

    init(_ source: ServerConfiguration.AuxiliaryImage?, opacity: Double, pipeline: ImagePipeline) throws {
        self.opacity = opacity
        self.pipeline = pipeline
        switch source {
        case .path(let path):
            ready = try Watermark(data: Data(contentsOf: URL(fileURLWithPath: path)), baseOpacity: opacity)
            url = nil
        case .data(let data):
            ready = try Watermark(data: data, baseOpacity: opacity)
            url = nil
        case .url(let location):
            ready = nil
            url = location
        case nil:
            ready = nil
            url = nil
        }
    }

    /// The identifier of a watermark read when the service started (a file or base64), nil for
    /// none or one fetched later.
    var identifierAtStart: String? { ready?.identifier }

    /// The watermark, or nil when the server has none. A failed load is tried again by the next
    /// request, not remembered.
    func watermark() async throws -> Watermark? {
        if let ready { return ready }
        guard let url else { return nil }
        let opacity = self.opacity, pipeline = self.pipeline
        return try await loaded.value { try Watermark(data: try await pipeline.data(for: ImageRequest(url: url)).data, baseOpacity: opacity) }
    }
}
