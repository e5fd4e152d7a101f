import Foundation
import Imago

// Usage: Consumer OUTPUT-DIR URL-OR-PATH...
// Loads every source as a 256 px thumbnail, writes the first as WebP, loads the first twice at
// once (one transfer), cancels a load, and shows an error in words.
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first, arguments.count >= 2 else {
    print("usage: Consumer OUTPUT-DIR URL-OR-PATH...")
    exit(64)
}
let sources = arguments.dropFirst().map { $0.contains("://") ? URL(string: $0)! : URL(fileURLWithPath: $0) }

let pipeline = ImagePipeline()
for url in sources {
    let request = ImageRequest(url: url, thumbnail: .init(maxPixelSize: 256))
    let image = try await pipeline.image(for: request)
    print("\(url.lastPathComponent): \(image.width)×\(image.height)")
}

let first = try await pipeline.image(for: ImageRequest(url: sources[0], thumbnail: .init(maxPixelSize: 256)))
let webp = try WebPEncoder(quality: 80).encode(first)
let written = URL(fileURLWithPath: output).appendingPathComponent("thumbnail.webp")
try webp.write(to: written)
print("wrote \(written.path) (\(webp.count) bytes)")

// Two loads of one URL at once share one transfer; the second says it joined.
pipeline.suspend()
let a = pipeline.imageTask(with: ImageRequest(url: sources[0]))
let b = pipeline.imageTask(with: ImageRequest(url: sources[0]))
pipeline.resume()
let (responseA, responseB) = (try await a.response, try await b.response)
print("coalesced: \(responseA.joinedTransfer != responseB.joinedTransfer)")

// A cancelled load completes with .cancelled.
pipeline.suspend()
let cancelled = pipeline.imageTask(with: ImageRequest(url: sources[sources.count - 1], options: .disableMemoryCacheReads))
cancelled.cancel()
pipeline.resume()
do {
    _ = try await cancelled.response
} catch {
    print("cancelled: \(error.code == .cancelled)")
}

// Errors read as sentences.
do {
    _ = try await pipeline.image(for: URL(fileURLWithPath: "/nonexistent/cat.jpg"))
} catch {
    print("error: \(error.localizedDescription)")
}
