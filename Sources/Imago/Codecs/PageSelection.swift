/// Which pages of a paged source a decode shows (``DecodingOptions/pages``): imgproxy Pro's
/// `page` and `pages`. PDF documents read it.
public struct PageSelection: Sendable, Hashable {
    /// The first page shown, from 0. Past the document's last page, the last page.
    public var first: Int
    /// How many pages from ``first`` on are shown, stacked top to bottom and aligned left, each
    /// at the same scale; fewer when the document ends first.
    public var count: Int

    /// A selection; the first page alone by default.
    public init(first: Int = 0, count: Int = 1) {
        self.first = max(0, first)
        self.count = max(1, count)
    }

    /// What tells this selection's pages from another's in keys.
    var identifier: String { "pages:\(first),\(count)" }
}
