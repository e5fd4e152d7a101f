import Imago

/// The picture a plan's steps are run on, and where they stand: the steps run so far, and the
/// picture's size in full-decode pixels, which a reduced decode has fewer of until the first
/// resize. Every step's size is checked against the canvas budget before any of them runs.
final class StepCanvas {
    private(set) var image: Image
    /// The picture's size in the pixels the steps are written in.
    private var size: PixelSize
    /// How much of the picture the image's pixels cover (``Image/coveredSize``): less than its size
    /// on a reduced decode whose last row and column are partial, until a step remakes it.
    private var covered: (width: Double, height: Double)
    private var done = 0
    private let maxPixels: Int
    /// Whether resizes average in linear light (``ImageProcessors/Resize/linearLight``).
    private let linearLight: Bool

    init(_ image: Image, fullSize: PixelSize, maxPixels: Int, linearLight: Bool = false) {
        self.image = image
        self.linearLight = linearLight
        size = fullSize
        covered = image.coveredSize
        self.maxPixels = maxPixels
    }

    /// Runs the steps of `steps` not run yet.
    func run(_ steps: [PixelStep]) throws(ImagoError) {
        guard steps.count > done else { return }
        let next = steps[done...]
        try checkBudget(next)
        for step in next {
            try perform(step)
            done += 1
        }
    }

    /// Refuses steps any of which would make a picture over ``maxPixels`` (or of no pixels).
    private func checkBudget(_ steps: ArraySlice<PixelStep>) throws(ImagoError) {
        var size = self.size
        for step in steps {
            guard let next = step.size(after: size) else { return }
            let (pixels, overflow) = next.width.multipliedReportingOverflow(by: next.height)
            guard !overflow, pixels <= maxPixels, next.width > 0, next.height > 0 else {
                throw ImagoError(
                    .processingFailed("the URL asks for an image of \(next.width)×\(next.height), over \(maxPixels) pixels"), url: nil, stage: .processing)
            }
            size = next
        }
    }

    private func perform(_ step: PixelStep) throws(ImagoError) {
        // How many of the image's pixels one of the steps' pixels is: below 1 on a reduced decode.
        let scale = (x: covered.width / Double(size.width), y: covered.height / Double(size.height))
        switch step {
        case .undoOrientation(let orientation): image = try Self.undo(orientation, on: image)
        case .firstFrame:
            if image.frames.count > 1 { (image.frames, image.loopCount) = ([image.frames[0]], 0) }
        case .crop(let box): image = try Self.crop(image, box, scale: scale)
        case .smartCrop(let width, let height, let faces, let withoutFaces):
            let mapped = (width: max(1, Int((Double(width) * scale.x).rounded())), height: max(1, Int((Double(height) * scale.y).rounded())))
            switch withoutFaces {
            case .saliency: image = try ImageProcessors.SmartCrop(width: mapped.width, height: mapped.height, faces: faces).process(image)
            case .centre:
                let window = (width: min(mapped.width, image.width), height: min(mapped.height, image.height))
                let found = faces?.faces(in: image) ?? []
                let corner =
                    FaceDetector.window(width: window.width, height: window.height, in: (image.width, image.height), around: found)
                    ?? (Self.centred(window.width, in: image.width), Self.centred(window.height, in: image.height))
                if window.width < image.width || window.height < image.height {
                    image = try ImageProcessors.Crop(x: corner.x, y: corner.y, width: window.width, height: window.height).process(image)
                }
            }
        case .resize(let width, let height):
            let target = PixelSize(width: max(1, width), height: max(1, height))
            if target != PixelSize(width: image.width, height: image.height) {
                var resize = try ImageProcessors.Resize(size: target, contentMode: .fill, upscale: true)
                resize.linearLight = linearLight
                image = try resize.process(image, covering: covered)
            }
        case .rotate(let degrees):
            if let rotation = ImageProcessors.Rotate(degrees: degrees) { image = try rotation.process(image) }
        case .flip(let horizontal, let vertical):
            if horizontal || vertical { image = try ImageProcessors.Flip(horizontal: horizontal, vertical: vertical).process(image) }
        case .extend(let width, let height, let x, let y, let background):
            image = try ImageProcessors.Extend(width: width, height: height, x: x, y: y, background: background).process(image)
        case .flatten(let background): image = try ImageProcessors.Flatten(background: background).process(image)
        case .filter(let filter): image = try filter.apply(to: image)
        }
        size = step.size(after: size) ?? PixelSize(width: image.width, height: image.height)
        switch step {
        case .firstFrame, .flip: break
        case .undoOrientation(let orientation) where !orientation.swapsDimensions: break
        case .undoOrientation: covered = (covered.height, covered.width)
        case .rotate(let degrees) where degrees % 180 == 0: break
        case .rotate: covered = (covered.height, covered.width)
        default: covered = (Double(image.width), Double(image.height))
        }
    }

    /// Where a `side` centres in `outer`: half the difference plus one, rounded half to even, as
    /// imgproxy centres.
    static func centred(_ side: Int, in outer: Int) -> Int { min(max(0, Int((Double(outer - side + 1) / 2).rounded(.toNearestOrEven))), outer - side) }

    /// `box`, in the steps' pixels, cut from `image`, which has `scale` of them; kept inside it.
    static func crop(_ image: Image, _ box: PixelBox, scale: (x: Double, y: Double)) throws(ImagoError) -> Image {
        let map = { (value: Int, factor: Double) in factor == 1 ? value : Int((Double(value) * factor).rounded()) }
        let x = min(max(map(box.left, scale.x), 0), image.width - 1), y = min(max(map(box.top, scale.y), 0), image.height - 1)
        let width = max(1, min(map(box.right, scale.x), image.width) - x), height = max(1, min(map(box.bottom, scale.y), image.height) - y)
        guard x != 0 || y != 0 || width != image.width || height != image.height else { return image }
        return try ImageProcessors.Crop(x: x, y: y, width: width, height: height).process(image)
    }

    /// `image` back in the file's stored orientation: the inverse of turning it upright by
    /// `orientation` (a rotation, then a mirror for the mirrored ones).
    static func undo(_ orientation: ImageOrientation, on image: Image) throws(ImagoError) -> Image {
        guard orientation != .up else { return image }
        let angle: Int =
            switch orientation {
            case .down, .downMirrored: 180
            case .leftMirrored, .right: 90
            case .rightMirrored, .left: 270
            default: 0
            }
        let mirrored = [.upMirrored, .downMirrored, .leftMirrored, .rightMirrored].contains(orientation)
        let unflipped = try ImageProcessors.Flip(horizontal: mirrored, vertical: false).process(image)
        return try (ImageProcessors.Rotate(degrees: -angle) ?? ImageProcessors.Rotate(degrees: 0)!).process(unflipped)
    }
}
