import Crypto
import Foundation
import Imago
import NIOCore

/// imgproxy's URLs: the path parsed, its signature checked, its options read by imgproxy's
/// argument rules, and compiled to a ``VariantPlan``; `raw` and `skip_processing` answer the
/// source's bytes as they came.
extension ImageService {
    /// The answer to `request`, whose `path` is under imgproxy's mount.
    func answerImgproxy(_ request: ServiceRequest, path: String, _ negotiation: Negotiation) async throws -> ServiceResponse {
        let path = try ProcessingPath(parsing: path)
        try verifyImgproxySignature(path)
        var options = try ProcessingOptions(parsing: path.options, presets: configuration.presets)
        if !options.raw, options.format == nil, let name = path.outputExtension {
            guard OutputFormat(extension: name) != nil else { throw ServerError.badRequest("Imago does not write '\(name)'") }
            options.format = name.lowercased()
        }
        try ImgproxySteps.checkRequestedSize(options, maxPixels: configuration.maxSourcePixels)
        let url = try sources.imgproxySource(path.source)
        let explicit = options.format.flatMap(OutputFormat.init(extension:))
        let delivery = DeliveryHeaders(options: options, source: url, returnsAttachment: configuration.returnsAttachment)
        if options.raw || !(options.skipProcessing + configuration.skipProcessingFormats).isEmpty {
            if let response = try await unprocessed(url: url, options: options, explicit: explicit, request: request, delivery: delivery) {
                return response
            }
        }
        return try await serve(
            imgproxyPlan(url: url, options: options, explicit: explicit, negotiation: negotiation, delivery: delivery), to: request, negotiation: negotiation)
    }

    /// Checks `path`'s signature: one the operator trusts passes as it is, else it must verify with
    /// one of the key and salt pairs (any passes when there are none).
    func verifyImgproxySignature(_ path: ProcessingPath) throws(ServerError) {
        if configuration.trustedSignatures.contains(path.signature) { return }
        guard configuration.signer.verify(path.signature, for: path.signedPart) else { throw ServerError.forbidden("invalid signature") }
    }

    /// The plan for `options` on the source at `url`: the key is the source, the whole options
    /// value (``ProcessingOptions/key``) and the format named or the Accept classes that can
    /// change it.
    func imgproxyPlan(
        url: URL, options: ProcessingOptions, explicit: OutputFormat?, negotiation: Negotiation, delivery: DeliveryHeaders
    ) -> VariantPlan {
        var requestOptions: ImageRequest.Options = []
        if !(options.stripColorProfile ?? configuration.stripsColorProfile) { requestOptions.insert(.keepsColorProfile) }
        if !(options.stripMetadata ?? configuration.stripsMetadata) {
            requestOptions.insert(.keepsMetadata)
        } else if options.keepCopyright ?? configuration.keepsCopyright {
            requestOptions.insert(.keepsCopyright)
        }
        if options.preserveHDR ?? configuration.keepsGainMap, negotiation.mayAnswerJPEG(named: explicit) { requestOptions.insert(.keepsGainMap) }
        // A named format stands unless the server enforces one this client takes (never over SVG).
        let format: AnswerPolicy.FormatChoice
        if let explicit, explicit == .svg || negotiation.enforced.isEmpty {
            format = .named(explicit)
        } else {
            format = .negotiated(named: explicit, offered: negotiation.offered, enforced: negotiation.enforced)
        }
        var answer = AnswerPolicy(format: format, alpha: .flatten(options.background ?? .white))
        answer.quality = options.quality > 0 ? options.quality : nil
        answer.formatQuality = options.formatQuality
        answer.autoQuality = options.autoQuality
        answer.usesServerAutoQuality = true
        answer.maxBytes = options.maxBytes
        answer.passesSVGThrough = explicit == nil && !configuration.alwaysRasterizesSVG
        // The server's face cascade and settings decide smart and object gravities' windows.
        let faces = imgproxyFaces.identity(for: options)
        let identity = options.key + (faces.isEmpty ? "" : "\n" + faces)
        let recipe = ImageRecipe(steps: .imgproxy(options), requestOptions: requestOptions, answer: answer, identity: identity)
        return VariantPlan(
            source: url, key: url.absoluteString + "\n" + identity + "\n" + (explicit?.rawValue ?? "") + "\n" + negotiation.classes,
            limits: SourceLimits(options: options), delivery: delivery, varies: configuration.variesWithAccept(named: explicit), errors: .imgproxy,
            product: .image(recipe))
    }

    /// The source's bytes as they came, for `raw`, or for `skip_processing` when the source is
    /// one of the listed formats and the answer's format is its own; nil when processing is not
    /// skipped.
    private func unprocessed(
        url: URL, options: ProcessingOptions, explicit: OutputFormat?, request: ServiceRequest, delivery: DeliveryHeaders
    ) async throws -> ServiceResponse? {
        let limits = SourceLimits(options: options)
        var sourceRequest = ImageRequest(url: url)
        // raw streams the source whatever its size, as imgproxy; skip_processing keeps the URL's byte limit.
        if !options.raw { sourceRequest.limits = limits.request }
        let response: DataResponse
        do {
            response = try await pipeline.data(for: sourceRequest)
        } catch {
            throw limits.explain(error) ?? error
        }
        let sourceFormat = ImageFormat.sniff(response.data, decoders: pipeline.decoders)
        if !options.raw {
            guard let sourceFormat, (options.skipProcessing + configuration.skipProcessingFormats).contains(sourceFormat.rawValue),
                explicit == nil || explicit?.rawValue == sourceFormat.rawValue
            else { return nil }
            try limits.check(bytes: response.data.count)
        }
        metrics.served(from: options.raw ? "raw" : "skip-processing")
        let type = sourceFormat?.info?.mimeType ?? response.headers["Content-Type"] ?? "application/octet-stream"
        var hash = SHA256()
        hash.update(data: response.data)
        let etag = Self.quoted(hash)
        let answer = PreparedAnswer(
            length: response.data.count, mimeType: type, etag: etag, cacheControl: configuration.cacheControl, varies: false,
            disposition: delivery.with(extension: sourceFormat?.preferredExtension).contentDisposition(defaultExtension: "bin"))
        return answer.response(ByteBuffer(bytes: response.data), to: request)
    }
}
