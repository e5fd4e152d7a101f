import Foundation
import Imago

extension ImageService {
    /// A thumbor URL's answer: the path parsed and its signature checked as thumbor checks them,
    /// the image resolved through thumbor's loaders (under the same address policy and allow-list
    /// as imgproxy URLs), and the variant made once, kept and cached like any other. Statuses are
    /// thumbor's: 400 for a bad URL, signature or image, 404 for a missing source.
    func answerThumbor(_ request: ServiceRequest, _ negotiation: Negotiation) async throws -> ServiceResponse {
        let url = try ThumborURL(parsing: request.path)
        let signer = configuration.thumborSigner
        if url.unsafe {
            guard signer.allowsUnsafe else { throw ServerError.badRequest("URL has unsafe but unsafe is not allowed") }
        } else {
            guard let signature = url.signature, signer.verify(signature, for: url.signedPart) else { throw ServerError.badRequest("malformed URL") }
        }
        let filters = ThumborFilter.parse(url.filters)
        let plan = ThumborPlan(url: url, filters: filters)
        let source = try thumborSource(plan.image)
        if case .pixels(let width) = url.width, case .pixels(let height) = url.height {
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            guard !overflow, pixels <= configuration.maxSourcePixels else {
                throw ServerError.badRequest("the size asked for is over \(configuration.maxSourcePixels) pixels")
            }
        }
        let acceptsWebP = configuration.thumborAutoWebP && negotiation.accepted.contains("image/webp")
        let varies = configuration.thumborAutoWebP && !plan.hasFormatFilter && !url.meta
        let key =
            "thumbor\n" + source.absoluteString + "\n" + url.signedPart + "\n" + (url.meta ? "meta" : "webp:\(acceptsWebP && plan.format == nil)")
            + (configuration.thumborRespectsOrientation ? "\noriented" : "")
        let variant = try await variant(key: key) {
            do {
                return try await self.makeThumbor(key: key, url: url, filters: filters, plan: plan, source: source, acceptsWebP: acceptsWebP)
            } catch let error as ImagoError {
                throw ServerError(thumborLoading: error)
            }
        }
        let delivery = DeliveryHeaders(thumborMaxAge: plan.maxAge)
        let pathKey = negotiation.pathKey(request.path)
        answeredPaths.setValue(AnsweredPath(variantKey: key, varies: varies, delivery: delivery), forKey: pathKey, cost: pathKey.utf8.count + key.utf8.count)
        metrics.keptBytes.set(Int64(memoryInUse))
        return .image(variant, request: request, cacheControl: configuration.cacheControl, varies: varies, delivery: delivery)
    }

    private func makeThumbor(
        key: String, url: ThumborURL, filters: [ThumborFilter], plan: ThumborPlan, source: URL, acceptsWebP: Bool
    ) async throws
        -> EncodedVariant
    {
        let diskKey = "imago-serve:variant\n" + key
        if let stored = storedVariant(diskKey) {
            metrics.served(from: "variant-disk")
            return stored
        }
        var transformation = ThumborTransformation(url: url, filters: filters)
        transformation.focalPoints = plan.focalPoints
        transformation.respectsOrientation = configuration.thumborRespectsOrientation
        transformation.maxPixels = configuration.maxSourcePixels
        transformation.reportOnly = url.meta
        for overlay in plan.overlayURLs where transformation.overlays[overlay] == nil {
            // thumbor answers 400 when a watermark or frame cannot be had.
            if let kept = thumborOverlays.value(forKey: overlay) {
                transformation.overlays[overlay] = kept
                continue
            }
            do {
                let image = try await pipeline.image(for: ImageRequest(url: try thumborSource(overlay), options: [.disableMemoryCacheWrites]))
                transformation.overlays[overlay] = image
                thumborOverlays.setValue(image, forKey: overlay, cost: image.cost)
            } catch {
                throw ServerError.badRequest("the watermark or frame image could not be loaded")
            }
        }
        var options: ImageRequest.Options = [.disableMemoryCacheWrites]
        if !plan.stripICC { options.insert(.keepsColorProfile) }
        let start = ContinuousClock.now
        do {
            if url.meta {
                // meta/ reports the full decode's boxes: no processor, so no reduced decode.
                let response = try await pipeline.response(for: ImageRequest(url: source, options: options))
                metrics.served(from: response.source.rawValue)
                let made = try await Self.offThePool { [transformation] in try transformation.run(response.image) }
                let json = ThumborMeta.json(image: plan.image, made: made.image, report: made.report, frames: response.image.frames.count)
                let variant = EncodedVariant(data: json, format: .json, etag: Self.etag(source: response, identity: "thumbor\n" + key, format: .json))
                storeVariant(variant, diskKey)
                return variant
            }
            let processor = ThumborProcessor(transformation: transformation, key: key)
            let response = try await pipeline.response(for: ImageRequest(url: source, options: options, processors: [processor]))
            metrics.served(from: response.source.rawValue)
            var image = response.image
            let plan = image.metadata.format == .gif ? plan.forGIFSource : plan
            let format = plan.outputFormat(
                source: response.image.metadata.format, transparent: image.metadata.hasAlpha && Self.isTransparent(image),
                animated: image.isAnimated, autoWebP: configuration.thumborAutoWebP,
                acceptsWebP: acceptsWebP)
            if !format.hasAlpha, image.metadata.hasAlpha {
                // Pillow's conversion to RGB drops alpha; it does not compose over a colour.
                image = ThumborTransformation.eachFrame(image, alpha: false) { ThumborTransformation.makeOpaque(&$0) }
            }
            let encodeStart = ContinuousClock.now
            let encoded = try await Self.encode(
                image, as: format, quality: plan.quality.map { max(1, min(100, $0)) } ?? configuration.defaultQuality, maxBytes: plan.maxBytes ?? 0)
            metrics.encodes.increment(by: Int64(encoded.encodes))
            stages.made(response, format: format, encode: encodeStart..<ContinuousClock.now, start: start)
            let variant = EncodedVariant(data: encoded.data, format: format, etag: Self.etag(source: response, identity: "thumbor\n" + key, format: format))
            storeVariant(variant, diskKey)
            return variant
        } catch {
            stages.failed(error, start: start)
            throw error
        }
    }

