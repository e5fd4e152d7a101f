import Foundation

@testable import Imago

/// What Imago reads from Poppler's tools, which a hostile document shapes: `pdfinfo -box`'s text
/// (the document's own strings come first in it) read into pages, their layout planned for a
/// size, and pdftoppm's PPM output split into pages. The first byte picks the size asked for.
enum PDFInfoFeed {
    static func run(_ data: Data) {
        guard let first = data.first else { return }
        let body = Data(data.dropFirst())
        #if PDF
            if let list = PDFPageList(body), !list.pages.isEmpty {
                let document = PDFDocument(data: Data(), pageCount: list.pageCount, pages: list.pages, deadline: 0)
                var options = DecodingOptions()
                options.targetSize = PixelSize(width: Int(first) * 4 + 1, height: Int(first) + 1)
                let plan = document.renderPlan(options)
                _ = plan.maxOutput(transparent: first % 2 == 0)
                _ = plan.maxHeap(document: body.count)
                _ = document.nominalSize
            }
            var offset = 0
            while let page = PDFDocument.ppm(body, at: &offset), offset < body.count {
                _ = page.pixels.count
            }
        #endif
    }
}
