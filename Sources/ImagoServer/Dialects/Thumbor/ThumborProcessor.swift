import Imago

/// A thumbor URL's transformation as the pipeline's processor, so the decode is reduced to the
/// size the resize needs (``ThumborTransformation/requiredDecodeSize(width:height:)``) and the
/// work runs on the pipeline's CPU stage under its decode budget.
struct ThumborProcessor: ReducedDecodeProcessing {
    let transformation: ThumborTransformation
    /// The variant's key: the URL and what else decides the picture.
    let key: String

    var identifier: String { "imago-serve.thumbor(\(key))" }

    func requiredDecodeSize(width: Int, height: Int) -> PixelSize? { transformation.requiredDecodeSize(width: width, height: height) }

    func process(_ image: Image) throws(ImagoError) -> Image { try transformation.run(image).image }
}
