import Crypto
import Foundation
import Imago
import NIOCore

/// imgproxy's URLs: the path parsed, its signature checked, its options read by imgproxy's
/// argument rules, and compiled to a ``VariantPlan``; `raw` and `skip_processing` are plans whose
/// product is the source's bytes as they came.
extension ImageService {
    /// The answer to `request`, whose `path` is under imgproxy's mount.
    func answerImgproxy(_ request: ServiceRequest, path: String, _ negotiation: Negotiation) async throws -> ServiceResponse {
        let path = try ProcessingPath(
            parsing: path, presetsOnly: configuration.onlyPresets, base64IncludesFilename: configuration.base64URLIncludesFilename,
            argumentsSeparator: configuration.argumentsSeparator)
        try verifyImgproxySignature(path)
        if !configuration.onlyPresets { try path.checkOptions(allowed: configuration.allowedProcessingOptions, kind: "processing") }
        // As imgproxy: the client hints first, then the default preset, then the URL's options.
        var start = ProcessingOptions()
        // The server's default for auto-rotation (IMGPROXY_AUTO_ROTATE), under the URL's options.
        if !configuration.autoRotates { start.autoRotate = false }
        if let dpr = negotiation.hints.dpr { start.dpr = dpr }
        if let width = negotiation.hints.width { start.width = Int((Double(width) / start.dpr).rounded()) }
        var options = try ProcessingOptions(
            parsing: path.options, presets: configuration.presets, startingFrom: start, allowsSecurityOptions: configuration.allowsSecurityOptions,
            argumentsSeparator: configuration.argumentsSeparator)
        // As imgproxy's parser: the extension is applied after the options, so it wins over `f:`.
        if !options.raw, let name = path.outputExtension {
            guard OutputFormat(extension: name) != nil else { throw ServerError.badRequest("Imago does not write '\(name)'") }
            options.format = name.lowercased()
        }
        try ImgproxySteps.checkRequestedSize(options, maxPixels: configuration.limits.maxSourcePixels)
        let url = try imgproxy.source(path.source)
        let explicit = options.format.flatMap(OutputFormat.init(extension:))
        var delivery = DeliveryHeaders(options: options, source: url, returnsAttachment: configuration.returnsAttachment)
        if configuration.setsCanonicalHeader { delivery.canonicalLink = DeliveryHeaders.canonicalLink(to: url) }
        delivery.sendsETag = configuration.sendsETag
        delivery.sendsDebugHeaders = configuration.sendsDebugHeaders
        delivery.variesWithClientHints = configuration.takesClientHints
        delivery.sendsLastModified = configuration.sendsLastModified
        delivery.lastModifiedBuster = configuration.lastModifiedBuster
        delivery.passesSourceCacheControl = configuration.passesSourceCacheControl
        let cookie = imgproxy.cookies?.cookie(for: request, source: url)
        if options.raw {
            // As imgproxy: the source whatever its size (the URL's limits do not apply).
            let plan = VariantPlan(
                source: url, key: "raw\n" + url.absoluteString, delivery: delivery, varies: false, failures: ImgproxyDialect.Failures(), product: .passThrough)
            return try await serve(plan.sending(cookie), to: request, negotiation: negotiation)
        }
        let plan = imgproxyPlan(url: url, options: options, explicit: explicit, negotiation: negotiation, delivery: delivery).sending(cookie)
        guard let fallback = imgproxy.fallback else { return try await serve(plan, to: request, negotiation: negotiation) }
        do {
            return try await serve(plan, to: request, negotiation: negotiation)
        } catch  where FallbackImage.covers(error) {
            // The same options on the fallback image; its answer is never the URL's variant. The
            // URL's limits on its source are not the operator's image's.
            var fallbackPlan = imgproxyPlan(url: fallback.source, options: options, explicit: explicit, negotiation: negotiation, delivery: delivery)
            fallbackPlan.limits = SourceLimits()
            return try await serveFallback(fallbackPlan, status: fallback.status, cacheControl: fallback.cacheControl, failure: error, to: request)
        }
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
        if !(options.stripColorProfile ?? configuration.output.stripsColorProfile) { requestOptions.insert(.keepsColorProfile) }
        if !(options.stripMetadata ?? configuration.output.stripsMetadata) {
            requestOptions.insert(.keepsMetadata)
        } else if options.keepCopyright ?? configuration.output.keepsCopyright {
            requestOptions.insert(.keepsCopyright)
        }
        if options.preserveHDR ?? configuration.output.keepsGainMap, negotiation.mayAnswerJPEG(named: explicit) { requestOptions.insert(.keepsGainMap) }
        if options.enforceThumbnail ?? configuration.output.enforcesThumbnail { requestOptions.insert(.usesEmbeddedThumbnail) }
        // A named format stands unless the server enforces one this client takes (never over SVG).
        let format: ImgproxyEncoding.FormatChoice
        if let explicit, explicit == .svg || negotiation.enforced.isEmpty {
            format = .named(explicit)
        } else {
            format = .negotiated(named: explicit, offered: negotiation.offered, enforced: negotiation.enforced)
        }
        let encoding = ImgproxyEncoding(
            format: format, quality: options.quality > 0 ? options.quality : nil, formatQuality: options.formatQuality, autoQuality: options.autoQuality,
            maxBytes: options.maxBytes)
        var answer = AnswerPolicy(encoding: encoding, alpha: .flatten(options.background ?? .white))
        answer.answersSanitizedSVG = explicit == .svg
        answer.passesSVGThrough = explicit == nil && !configuration.output.alwaysRasterizesSVG
        // The server's face cascade and settings decide smart and object gravities' windows.
        let faces = imgproxy.faces.identity(for: options)
        let optionsKey = options.key
        let identity = optionsKey + (faces.isEmpty ? "" : "\n" + faces)
        var recipe = ImageRecipe(steps: imgproxy.steps(options, key: optionsKey), requestOptions: requestOptions, answer: answer, identity: identity)
        // Sources of these formats are answered as they came when the answer would be in their format.
        recipe.passesThrough = Set(options.skipProcessing + configuration.output.skipProcessingFormats).filter { explicit == nil || explicit?.rawValue == $0 }
        var plan = VariantPlan(
            source: url, key: url.absoluteString + "\n" + identity + "\n" + (explicit?.rawValue ?? "") + "\n" + negotiation.classes,
            limits: SourceLimits(options: options, server: configuration.limits), delivery: delivery, varies: configuration.variesWithAccept(named: explicit),
            failures: ImgproxyDialect.Failures(),
            product: .image(recipe))
        if options.videoThumbnailSecond != nil || options.videoThumbnailKeyframes != nil || options.videoThumbnailTile != nil
            || options.videoThumbnailAnimation != nil || options.videoThumbnailRepresentative
        {
            var frame = configuration.output.video.frame(second: options.videoThumbnailSecond, keyframes: options.videoThumbnailKeyframes)
            // A sprite wins over an animation when a URL asks for both.
            frame.sequence =
                options.videoThumbnailTile.map { tile in
                    var sequence = tile.sequence(.sprite(columns: tile.first, rows: tile.second))
                    sequence.autoKeyframes = configuration.output.video.tileAutoKeyframes
                    return sequence
                }
                ?? options.videoThumbnailAnimation.map { $0.sequence(.animation(frames: $0.second, delay: .milliseconds($0.first))) }
            frame.representative = options.videoThumbnailRepresentative
            plan.videoFrame = frame
        }
        if options.page != nil || options.pages != nil { plan.pages = PageSelection(first: options.page ?? 0, count: options.pages ?? 1) }
        return plan
    }
}
