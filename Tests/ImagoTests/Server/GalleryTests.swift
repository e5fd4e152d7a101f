import Foundation
import Imago
import Testing

@testable import ImagoServer

/// `/gallery` in a real browser: Debian's headless Chromium loads the page, its placeholders are
/// painted where no image has arrived, and every image loads.
@Suite("imago serve /gallery in headless Chromium", .timeLimit(.minutes(6)))
struct GalleryTests {
    static let chromium = "/usr/bin/chromium"
    static let sources = ["jpeg/video-001.jpeg", "png/benchRGB.png", "webp/blue-purple-pink.lossy.webp"]

    static func chromium(_ arguments: [String]) async throws -> Data {
        let run = try await runProcess(
            URL(fileURLWithPath: chromium),
            ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,900"] + arguments)
        #expect(run.status == 0)
        return run.output
    }

    /// A local root holding the corpus sources under plain names.
    static func root() throws -> URL {
        let directory = try temporaryDirectory()
        for (index, source) in sources.enumerated() {
            try Corpus.data(source).write(to: directory.appendingPathComponent("\(index)-\(URL(fileURLWithPath: source).lastPathComponent)"))
        }
        return directory
    }

    @Test("the page offers each image at three widths through signed URLs and paints its ThumbHash first; Chromium loads every image")
    func inChromium() async throws {
        let root = try Self.root()
        defer { try? FileManager.default.removeItem(at: root) }
        let output = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        try await withServer({
            $0.localRoot = root
            $0.servesGallery = true
            $0.signer = URLSigner(pairs: [.init(key: Array("gallery-key".utf8), salt: Array("gallery-salt".utf8))])
        }) { server in
            let page = try await server.get("/gallery")
            #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
            let html = String(decoding: page.body, as: UTF8.self)
            // Each image: three widths, each URL signed (a changed byte is refused), and its placeholder.
            var placeholders: [Image] = []
            for (index, source) in Self.sources.enumerated() {
                let name = "\(index)-\(URL(fileURLWithPath: source).lastPathComponent)"
                let image = try DecoderRegistry.standard().decode(try Corpus.data(source))
                let hash = try ThumbHash(image: image)
                placeholders.append(hash.render())
                for width in GalleryPage.widths {
                    let path = GalleryPage.imagePath(name: name, width: width, links: .imgproxy(prefix: "", signer: server.service.configuration.signer))
                    #expect(html.contains("\(path) \(width)w"), "\(name) at \(width)")
                    let answer = try await server.get(path)
                    #expect(answer.status == 200, "\(path)")
                    #expect(try DecoderRegistry.standard().decode(answer.body).width == min(width, image.width))
                }
            }
            let tampered = GalleryPage.imagePath(
                name: "0-video-001.jpeg", width: 320, links: .imgproxy(prefix: "", signer: server.service.configuration.signer)
            )
            .replacingOccurrences(of: "320", with: "321")
            #expect(try await server.get(tampered).status == 403)
            #expect(html.components(separatedBy: "background-image: url(data:image/png;base64,").count == Self.sources.count + 1)

            // 1. The page with no image reachable (saved to a file: its image URLs lead nowhere): each
            // tile shows its placeholder's colours.
            let saved = output.appendingPathComponent("gallery.html")
            try html.write(to: saved, atomically: true, encoding: .utf8)
            let placeholderShot = output.appendingPathComponent("placeholders.png")
            _ = try await Self.chromium(["--screenshot=\(placeholderShot.path)", saved.absoluteString])
            let shot = try DecoderRegistry.standard().decode(try Data(contentsOf: placeholderShot))
            for placeholder in placeholders {
                let colour = Self.average(placeholder)
                #expect(Self.contains(shot, colour), "no tile shows the placeholder colour \(colour)")
            }

            // 2. The live page: every image loads; the screenshot is kept as the test's attachment.
            let url = server.base + "/gallery"
            let dom = String(decoding: try await Self.chromium(["--virtual-time-budget=30000", "--dump-dom", url]), as: UTF8.self)
            let loaded = dom.components(separatedBy: "data-loaded=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
            #expect(loaded.count == Self.sources.count, "\(dom.prefix(2000))")
            #expect(loaded.allSatisfy { $0 > 0 })
            let liveShot = output.appendingPathComponent("gallery.png")
            _ = try await Self.chromium(["--virtual-time-budget=30000", "--screenshot=\(liveShot.path)", url])
            let live = try Data(contentsOf: liveShot)
            #expect(try DecoderRegistry.standard().decode(live).width == 1200)
            Attachment.record(live, named: "gallery.png")
            Attachment.record(try Data(contentsOf: placeholderShot), named: "gallery-placeholders.png")
        }
    }

    /// The mean colour of an opaque-ish image.
    static func average(_ image: Image) -> (Int, Int, Int) {
        var sums = (0, 0, 0)
        let pixels = image.pixels
        for offset in stride(from: 0, to: pixels.count, by: 4) {
            sums.0 += Int(pixels[offset])
            sums.1 += Int(pixels[offset + 1])
            sums.2 += Int(pixels[offset + 2])
        }
        let count = pixels.count / 4
        return (sums.0 / count, sums.1 / count, sums.2 / count)
    }

    /// Whether some 8×8 block of `shot` averages within 24 per channel of `colour`.
    static func contains(_ shot: Image, _ colour: (Int, Int, Int)) -> Bool {
        for y in stride(from: 0, to: shot.height - 8, by: 8) {
            for x in stride(from: 0, to: shot.width - 8, by: 8) {
                var sums = (0, 0, 0)
                for dy in 0..<8 {
                    for dx in 0..<8 {
                        let pixel = shot.pixel(x: x + dx, y: y + dy)
                        sums.0 += Int(pixel.r)
                        sums.1 += Int(pixel.g)
                        sums.2 += Int(pixel.b)
                    }
                }
                if abs(sums.0 / 64 - colour.0) <= 24, abs(sums.1 / 64 - colour.1) <= 24, abs(sums.2 / 64 - colour.2) <= 24 { return true }
            }
        }
        return false
    }
}
