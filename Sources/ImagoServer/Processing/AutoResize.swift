import Imago

/// imgproxy's `auto` resizing, after a resize that covered the box: `fill` (a crop at the
/// gravity) when the image and the box are both landscape or both portrait, else `fit` (a further
/// shrink into the box).
struct AutoResize: ImageProcessing, Hashable {
    let crop: GravityCrop

    var identifier: String { "imago-server.auto(\(crop.identifier))" }

    func process(_ image: Image) throws(ImagoError) -> Image {
        let sameShape = (image.width >= image.height) == (crop.width >= crop.height)
        if sameShape { return try crop.process(image) }
        return try ImageProcessors.Resize(size: PixelSize(width: crop.width, height: crop.height), contentMode: .aspectFit).process(image)
    }
}
