import Crypto
import Dispatch
import Foundation
import Imago
import Synchronization

/// The image service without its HTTP server: takes a request's method, path and headers and
/// answers with an image or a short error. Parses the imgproxy path, checks the signature,
/// resolves the source, and makes the variant once however many ask for it at the same time:
/// the pipeline fetches, decodes (scaled at decode where it can) and processes, this encodes off
/// Swift's cooperative pool, and the encoded variant is kept in memory by its options and the
/// negotiated format.
public final class ImageService: Sendable {
    public let configuration: ServerConfiguration
    let pipeline: ImagePipeline
    private let sources: SourceResolver
    private let work: WorkLimiter
    private let variants: MemoryCache<String, EncodedVariant>
    private let making = Mutex<[String: Task<EncodedVariant, any Error>]>([:])

    /// A service loading through `pipeline`, or through one made from `configuration`'s limits and
    /// address policy.
    public init(configuration: ServerConfiguration, pipeline: ImagePipeline? = nil) throws {
        self.configuration = configuration
        self.pipeline = try pipeline ?? Self.makePipeline(configuration)
        sources = SourceResolver(allowedHosts: configuration.allowedHosts, localRoot: configuration.localRoot)
        work = WorkLimiter(limit: configuration.maxConcurrentWork)
        variants = MemoryCache(limits: .init(cost: configuration.variantCacheBytes))
    }

    /// The pipeline `configuration` asks for: its source limits and, unless private addresses are
    /// allowed, the public-only address policy.
    public static func makePipeline(_ configuration: ServerConfiguration) throws -> ImagePipeline {
        var pipeline = ImagePipeline.Configuration()
        pipeline.addressPolicy = configuration.allowsPrivateAddresses ? .allowAll : .publicOnly
        pipeline.maxResponseSize = configuration.maxSourceBytes
        pipeline.deadline = configuration.sourceTimeout
        pipeline.decodingOptions.maxPixels = configuration.maxSourcePixels
        pipeline.decodingOptions.maxFrames = configuration.maxFrames
        #if DiskCache
            if let directory = configuration.cacheDirectory {
                pipeline.diskCache = try DiskCache(configuration: .init(directory: directory))
            }
        #endif
        return ImagePipeline(configuration: pipeline)
    }

    /// Requests making an image now.
    public var workInFlight: Int { work.inFlight }

    /// The answer to `request`.
    public func respond(to request: ServiceRequest) async -> ServiceResponse {
        do {
            return try await answer(request)
        } catch let error as ServerError {
            return .error(error, head: request.isHead)
        } catch let error as ImagoError {
            return .error(ServerError(loading: error), head: request.isHead)
        } catch {
            return .error(ServerError(status: 500, "internal error"), head: request.isHead)
        }
    }

    private func answer(_ request: ServiceRequest) async throws -> ServiceResponse {
        let path = try ProcessingPath(parsing: request.path)
        guard configuration.signer.verify(path.signature, for: path.signedPart) else { throw ServerError.forbidden("invalid signature") }
        let options = try ProcessingOptions(parsing: path.options, presets: configuration.presets)
        let url = try sources.url(for: path.source)
        let name = options.format ?? path.outputExtension
        let explicit = name.flatMap(OutputFormat.init(extension:))
        if let name, explicit == nil { throw ServerError.badRequest("Imago does not write '\(name)'") }
        // A negotiated format depends on the Accept header only through these two answers.
        let accepted = OutputFormat.acceptedTypes(request.accept)
        let avif = configuration.negotiatesAVIF && accepted.contains("image/avif"), webp = accepted.contains("image/webp")
        let key = url.absoluteString + "\n" + options.key + "\n" + (explicit?.rawValue ?? "avif:\(avif),webp:\(webp)")
        let variant = try await variant(key: key) { () async throws -> EncodedVariant in
            try await self.make(url: url, options: options, explicit: explicit, accepted: accepted)
        }
        return .image(variant, request: request, cacheControl: configuration.cacheControl, varies: explicit == nil)
    }

    /// The cached variant, the one being made for an identical request, or a new one (which
    /// takes a place of the work limit, or fails with 503).
    private func variant(key: String, make: @escaping @Sendable () async throws -> EncodedVariant) async throws -> EncodedVariant {
        if let cached = variants.value(forKey: key) { return cached }
        let task = try making.withLock { making -> Task<EncodedVariant, any Error> in
            if let running = making[key] { return running }
            guard work.tryAcquire() else { throw ServerError.overloaded }
            // Not the caller's child: a client that hangs up does not cancel what others wait for.
            let task = Task {
                defer {
                    self.work.release()
                    _ = self.making.withLock { $0.removeValue(forKey: key) }
                }
                let variant = try await make()
                self.variants.setValue(variant, forKey: key, cost: variant.data.count)
                return variant
            }
            making[key] = task
            return task
        }
        return try await task.value
    }

    private func make(url: URL, options: ProcessingOptions, explicit: OutputFormat?, accepted: Set<String>) async throws -> EncodedVariant {
        let processors = try VariantPlan.processors(for: options, maxPixels: configuration.maxSourcePixels)
        let response = try await pipeline.response(for: ImageRequest(url: url, options: [.storesVariantOnDisk], processors: processors))
        guard let image = response.image else { throw ServerError(status: 500, "internal error") }
        let format = explicit ?? OutputFormat.negotiate(accepted: accepted, hasAlpha: image.metadata.hasAlpha, avifEnabled: configuration.negotiatesAVIF)
        let quality = options.quality > 0 ? options.quality : configuration.defaultQuality
        let data = try await Self.encode(image, as: format, quality: quality)
        return EncodedVariant(data: data, format: format, etag: Self.etag(source: response, options: options, format: format))
    }

    /// Encodes on a GCD thread: an encode takes tens of milliseconds to seconds, too long to hold
    /// one of the cooperative pool's threads.
    private static func encode(_ image: Image, as format: OutputFormat, quality: Int) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try format.encoder(quality: quality).encode(image) })
            }
        }
    }

    /// A digest of what determines the bytes: the source's validators when it sent a strong one,
    /// else its bytes; the options; the format.
    static func etag(source: ImageResponse, options: ProcessingOptions, format: OutputFormat) -> String {
        let header = { (name: String) in source.headers.first { $0.name.lowercased() == name }?.value }
        var hash = SHA256()
        if let validator = header("etag"), !validator.hasPrefix("W/") {
            hash.update(data: Data(("etag:" + validator + source.url.absoluteString).utf8))
        } else {
            hash.update(data: source.data)
        }
        hash.update(data: Data(("\n" + options.key + "\n" + format.rawValue).utf8))
        let digest = hash.finalize().prefix(16).map { String(format: "%02x", $0) }.joined()
        return "\"\(digest)\""
    }
}
