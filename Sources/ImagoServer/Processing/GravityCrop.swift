import Imago

/// Crops an image to a box at a gravity, as imgproxy's `fill`: the box's size where the image is
/// larger, the image's own side where it is smaller. With `keepsShape`, an image smaller than the
/// box is cropped to the box's aspect ratio instead (imgproxy's `fill-down`).
struct GravityCrop: ImageProcessing, Hashable {
    let width: Int
    let height: Int
    let gravity: ProcessingOptions.Gravity
    let offsetX: Int
    let offsetY: Int
    let keepsShape: Bool

    var identifier: String { "imago-server.crop(\(width)x\(height),\(gravity.rawValue),\(offsetX),\(offsetY)\(keepsShape ? ",shape" : ""))" }

    func process(_ image: Image) throws(ImagoError) -> Image {
        var (cropWidth, cropHeight) = (min(width, image.width), min(height, image.height))
        if keepsShape, image.width < width || image.height < height {
            let scale = min(Double(image.width) / Double(width), Double(image.height) / Double(height))
            (cropWidth, cropHeight) = (max(1, Int(Double(width) * scale)), max(1, Int(Double(height) * scale)))
        }
        guard cropWidth < image.width || cropHeight < image.height else { return image }
        let x = Self.start(gravity.horizontal, free: image.width - cropWidth, offset: offsetX)
        let y = Self.start(gravity.vertical, free: image.height - cropHeight, offset: offsetY)
        return try ImageProcessors.Crop(x: x, y: y, width: cropWidth, height: cropHeight).process(image)
    }

    /// Where the crop starts along one axis: at the low edge, the high edge or the middle, moved
    /// by the offset away from that edge (towards the high edge from the middle), kept inside.
    private static func start(_ edge: Int, free: Int, offset: Int) -> Int {
        let position =
            switch edge {
            case -1: offset
            case 1: free - offset
            default: free / 2 + offset
            }
        return min(max(position, 0), free)
    }
}

extension ProcessingOptions.Gravity {
    /// -1 west, 0 centre, 1 east.
    var horizontal: Int {
        switch self {
        case .west, .northWest, .southWest: -1
        case .east, .northEast, .southEast: 1
        default: 0
        }
    }

    /// -1 north, 0 centre, 1 south.
    var vertical: Int {
        switch self {
        case .north, .northEast, .northWest: -1
        case .south, .southEast, .southWest: 1
        default: 0
        }
    }
}
