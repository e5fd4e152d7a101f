import Foundation
import Imago
@testable import ImagoServer

/// The server's dialect compilers, as a request reaches them.
enum PlanCompilers {
    /// A service with the default settings (no local root, no disk cache).
    static let service = try! ImageService(configuration: ServerConfiguration())
    /// Faces for smart and object gravities: Debian's face cascade when installed.
    static let faces = FaceCascade(path: FaceDetector.systemCascadePath)
    /// A client that accepts WebP.
    static let negotiation = Negotiation(ServiceRequest(path: "/", accept: "image/webp,*/*"), auto: ServerConfiguration().output.autoFormats, enforced: [])
}

/// The `imgproxy-options` harness's input read as a small image and an imgproxy options path: the
/// first two bytes give the image's sides (1…64; the first's top bits the face settings), the rest is text split at `/` into option
/// segments, parsed as a URL's and, when they parse, run through imgproxy's processing on the
/// image (and, with `aq`, encoded by auto quality's search); and as `/info` options, their facts taken. Every input must end in an image, a 4xx, or
/// an ImagoError, within the pixel bound.
enum ImgproxyOptionsFeed {
    static func run(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let width = 1 + Int(data[0] % 64), height = 1 + Int(data[1] % 64)
        let text = String(decoding: data.dropFirst(2), as: UTF8.self)
        // The text as a whole path (the second byte's top bit: presets only), its options checked
        // against an allow-list; and as preset definitions.
        if let path = try? ProcessingPath(parsing: "/_/" + text, presetsOnly: data[1] & 0x80 != 0) {
            _ = try? path.checkOptions(allowed: ["w", "pr", "resize"], kind: "processing")
            _ = try? ProcessingOptions(parsing: path.options, presets: ["p": ["w:10", "pr:p"], "default": ["q:5"]])
        }
        var definitions = PresetDefinitions()
        if (try? definitions.add(text, separator: ",", origin: "fuzz")) != nil {
            _ = try? definitions.table { segments, table throws(ServerError) in _ = try ProcessingOptions(parsing: segments, presets: table) }
        }
        // The same segments as /info options: parsed, and their facts taken of the image.
        if let info = try? InfoOptions(
            parsing: text.split(separator: "/").map(String.init), presets: ["p": ["size:0", "pr:p"], "default": ["bh:1:1"]])
        {
            _ = info.key
            let image = pattern(width: width, height: height)
            _ = try? ImageFacts.json(of: image, data: Data(data), options: info)
        }
        guard let options = try? ProcessingOptions(parsing: text.split(separator: "/").map(String.init), presets: ["p": ["w:10", "pr:p"]]) else {
            return
        }
        _ = options.key
        // The compiler the server runs: the options give one plan, its key derived from all of them.
        let source = URL(string: "https://example.com/a.jpg")!
        let delivery = DeliveryHeaders(options: options, source: source, returnsAttachment: false)
        let plan = PlanCompilers.service.imgproxyPlan(
            url: source, options: options, explicit: nil, negotiation: PlanCompilers.negotiation, delivery: delivery)
        guard plan.key.contains(options.key), case .image(let recipe) = plan.product, recipe.identity.hasPrefix(options.key) else {
            fatalError("imgproxy options \(text) compiled to an unexpected plan")
        }
        guard (try? ImgproxySteps.checkRequestedSize(options, maxPixels: 1 << 20)) != nil else { return }
        let image = pattern(width: width, height: height)
        var planner = ImgproxySteps(options: options, maxResultDimension: 0, watermark: nil)
        // The first byte's top bits turn face-aware smart crop and the object fallback on and off.
        planner.faces = .init(cascade: PlanCompilers.faces, smartCropFindsFaces: data[0] & 0x80 != 0, objectsFallBackToSmart: data[0] & 0x40 != 0)
        var processor = PlanProcessor(planner)
        processor.maxPixels = 1 << 20
        guard let result = try? processor.process(image) else { return }
        guard result.width * result.height <= 1 << 20, result.frames.allSatisfy({ $0.pixels.count == result.width * result.height * 4 }) else {
            fatalError("imgproxy options \(text) made \(result.width)×\(result.height)")
        }
        // `aq`: whatever bounds, target and error it sets, the search ends in a quality it tried.
        if options.autoQuality != nil, result.width * result.height <= 128 * 128,
            let search = AutoQualitySettings().applying(options.autoQuality).search(
                format: .jpeg, width: result.width, height: result.height, animated: false),
            let choice = try? search.encode(result, format: .jpeg, encoder: { JPEGEncoder(quality: $0) })
        {
            guard (search.minQuality...search.maxQuality).contains(choice.quality), choice.encodes <= AutoQuality.maximumEncodes + 1 else {
                fatalError("aq \(text) chose quality \(choice.quality) in \(choice.encodes) encodes")
            }
        }
    }

    /// A `width × height` RGBA image of a fixed byte pattern: what the options harnesses process.
    static func pattern(width: Int, height: Int) -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index &* 37) }
        return Image(
            width: width, height: height, frames: [Image.Frame(pixels: pixels)],
            metadata: ImageMetadata(format: .png, originalWidth: width, originalHeight: height, hasAlpha: true))
    }
}
