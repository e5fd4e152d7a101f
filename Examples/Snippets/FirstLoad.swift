// The README's and the documentation's Swift blocks live here, between `// snippet: NAME` and
// `// end snippet`, so that they compile; `SnippetTests` checks that every ```swift block of the
// README and of the DocC articles is one of these regions, word for word.

// snippet: first-load
import Foundation
import Imago

func showCat() async throws {
    let pipeline = ImagePipeline()
    let url = URL(string: "https://example.com/cat.jpg")!
    let image = try await pipeline.image(for: url)
    print(image.width, image.height, image.metadata.format)  // RGBA8 pixels in image.pixels

    // A 256 px thumbnail, decoded at a reduced scale (JPEG DCT scaling), written as WebP.
    let thumbnail = try await pipeline.image(for: ImageRequest(url: url, thumbnail: .init(maxPixelSize: 256)))
    try WebPEncoder(quality: 80).encode(thumbnail).write(to: URL(fileURLWithPath: "cat.webp"))
}
// end snippet
