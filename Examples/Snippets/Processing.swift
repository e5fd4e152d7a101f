import Foundation
import Imago

func processing(pipeline: ImagePipeline, url: URL, url1x: URL, url2x: URL, urls: [URL]) async throws {
    // snippet: processing
    // Processors are part of the memory-cache key; variants of one URL share one transfer and one decode.
    let avatar = ImageRequest(
        url: url,
        processors: [
            try .resize(width: 300, height: 300, contentMode: .aspectFill, crop: true),
            try .roundedCorners(radius: 12, border: .init(width: 2)),
        ])  // also .crop, .circle, .gaussianBlur, .grayscale; your own conform to ImageProcessing
    print(try await pipeline.image(for: avatar).width)

    // Thumbnails at decode: JPEG DCT scaling or WebP scaled decode, then Lanczos3 to the exact size.
    let small = ImageRequest(url: url, thumbnail: .init(size: PixelSize(width: 100, height: 100), contentMode: .aspectFill, scale: 2))
    print(try await pipeline.image(for: small).scale)  // 2; `…@2x.png` URLs give 2 as well

    // Several sources: the smallest that covers the thumbnail is loaded, a cached one first.
    let best = ImageRequest(
        sources: [
            .init(url: url1x, pixelSize: PixelSize(width: 400, height: 300)),
            .init(url: url2x, pixelSize: PixelSize(width: 800, height: 600)),
        ],
        thumbnail: .init(maxPixelSize: 500))
    _ = try await pipeline.image(for: best)

    // Prefetching at low priority; a visible load of the same image joins it and raises it.
    let prefetcher = ImagePrefetcher(pipeline: pipeline)  // destination .memoryCache or .diskCache
    prefetcher.startPrefetching(with: urls)
    prefetcher.stopPrefetching(with: urls)  // cancels only what the prefetcher wanted
    // end snippet
}

// snippet: display
/// Anything on the main actor that shows an image (UIImageView and NSImageView conform on Apple).
@MainActor final class Cell: ImageDisplaying {
    let imageBinding = ImageBinding()  // holds the load; cancels it when the cell goes away
    func display(_ image: Image?) { /* draw it */  }

    func configure(with url: URL, placeholder: Image) {
        setImage(with: url, placeholder: placeholder, success: { response in print(response.source) }, failure: { error in print(error) })
    }

    func prepareForReuse(placeholder: Image) {
        setImage(with: nil as URL?, placeholder: placeholder)  // cancels, shows the placeholder
    }
}
// end snippet

func control(pipeline: ImagePipeline, signedURL: URL, image: Image) throws {
    // snippet: control
    // Signed URLs whose query changes on every request: one cache entry and one transfer per imageID.
    var signed = ImageRequest(url: signedURL)
    signed.imageID = "avatars/42.jpg"

    // The whole pipeline: hold queued downloads back (cache hits are still served), cancel
    // everything, or shut it down.
    pipeline.suspend()
    pipeline.resume()
    pipeline.cancelAll()
    pipeline.invalidate()

    // An image library: save, keep the identifier, fetch later.
    let library = try ImageLibrary(directory: URL(fileURLWithPath: "/var/lib/myapp/photos"))
    let id = try library.save(image, format: .jpeg)  // atomic; concurrent saves are safe
    let again = try library.image(for: id)  // also identifiers(), delete(_:), data(for:)
    // end snippet
    _ = again
}

func codecs(data: Data) throws {
    // snippet: codecs
    let decoded = try DecoderRegistry.standard().decode(data)  // sniffs JPEG, PNG, WebP, GIF, TIFF, AVIF, HEIC, JPEG XL, PNM, BMP, ICO, TGA
    let webp = try WebPEncoder(quality: 80).encode(decoded)  // also JPEGEncoder, PNGEncoder
    // Your own scheme or format: ImagePipeline().loaders.register(_:) takes a DataLoading
    // (the highest loaderPriority wins), .decoders.register(_:) an ImageDecoding (asked first).
    // end snippet
    _ = webp
}
