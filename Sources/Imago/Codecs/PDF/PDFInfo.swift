/// What a PDF document held and which of its pages a decode rendered: what `imago info` and the
/// server's `/info` report of a PDF source, in ``ImageMetadata/pdf``.
public struct PDFInfo: Sendable, Hashable, Encodable {
    /// How many pages the document has.
    public var pageCount: Int
    /// The first page rendered, from 0.
    public var firstPage: Int
    /// How many pages were rendered (stacked top to bottom).
    public var pagesRendered: Int

    /// Makes the description.
    public init(pageCount: Int, firstPage: Int, pagesRendered: Int) {
        self.pageCount = pageCount
        self.firstPage = firstPage
        self.pagesRendered = pagesRendered
    }

    /// One line for people: the page count and the pages shown.
    public var summary: String {
        let shown = pagesRendered == 1 ? "page \(firstPage + 1)" : "pages \(firstPage + 1)–\(firstPage + pagesRendered)"
        return "PDF of \(pageCount) page\(pageCount == 1 ? "" : "s"), \(shown) rendered"
    }
}
