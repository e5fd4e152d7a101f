import Foundation

/// Renders pages of a PDF document with Poppler (Debian's poppler-utils: `pdfinfo` to read the
/// pages' boxes, `pdftoppm` to render them, `pdftocairo` for a transparent background), each in a
/// child process that is killed at the work deadline and whose heap the kernel bounds
/// (`PopplerTool`). A page is rendered at the size the plan needs, as vectors are
/// (``DecodingOptions/renderSize(width:height:)``: the crop box at 72 dpi is the nominal size),
/// never large and scaled; ``DecodingOptions/pages`` chooses the page, or several stacked top to
/// bottom and aligned left. Poppler runs no JavaScript and fetches nothing: it is given the
/// document alone, on its standard input.
///
/// None is in ``DecoderRegistry/standard(families:)`` unless ``ImageFormatInfo/Family/document``
/// is asked for.
public struct PDFDecoder: ImageDecoding {
    public let format = ImageFormat.pdf

    /// Makes a PDF decoder.
    public init() {}

    /// `%PDF-` at the start. (Poppler also finds it after up to 1,024 bytes of anything, which
    /// would let a JPEG or PNG whose first kilobyte holds those five bytes be read as a PDF.)
    public func canDecode(_ data: Data) -> Bool {
        data.starts(with: Data("%PDF-".utf8))
    }

    /// How long Poppler may work on one document when ``DecodingOptions/maxDecodeDuration`` sets
    /// no deadline.
    public static let defaultMaxDuration: Duration = .seconds(60)

    #if PDF
        /// The pages rendered and held (Poppler's PPM or PNG, the stacked RGBA) and the heap the
        /// renderer is allowed: learning the pages' sizes runs `pdfinfo`.
        public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
            guard let document = try? PDFDocument.read(data, options: options) else { return nil }
            let nominal = document.nominalSize
            guard (try? options.check(width: nominal.width, height: nominal.height)) != nil else {
                return DecodeEstimate(width: nominal.width, height: nominal.height, bytes: 0)
            }
            let plan = document.renderPlan(options)
            var estimate = DecodeEstimate.buffers(1, width: plan.size.width, height: plan.size.height, options: options)
            guard estimate.bytes > 0 else { return DecodeEstimate(width: nominal.width, height: nominal.height, bytes: 0) }
            estimate.bytes += plan.maxOutput(transparent: options.pdfTransparentBackground) + plan.maxHeap(document: data.count)
            (estimate.width, estimate.height) = (nominal.width, nominal.height)
            if plan.size != nominal { estimate.decodedSize = plan.size }
            return estimate
        }

        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            let document = try PDFDocument.read(data, options: options)
            let nominal = document.nominalSize
            try options.check(width: nominal.width, height: nominal.height)
            let plan = document.renderPlan(options)
            try options.check(width: plan.size.width, height: plan.size.height)
            try options.checkMemory(1, width: plan.size.width, height: plan.size.height)
            let pages = try document.render(plan, options: options)
            // Pages stacked top to bottom, aligned left; what a narrower page leaves is transparent.
            let width = pages.map(\.width).max() ?? 1, height = pages.reduce(0) { $0 + $1.height }
            try options.check(width: width, height: height)
            try options.checkMemory(1, width: width, height: height)
            var pixels: [UInt8]
            if pages.count == 1 {
                pixels = pages[0].pixels
            } else {
                pixels = [UInt8](repeating: 0, count: width * height * 4)
                var top = 0
                for page in pages {
                    copyRGBA(page.pixels, width: page.width, height: page.height, into: &pixels, canvasWidth: width, at: (0, top))
                    top += page.height
                }
            }
            let hasAlpha = options.pdfTransparentBackground || pages.contains { $0.width < width }
            var metadata = ImageMetadata(format: .pdf, originalWidth: nominal.width, originalHeight: nominal.height, hasAlpha: hasAlpha)
            metadata.pdf = PDFInfo(pageCount: document.pageCount, firstPage: document.pages[0].number - 1, pagesRendered: pages.count)
            return Image(width: width, height: height, frames: [.init(pixels: pixels)], metadata: metadata)
        }
    #else
        public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
            throw ImagoError(.codecUnavailable("PDF is not available: Imago was built without its PDF trait"), url: nil, stage: .decoding)
        }
    #endif
}
