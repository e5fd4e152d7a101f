#if PDF
    import Foundation

    /// A PDF document as Poppler reads it: its page count and the pages a decode shows, learnt by
    /// `pdfinfo`, and those pages rendered at a plan's size by `pdftoppm` (or `pdftocairo` with no
    /// background). Every run shares one deadline.
    struct PDFDocument {
        /// The document's bytes, handed to each tool.
        let data: Data
        /// How many pages it has.
        let pageCount: Int
        /// The pages shown, in order, each at least one point wide and high.
        let pages: [PDFPageList.Page]
        /// CLOCK_MONOTONIC nanoseconds at which any tool still running is killed.
        let deadline: Int64

        /// Reads the pages `options.pages` chooses: past the last page, the last page.
        static func read(_ data: Data, options: DecodingOptions) throws(ImagoError) -> PDFDocument {
            let deadline = CLibraryCall.deadline(after: options.maxDecodeDuration ?? PDFDecoder.defaultMaxDuration)
            let count = min(options.pages.count, options.maxFrames)
            var first = options.pages.first + 1
            var list: PDFPageList
            do {
                list = try info(data, pages: first...(first + count - 1), deadline: deadline)
            } catch  where first > 1 && error.code != .timedOut {
                // pdfinfo refuses a range past the end: learn the page count, and show the last.
                let whole = try info(data, pages: nil, deadline: deadline)
                first = whole.pageCount
                list = try info(data, pages: first...first, deadline: deadline)
            }
            let pages = list.pages.filter { $0.number >= first && $0.number < first + count }
            guard pages.first?.number == first else { throw ImagoError.invalid(.pdf, "pdfinfo did not describe page \(first)") }
            return PDFDocument(data: data, pageCount: list.pageCount, pages: pages, deadline: deadline)
        }

        /// The last `pdfinfo` answers by document and page range, so that a decode does not run it
        /// again after the pipeline's estimate ran it on the same bytes (a process start, about 6 ms).
        private static let pageLists = BytesKeyedShelf<ClosedRange<Int>?, PDFPageList>()

        /// `pdfinfo -box` of `pages` (all, with no range: then only the page count is of use).
        private static func info(_ data: Data, pages: ClosedRange<Int>?, deadline: Int64) throws(ImagoError) -> PDFPageList {
            if let known = pageLists.value(for: data, pages) { return known }
            var arguments = ["-box"]
            if let pages { arguments += ["-f", "\(pages.lowerBound)", "-l", "\(pages.upperBound)"] }
            // The document's own strings come first (1 MB at most), then about 400 bytes a page.
            let output = try PopplerTool.info.run(
                arguments + ["-"], document: data, maxOutput: (1 << 20) + (pages?.count ?? 1) * 1024,
                maxHeap: PopplerTool.baseMemory + 2 * data.count, deadline: deadline)
            guard let list = PDFPageList(output) else { throw ImagoError.invalid(.pdf, "pdfinfo found no page") }
            pageLists.put(list, for: data, pages)
            return list
        }

        /// The widest page's width and the pages' heights added, in points.
        var pointSize: (width: Double, height: Double) {
            (pages.map(\.upright.width).max() ?? 1, pages.reduce(0) { $0 + $1.upright.height })
        }

        /// The pages' size at 72 dpi (one pixel a point), stacked: the size a plan scales from.
        var nominalSize: PixelSize {
            let size = pointSize
            return PixelSize(width: max(1, Int(size.width.rounded())), height: max(1, Int(size.height.rounded())))
        }

        /// The size each page is rendered at for `options`.
        func renderPlan(_ options: DecodingOptions) -> RenderPlan {
            let nominal = nominalSize
            let size = options.renderSize(width: nominal.width, height: nominal.height)
            guard pages.count > 1 else { return RenderPlan(size: size, scale: nil, pageSizes: [size]) }
            // Several pages share one scale, which pdftoppm takes as a resolution and rounds up.
            let scale = Double(size.width) / pointSize.width
            let sizes = pages.map { page in
                PixelSize(width: max(1, Int((page.upright.width * scale).rounded(.up))), height: max(1, Int((page.upright.height * scale).rounded(.up))))
            }
            let stacked = PixelSize(width: sizes.map(\.width).max() ?? 1, height: sizes.reduce(0) { $0 + $1.height })
            return RenderPlan(size: stacked, scale: scale, pageSizes: sizes)
        }

        /// The sizes pages are rendered at.
        struct RenderPlan {
            /// The stacked result's size.
            var size: PixelSize
            /// Several pages' common scale (pixels a point); nil for one page, rendered at `size` exactly.
            var scale: Double?
            /// Each page's size.
            var pageSizes: [PixelSize]

            /// Most bytes the renderer may write: PPM (3 bytes a pixel) or PNG (4, and what
            /// deflate adds to stored data), a pixel of rounding each way.
            func maxOutput(transparent: Bool) -> Int {
                pageSizes.reduce(0) { total, size in
                    let pixels = (size.width + 1) * (size.height + 1)
                    return total + (transparent ? pixels * 4 + (size.height + 1) * 8 + 65_536 : pixels * 3 + 64)
                }
            }

            /// The heap the renderer is allowed: Poppler's own, the document twice (read from the
            /// pipe, then parsed), and its bitmap of the largest page twice over (anti-aliasing).
            func maxHeap(document: Int) -> Int {
                let largest = pageSizes.map { ($0.width + 1) * ($0.height + 1) * 4 }.max() ?? 0
                return PopplerTool.baseMemory + 2 * document + 2 * largest
            }
        }

        /// A rendered page: RGBA, straight alpha.
        struct RenderedPage {
            var pixels: [UInt8]
            var width: Int
            var height: Int
        }

        /// The pages rendered at `plan`'s sizes.
        func render(_ plan: RenderPlan, options: DecodingOptions) throws(ImagoError) -> [RenderedPage] {
            if options.pdfTransparentBackground {
                var rendered: [RenderedPage] = []
                for (page, size) in zip(pages, plan.pageSizes) { rendered.append(try renderTransparent(page, size: size, options: options)) }
                return rendered
            }
            let first = pages[0].number, last = pages[pages.count - 1].number
            var arguments = ["-q", "-cropbox", "-f", "\(first)", "-l", "\(last)"]
            if let scale = plan.scale {
                arguments += ["-r", String(format: "%.6f", scale * 72)]
            } else {
                arguments += Self.scaleArguments(pages[0], size: plan.size)
            }
            let output = try PopplerTool.render.run(
                arguments + ["-"], document: data, maxOutput: plan.maxOutput(transparent: false), maxHeap: plan.maxHeap(document: data.count),
                deadline: deadline)
            var pages: [RenderedPage] = []
            var offset = 0
            for expected in plan.pageSizes {
                guard let page = Self.ppm(output, at: &offset), abs(page.width - expected.width) <= 1, abs(page.height - expected.height) <= 1 else {
                    throw ImagoError.invalid(.pdf, "pdftoppm did not render the pages at the size asked")
                }
                pages.append(page)
            }
            return pages
        }

        /// The arguments that render `page` at `size` as shown: pdftoppm's `-scale-to-x` and
        /// `-scale-to-y` are the page's sides before its rotation.
        static func scaleArguments(_ page: PDFPageList.Page, size: PixelSize) -> [String] {
            let stored = page.rotation % 180 == 0 ? size : size.turned
            return ["-scale-to-x", "\(stored.width)", "-scale-to-y", "\(stored.height)"]
        }

        /// One page rendered by cairo with no background, as PNG, decoded.
        private func renderTransparent(_ page: PDFPageList.Page, size: PixelSize, options: DecodingOptions) throws(ImagoError) -> RenderedPage {
            let arguments = [
                "-q", "-png", "-transp", "-singlefile", "-cropbox", "-f", "\(page.number)", "-l", "\(page.number)",
                // pdftocairo's sides are the page's as shown (pdftoppm's, before its rotation).
                "-scale-to-x", "\(size.width)", "-scale-to-y", "\(size.height)", "-", "-",
            ]
            let plan = RenderPlan(size: size, scale: nil, pageSizes: [size])
            let png = try PopplerTool.renderTransparent.run(
                arguments, document: data, maxOutput: plan.maxOutput(transparent: true), maxHeap: plan.maxHeap(document: data.count), deadline: deadline)
            var pngOptions = DecodingOptions()
            pngOptions.maxPixels = options.maxPixels
            pngOptions.maxSide = options.maxSide
            pngOptions.maxDecodedBytes = options.maxDecodedBytes
            let decoded = try PNGDecoder().decode(png, options: pngOptions)
            guard decoded.width == size.width, decoded.height == size.height else {
                throw ImagoError.invalid(.pdf, "pdftocairo did not render the page at the size asked")
            }
            return RenderedPage(pixels: decoded.pixels, width: decoded.width, height: decoded.height)
        }

        /// The binary PPM (P6, 8 bits) at `offset` as RGBA, moving `offset` past it; nil when the
        /// bytes there are not one.
        static func ppm(_ data: Data, at offset: inout Int) -> RenderedPage? {
            // Netpbm's own header reader; pdftoppm's header is a few dozen bytes.
            let start = data.startIndex + offset
            guard start < data.endIndex, let header = try? PNMDecoder.Header(Array(data[start..<min(data.endIndex, start + 128)])),
                header.layout == .samples(.rgb), !header.isASCII, header.maxValue == 255, header.width > 0, header.height > 0,
                header.width <= 1 << 20, header.height <= 1 << 20
            else { return nil }
            let index = start + header.bodyOffset
            let (width, height) = (header.width, header.height)
            let length = width * height * 3
            guard data.endIndex - index >= length else { return nil }
            var pixels = [UInt8](repeating: 255, count: width * height * 4)
            data.withUnsafeBytes { bytes in
                let rgb = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (index - data.startIndex)
                pixels.withUnsafeMutableBufferPointer { rgba in
                    for pixel in 0..<(width * height) {
                        rgba[pixel * 4] = rgb[pixel * 3]
                        rgba[pixel * 4 + 1] = rgb[pixel * 3 + 1]
                        rgba[pixel * 4 + 2] = rgb[pixel * 3 + 2]
                    }
                }
            }
            offset = index + length - data.startIndex
            return RenderedPage(pixels: pixels, width: width, height: height)
        }
    }
#endif
