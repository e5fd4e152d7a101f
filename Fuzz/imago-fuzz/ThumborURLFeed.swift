import Foundation
import Imago
@testable import ImagoServer

/// The `thumbor-url` harness's input read as a small image and a thumbor path: the first two bytes
/// give the image's sides (1…64), the rest is the path after `/unsafe/`. It is parsed as thumbor's
/// grammar, its filters and plan read, its reduced-decode size asked, and when it parses it runs
/// through the transformation on the image (watermark and frame given the image itself). Every
/// input must end in an image, a 400, or an ImagoError, within the pixel bound.
enum ThumborURLFeed {
    static func run(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let width = 1 + Int(data[0] % 64), height = 1 + Int(data[1] % 64)
        let text = String(decoding: data.dropFirst(2), as: UTF8.self)
        guard let url = try? ThumborURL(parsing: "/unsafe/" + text) else { return }
        // The compiler the server runs: a URL it takes gives one plan, the same twice.
        if let plan = try? PlanCompilers.service.thumborPlan("/unsafe/" + text, PlanCompilers.negotiation) {
            guard plan.key == (try? PlanCompilers.service.thumborPlan("/unsafe/" + text, PlanCompilers.negotiation))?.key else {
                fatalError("thumbor URL \(text) compiled to two keys")
            }
        }
        let filters = ThumborFilter.parse(url.filters)
        let plan = ThumborPlan(url: url, filters: filters)
        let image = ImgproxyOptionsFeed.pattern(width: width, height: height)
        var transformation = ThumborTransformation(url: url, filters: filters)
        transformation.focalPoints = plan.focalPoints
        transformation.maxPixels = 1 << 20
        for overlay in plan.overlayURLs { transformation.overlays[overlay] = image }
        _ = PlanProcessor(transformation, maxPixels: 1 << 20).requiredDecodeSize(width: width, height: height)
        // The service refuses a box over its pixel limit before any work.
        if case .pixels(let w) = url.width, case .pixels(let h) = url.height,
            w.multipliedReportingOverflow(by: h).partialValue > 1 << 20 || w > 1 << 20 || h > 1 << 20
        {
            return
        }
        guard let result = try? transformation.run(image).image else { return }
        guard result.width * result.height <= 1 << 20, result.frames.allSatisfy({ $0.pixels.count == result.width * result.height * 4 }) else {
            fatalError("thumbor URL \(text) made \(result.width)×\(result.height)")
        }
    }
}