    /// Whether any pixel is less than opaque (thumbor's `has_transparency`).
    private static func isTransparent(_ image: Image) -> Bool {
        let pixels = image.frames[0].pixels
        var index = 3
        while index < pixels.count {
            if pixels[index] < 255 { return true }
            index += 4
        }
        return false
    }

    /// What thumbor's HTTP loader leaves unencoded (Python's `quote` with its `safe` list).
    private static let thumborURLSafe = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~@#$&()*!+=:;,?/'")

    /// The image's URL as thumbor's loaders take it: with `--local-root`, a file under it (its file
    /// loader; never outside it, a miss is a 404); else an http(s) URL, `http://` added when it has
    /// no scheme and percent-encoded when it is not already (its HTTP loader), from hosts the
    /// server allows (thumbor's `ALLOWED_SOURCES`).
    func thumborSource(_ image: String) throws(ServerError) -> URL {
        if let root = configuration.localRoot {
            let path = (image.removingPercentEncoding ?? image).split(separator: "/")
            guard !path.isEmpty, !path.contains(where: { $0 == ".." || $0.hasPrefix(".") }) else { throw ServerError(status: 404, "not found") }
            let base = root.resolvingSymlinksInPath().standardizedFileURL
            let file = path.reduce(base) { $0.appendingPathComponent(String($1)) }.resolvingSymlinksInPath().standardizedFileURL
            guard file.path.hasPrefix(base.path + "/") else { throw ServerError(status: 404, "not found") }
            return file
        }
        var text = image
        if text == text.removingPercentEncoding {
            text = text.addingPercentEncoding(withAllowedCharacters: Self.thumborURLSafe) ?? text
        }
        if !text.hasPrefix("http") { text = "http://" + text }
        guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
            throw ServerError.badRequest("no original image was specified in the given URL")
        }
        do {
            return try sources.url(for: url.absoluteString)
        } catch {
            throw ServerError.badRequest("source not allowed")
        }
    }
}

extension ServerError {
    /// What a failed load or decode tells a thumbor client, as thumbor's handler answers: a
    /// source that cannot be had is a 404 (thumbor's HTTP loader says so for any error status),
    /// one that timed out or could not be reached a 504, an empty one a 502, one that is not an
    /// image (or over the limits) a 400, a filter that fails a 500.
    init(thumborLoading error: ImagoError) {
        switch error.code.kind {
        case .httpStatus, .fileNotFound, .notCached: self.init(status: 404, "not found")
        case .emptyResponse: self.init(status: 502, "empty response")
        case .unsupportedFormat, .invalidImage, .emptyImage, .imageTooLarge, .tooLarge, .truncated, .addressRefused, .invalidURL:
            self.init(status: 400, "the image could not be loaded")
        case .processingFailed: self.init(status: 500, "the filters could not be applied")
        default: self.init(status: 504, "the image could not be fetched")
        }
    }
}
