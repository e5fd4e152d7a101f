import Foundation
import Imago

extension ImageService {
    /// A thumbor URL's answer: the path parsed and its signature checked as thumbor checks them,
    /// the image resolved through thumbor's loaders (under the same address policy and allow-list
    /// as imgproxy URLs), compiled to a plan that the one core answers like any other. Statuses
    /// are thumbor's: 400 for a bad URL, signature or image, 404 for a missing source.
    func answerThumbor(_ request: ServiceRequest, path: String, _ negotiation: Negotiation) async throws -> ServiceResponse {
        try await serve(thumborPlan(path, negotiation), to: request, negotiation: negotiation)
    }

    /// The plan for the thumbor URL `path` under a client that accepts what `negotiation` says.
    func thumborPlan(_ path: String, _ negotiation: Negotiation) throws -> VariantPlan {
        let url = try ThumborURL(parsing: path)
        let signer = configuration.thumborSigner
        if url.unsafe {
            guard signer.allowsUnsafe else { throw ServerError.badRequest("URL has unsafe but unsafe is not allowed") }
        } else {
            guard let signature = url.signature, signer.verify(signature, for: url.signedPart) else { throw ServerError.badRequest("malformed URL") }
        }
        let filters = ThumborFilter.parse(url.filters, allowed: configuration.output.thumborFilters)
        let plan = ThumborPlan(url: url, filters: filters)
        let source = try thumbor.source(plan.image)
        if case .pixels(let width) = url.width, case .pixels(let height) = url.height {
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            guard !overflow, pixels <= configuration.limits.maxSourcePixels else {
                throw ServerError.badRequest("the size asked for is over \(configuration.limits.maxSourcePixels) pixels")
            }
        }
        let acceptsWebP = configuration.output.thumborAutoWebP && negotiation.accepted.contains("image/webp")
        let maxSize = (width: configuration.output.thumborMaxWidth, height: configuration.output.thumborMaxHeight)
        // The server's output settings (orientation, largest box, filters, formats) are in every
        // stored key and ETag through ``OutputSettings/identity``; the key holds the URL's own.
        let key =
            "thumbor\n" + source.absoluteString + "\n" + url.signedPart + "\n" + (url.meta ? "meta" : "webp:\(acceptsWebP && plan.format == nil)")
            + (url.smart && !thumbor.detectors.isEmpty ? "\ndetectors:" + thumbor.detectors.identity : "")
        var transformation = ThumborTransformation(url: url, filters: filters, maxSize: maxSize)
        transformation.focalPoints = plan.focalPoints
        transformation.detectors = thumbor.detectors
        transformation.respectsOrientation = configuration.output.thumborRespectsOrientation
        transformation.maxPixels = configuration.limits.maxSourcePixels
        transformation.identity = key
        var requestOptions: ImageRequest.Options = []
        if !plan.stripICC { requestOptions.insert(.keepsColorProfile) }
        // thumbor's answer is a JPEG for a JPEG source unless a filter or AUTO_WEBP says otherwise.
        let mayAnswerJPEG = (plan.format == nil || plan.format == "jpeg" || plan.format == "jpg") && !(acceptsWebP && plan.format == nil)
        if configuration.output.keepsGainMap, !url.meta, mayAnswerJPEG { requestOptions.insert(.keepsGainMap) }
        // thumbor's detectors see Pillow's decode, whose chroma libjpeg upsamples smoothly: a level
        // of difference moves corners and tips faces over the cascade's thresholds.
        if url.smart, !thumbor.detectors.isEmpty { requestOptions.insert(.smoothsChroma) }
        let product: VariantPlan.Product
        if url.meta {
            product = .report(
                ThumborMetaReport(
                    transformation: transformation, overlays: plan.overlayURLs, image: plan.image, requestOptions: requestOptions,
                    identity: "thumbor\n" + key, dialect: thumbor))
        } else {
            // Pillow's conversion to RGB drops alpha; it does not compose over a colour.
            let answer = AnswerPolicy(encoding: ThumborEncoding(rules: plan, acceptsWebP: acceptsWebP), alpha: .drop)
            product = .image(
                ImageRecipe(
                    steps: thumbor.steps(transformation, overlays: plan.overlayURLs), requestOptions: requestOptions, answer: answer,
                    identity: "thumbor\n" + key))
        }
        var variantPlan = VariantPlan(
            source: source, key: key, delivery: DeliveryHeaders(thumborMaxAge: plan.maxAge ?? configuration.thumborMaxAge),
            varies: configuration.output.thumborAutoWebP && !plan.hasFormatFilter && !url.meta, failures: ThumborDialect.Failures(), product: product)
        variantPlan.sharesResult = !url.unsafe || configuration.resultStorageStoresUnsafe
        return variantPlan
    }

}

extension ServerError {
    /// What a failed load or decode tells a thumbor client, as thumbor's handler answers: a
    /// source that cannot be had is a 404 (thumbor's HTTP loader says so for any error status),
    /// one that timed out or could not be reached a 504, an empty one a 502, one that is not an
    /// image (or over the limits) a 400, a filter that fails a 500.
    init(thumborLoading error: ImagoError) {
        switch error.code.kind {
        case .httpStatus, .fileNotFound, .notCached: self.init(status: 404, "source not found")
        case .emptyResponse: self.init(status: 502, "empty response")
        case .unsupportedFormat, .invalidImage, .emptyImage, .imageTooLarge, .tooLarge, .truncated, .addressRefused, .invalidURL, .codecUnavailable:
            self.init(status: 400, "the image could not be loaded")
        case .processingFailed: self.init(status: 500, "the filters could not be applied")
        default: self.init(status: 504, "the image could not be fetched")
        }
    }
}
