import Foundation
import Imago

func placeholders(pipeline: ImagePipeline, url: URL) async throws {
    // snippet: placeholders
    let image = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(maxPixelSize: 100)))
    let thumbHash = try ThumbHash(image: image)  // thumbHash.base64: "k0oGLQaSVsN0BVhn2oq2Z5SQUQcZ"
    let blurHash = try BlurHash(image: image, components: (4, 3))
    let standIn = try thumbHash.render(width: 320, height: 240)  // an Image to show until the real one arrives
    // end snippet
    print(blurHash.string, standIn.width)
}
