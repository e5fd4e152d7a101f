import Foundation
import Imago
import NIOCore

/// `/gallery` (with `IMAGO_GALLERY`): the page is made once, on its first request, from the image
/// files under the local root, their ThumbHashes made through the pipeline (and kept in its disk
/// cache's index when it has one).
extension ImageService {
    func answerGallery(_ request: ServiceRequest) async throws -> ServiceResponse {
        guard configuration.servesGallery, let localRoot = sources.localRoot else { throw ServerError(status: 404, "not found") }
        let links = try galleryLinks()
        let html = try await gallery.value { [pipeline] in
            let names = localRoot.files(withExtensions: ImageFormat.readableExtensions, limit: GalleryPage.maxItems)
            let items = await withTaskGroup(of: (Int, GalleryPage.Item?).self) { group in
                var items = [GalleryPage.Item?](repeating: nil, count: names.count)
                var next = 0
                // Two at a time: the page waits for all, and decodes are the work.
                func add() {
                    guard next < names.count else { return }
                    let index = next
                    next += 1
                    group.addTask {
                        guard let url = try? localRoot.file(path: names[index]) else { return (index, nil) }
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
            return GalleryPage.html(items, links: links)
        }
        let body = Data(html.utf8)
        let headers: HeaderFields = [
            "Content-Type": "text/html; charset=utf-8", "Content-Length": String(body.count), "Cache-Control": "no-cache",
        ]
        return ServiceResponse(status: 200, headers: headers, body: request.isHead ? ByteBuffer() : ByteBuffer(bytes: body))
    }

    /// The page's links: imgproxy's URLs when they are answered, else thumbor's.
    private func galleryLinks() throws(ServerError) -> GalleryPage.Links {
        if let prefix = configuration.imgproxyMount { return .imgproxy(prefix: prefix, signer: configuration.signer) }
        if let prefix = configuration.thumborMount { return .thumbor(prefix: prefix, signer: configuration.thumborSigner) }
        throw ServerError(status: 404, "not found")
    }

}
