import Foundation
import Imago
import NIOCore

/// `/gallery` (with `IMAGO_GALLERY`): the page is made once, on its first request, from the image
/// files under the local root, their ThumbHashes made through the pipeline (and kept in its disk
/// cache's index when it has one).
extension ImageService {
    func answerGallery(_ request: ServiceRequest) async throws -> ServiceResponse {
        guard configuration.servesGallery, let root = configuration.localRoot else { throw ServerError(status: 404, "not found") }
        let html = try await gallery.page { [pipeline, signer = configuration.signer] in
            let names = Self.galleryFiles(under: root)
            let items = await withTaskGroup(of: (Int, GalleryPage.Item?).self) { group in
                var items = [GalleryPage.Item?](repeating: nil, count: names.count)
                var next = 0
                // Two at a time: the page waits for all, and decodes are the work.
                func add() {
                    guard next < names.count else { return }
                    let index = next
                    next += 1
                    group.addTask {
                        let url = root.appendingPathComponent(names[index])
                        guard let hash = try? await pipeline.placeholder(for: ImageRequest(url: url)) else { return (index, nil) }
                        return (index, try? GalleryPage.item(name: names[index], placeholder: hash))
                    }
                }
                add()
                add()
                for await (index, item) in group {
                    items[index] = item
                    add()
                }
                return items.compactMap { $0 }
            }
            return GalleryPage.html(items, signer: signer)
        }
        let body = Data(html.utf8)
        let headers: HeaderFields = [
            "Content-Type": "text/html; charset=utf-8", "Content-Length": String(body.count), "Cache-Control": "no-cache",
        ]
        return ServiceResponse(status: 200, headers: headers, body: request.isHead ? ByteBuffer() : ByteBuffer(bytes: body))
    }

    /// The image files under `root` (by extension, symbolic links followed), sorted, at most
    /// ``GalleryPage/maxItems``, as paths relative to it.
    static func galleryFiles(under root: URL) -> [String] {
        let extensions: Set<String> = ["jpg", "jpeg", "png", "webp", "gif", "avif", "heic", "jxl", "tif", "tiff", "bmp"]
        let base = root.resolvingSymlinksInPath().standardizedFileURL
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var names: [String] = []
        for case let file as URL in walker where extensions.contains(file.pathExtension.lowercased()) {
            let path = file.resolvingSymlinksInPath().standardizedFileURL.path
            guard path.hasPrefix(base.path + "/") else { continue }
            names.append(String(path.dropFirst(base.path.count + 1)))
        }
        return Array(names.sorted().prefix(GalleryPage.maxItems))
    }
}

/// The gallery page, made once by the first request that asks (others wait for it); made again
/// after a failure.
actor GalleryCache {
    private var making: Task<String, any Error>?

    func page(_ make: @escaping @Sendable () async throws -> String) async throws -> String {
        if let making { return try await making.value }
        let task = Task { try await make() }
        making = task
        do {
            return try await task.value
        } catch {
            making = nil
            throw error
        }
    }
}
