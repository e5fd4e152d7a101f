import Foundation
import Imago

/// `/gallery`: a page of the images under the local root, each an `<img>` whose `srcset` offers
/// URLs at several widths in a dialect the server answers (imgproxy's when it is mounted, else
/// thumbor's; signed when the server checks signatures) and whose background
/// is its ThumbHash, rendered here as a 32-pixel PNG, so each tile shows the image's colours until
/// the image arrives. A few lines of script mark each image `data-placeholder-shown` when its
/// placeholder was painted before it loaded, and `data-loaded` when it loaded, for tests and the
/// curious.
struct GalleryPage {
    /// One tile.
    struct Item {
        /// The file's path under the local root.
        var name: String
        /// Width over height, from the ThumbHash.
        var aspectRatio: Double
        /// The placeholder as a `data:` URL.
        var placeholder: String
    }

    /// The widths the `srcset` offers.
    static let widths = [320, 640, 1024]
    /// The most images a page shows.
    static let maxItems = 120

    /// The tile of `file` (under the local root, at `name`), its ThumbHash from `placeholder`.
    static func item(name: String, placeholder: ThumbHash) throws -> Item {
        let png = try PNGEncoder().encode(placeholder.render())
        return Item(name: name, aspectRatio: placeholder.aspectRatio, placeholder: "data:image/png;base64," + png.base64EncodedString())
    }

    /// How the page's image URLs are written: in a dialect the server answers, under its mount.
    enum Links: Sendable {
        /// imgproxy's `rs:fit:W:0` under `prefix`, signed with the first key when there is one.
        case imgproxy(prefix: String, signer: URLSigner)
        /// thumbor's `fit-in/Wx0` under `prefix`, signed with its key when there is one, else `unsafe`.
        case thumbor(prefix: String, signer: ThumborSigner)
    }

    /// The path of `name` fitted to `width` pixels wide, format negotiated, in `links`' dialect.
    static func imagePath(name: String, width: Int, links: Links) -> String {
        let encoded = name.split(separator: "/").map {
            String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "@"))) ?? ""
        }
        .joined(separator: "/")
        switch links {
        case .imgproxy(let prefix, let signer):
            let signed = "/rs:fit:\(width):0/plain/local:///\(encoded)"
            let signature = signer.pairs.first.map { URLSigner.signature(for: signed, pair: $0, size: signer.signatureSize) } ?? "insecure"
            return prefix + "/" + signature + signed
        case .thumbor(let prefix, let signer):
            let signed = "fit-in/\(width)x0/\(encoded)"
            let signature = signer.key.map { ThumborSigner.signature(for: signed, key: String(decoding: $0, as: UTF8.self)) } ?? "unsafe"
            return prefix + "/" + signature + "/" + signed
        }
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// The page.
    static func html(_ items: [Item], links: Links) -> String {
        var tiles = ""
        for item in items {
            let srcset = widths.map { "\(imagePath(name: item.name, width: $0, links: links)) \($0)w" }.joined(separator: ", ")
            let ratio = String(format: "%.4f", max(0.1, min(10, item.aspectRatio)))
            tiles += """
                <figure><img alt="\(escaped(item.name))" src="\(imagePath(name: item.name, width: widths[1], links: links))" \
                srcset="\(srcset)" sizes="(max-width: 600px) 100vw, (max-width: 1200px) 50vw, 33vw" \
                style="aspect-ratio: \(ratio); background-image: url(\(item.placeholder))"></figure>

                """
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Imago gallery</title>
            <style>
            body { margin: 0; padding: 16px; font: 15px system-ui, sans-serif; background: #111; color: #eee; }
            main { display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: 12px; }
            figure { margin: 0; }
            img { display: block; width: 100%; height: auto; background-size: cover; border-radius: 6px; }
            </style></head>
            <body><h1>Imago gallery</h1>
            <p>\(items.count) images from the local root, each offered at \(widths.map(String.init).joined(separator: ", ")) pixels wide \
            and painted from its ThumbHash until it arrives.</p>
            <main>
            \(tiles)</main>
            <script>
            for (const img of document.querySelectorAll("main img")) {
              if (!img.complete && getComputedStyle(img).backgroundImage.startsWith("url(\\"data:image/png")) img.dataset.placeholderShown = "1";
              const loaded = () => { if (img.naturalWidth > 0) img.dataset.loaded = String(img.naturalWidth); };
              if (img.complete) loaded(); else img.addEventListener("load", loaded);
            }
            </script>
            </body></html>

            """
    }
}
