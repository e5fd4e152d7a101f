import Foundation

/// A request path in thumbor's language, split as thumbor's own URL pattern splits it:
/// `/unsafe|SIGNATURE/[debug/][meta/][trim[:top-left|:bottom-right][:N]/][AxB:CxD/]`
/// `[adaptive-][full-]fit-in/][-]Wx[-]H/][left|center|right/][top|middle|bottom/][smart/]`
/// `[filters:name(args):…/]IMAGE`.
///
/// Every part is optional and is taken when it matches at its place, as thumbor's regular
/// expression takes it; what is left is the image. Parts are matched on the path as sent and
/// then percent-decoded once (as Tornado decodes its groups).
public struct ThumborURL: Sendable, Equatable {
    /// `left`, `center`, `right`: where the crop keeps the image horizontally.
    public enum HorizontalAlignment: String, Sendable, Equatable, CaseIterable {
        /// Keep the left edge.
        case left
        /// Keep the middle.
        case center
        /// Keep the right edge.
        case right
    }
    /// `top`, `middle`, `bottom`.
    public enum VerticalAlignment: String, Sendable, Equatable, CaseIterable {
        /// Keep the top edge.
        case top
        /// Keep the middle.
        case middle
        /// Keep the bottom edge.
        case bottom
    }

    /// A requested side: pixels (0: from the other side and the aspect), or the image's own.
    public enum Side: Sendable, Equatable {
        /// Pixels; 0 for "keep the aspect".
        case pixels(Int)
        /// `orig`: the image's own size on that side.
        case original
    }

    /// `fit-in` and its variants.
    public enum FitIn: Sendable, Equatable {
        /// Crop to the box (thumbor's default).
        case none
        /// The whole image inside the box, never enlarged.
        case fit
        /// The box covered by the smaller side's scale (`full-fit-in`), enlarging too.
        case full
    }

    /// `unsafe` when the path says so.
    public var unsafe = false
    /// The signature, as it appears in the path (percent-decoded), when the path is signed.
    public var signature: String?
    /// What the signature covers: the path after `/SIGNATURE/`, as sent.
    public var signedPart = ""
    /// `debug/`: focal points drawn instead of processing.
    public var debug = false
    /// `meta/`: thumbor's JSON about the operations instead of the image.
    public var meta = false
    /// `trim`'s corner and tolerance.
    public struct Trim: Sendable, Equatable {
        /// Whether the bottom right pixel's colour is the background (else the top left's).
        public var bottomRight: Bool
        /// How far (Euclidean distance over the channels) a colour may be from it.
        public var tolerance: Int
    }

    /// A box in source pixels: `AxB:CxD` is left × top : right × bottom.
    public struct Box: Sendable, Equatable {
        /// The left edge.
        public var left: Int
        /// The top edge.
        public var top: Int
        /// The right edge (exclusive).
        public var right: Int
        /// The bottom edge (exclusive).
        public var bottom: Int
    }

    /// `trim`: the background cut away first; nil for none.
    public var trim: Trim?
    /// `AxB:CxD`: the manual crop; nil for none.
    public var crop: Box?
    /// `fit-in`, `full-fit-in`.
    public var fitIn = FitIn.none
    /// `adaptive-`: the box turned when its orientation differs from the image's.
    public var adaptive = false
    /// The box's width.
    public var width = Side.pixels(0)
    /// The box's height.
    public var height = Side.pixels(0)
    /// A `-` before the width: flipped left to right.
    public var flipHorizontal = false
    /// A `-` before the height: flipped top to bottom.
    public var flipVertical = false
    /// Where the crop keeps the image horizontally.
    public var horizontalAlignment = HorizontalAlignment.center
    /// Where the crop keeps the image vertically.
    public var verticalAlignment = VerticalAlignment.middle
    /// `smart/`: the crop follows what is interesting in the image.
    public var smart = false
    /// The filters' text after `filters:`, up to and including the `)` before a `/`.
    public var filters = ""
    /// The image: a URL (with or without scheme, maybe percent-encoded) or a path.
    public var image = ""

    /// The longest path taken.
    public static let maxLength = 8192

    /// Splits `path` (without the query). Throws a 400 when it is too long or has no image.
    public init(parsing path: String) throws(ServerError) {
        guard path.utf8.count <= Self.maxLength else { throw .badRequest("path too long") }
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        // The signature part: `unsafe/`, else the first segment, when a `/` follows it.
        if rest.hasPrefix("unsafe/") {
            unsafe = true
            rest = rest.dropFirst(7)
        } else if let slash = rest.firstIndex(of: "/"), slash != rest.startIndex {
            signature = Self.decoded(rest[..<slash])
            rest = rest[rest.index(after: slash)...]
        }
        signedPart = String(rest)
        guard Self.match(&self, rest, from: 0) else { throw .badRequest("no original image was specified in the given URL") }
    }

    /// The optional parts in order; each consumes a prefix of the rest or nothing. Tries each
    /// taken first, then not taken, so a URL whose image would otherwise be empty still matches
    /// (as the regular expression backtracks).
    private static func match(_ url: inout ThumborURL, _ rest: Substring, from step: Int) -> Bool {
        guard step < parts.count else {
            guard !rest.isEmpty else { return false }
            url.image = decoded(rest)
            return true
        }
        var taken = url
        if let remaining = parts[step](&taken, rest), match(&taken, remaining, from: step + 1) {
            url = taken
            return true
        }
        return match(&url, rest, from: step + 1)
    }

    private typealias Part = @Sendable (inout ThumborURL, Substring) -> Substring?

    private static let parts: [Part] = [
        flag("debug/", \.debug), flag("meta/", \.meta), trimPart, cropPart, fitInPart, dimensionsPart,
        { url, rest in
            word(rest).map {
                url.horizontalAlignment = $0.value
                return $0.rest
            }
        },
        { url, rest in
            word(rest).map {
                url.verticalAlignment = $0.value
                return $0.rest
            }
        },
        flag("smart/", \.smart), filtersPart,
    ]

    /// A part that is one word, setting `property`.
    private static func flag(_ text: String, _ property: WritableKeyPath<ThumborURL, Bool> & Sendable) -> Part {
        { url, rest in
            guard let remaining = literal(text, rest) else { return nil }
            url[keyPath: property] = true
            return remaining
        }
    }

    /// The alignment whose name, with a `/` after it, starts `rest`.
    private static func word<Alignment: RawRepresentable & CaseIterable>(_ rest: Substring) -> (value: Alignment, rest: Substring)?
    where Alignment.RawValue == String {
        for value in Alignment.allCases { if let remaining = literal(value.rawValue + "/", rest) { return (value, remaining) } }
        return nil
    }

    private static func literal(_ text: String, _ rest: Substring) -> Substring? {
        rest.hasPrefix(text) ? rest.dropFirst(text.count) : nil
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right`, each optionally `:N`.
    private static func trimPart(_ url: inout ThumborURL, _ rest: Substring) -> Substring? {
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let fields = rest[..<slash].split(separator: ":", omittingEmptySubsequences: false)
        guard fields.first == "trim", fields.count <= 3 else { return nil }
        var bottomRight = false, tolerance = 0
        var index = 1
        if index < fields.count, fields[index] == "top-left" || fields[index] == "bottom-right" {
            bottomRight = fields[index] == "bottom-right"
            index += 1
        }
        if index < fields.count {
            guard let number = digits(fields[index]) else { return nil }
            tolerance = number
            index += 1
        }
        guard index == fields.count else { return nil }
        url.trim = Trim(bottomRight: bottomRight, tolerance: tolerance)
        return rest[rest.index(after: slash)...]
    }

    /// `AxB:CxD/`, four runs of digits.
    private static func cropPart(_ url: inout ThumborURL, _ rest: Substring) -> Substring? {
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let corners = rest[..<slash].split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let first = corners[0].split(separator: "x", omittingEmptySubsequences: false)
        let second = corners[1].split(separator: "x", omittingEmptySubsequences: false)
        guard first.count == 2, second.count == 2, let left = digits(first[0]), let top = digits(first[1]), let right = digits(second[0]),
            let bottom = digits(second[1])
        else { return nil }
        // thumbor crops only when one coordinate is above 0.
        url.crop = left > 0 || top > 0 || right > 0 || bottom > 0 ? Box(left: left, top: top, right: right, bottom: bottom) : nil
        return rest[rest.index(after: slash)...]
    }

    private static func fitInPart(_ url: inout ThumborURL, _ rest: Substring) -> Substring? {
        var rest = rest
        let adaptive = rest.hasPrefix("adaptive-")
        if adaptive { rest = rest.dropFirst(9) }
        let full = rest.hasPrefix("full-")
        if full { rest = rest.dropFirst(5) }
        guard let remaining = literal("fit-in/", rest) else { return nil }
        url.adaptive = adaptive
        url.fitIn = full ? .full : .fit
        return remaining
    }

    /// `[-][W|orig]x[-][H|orig]/`.
    private static func dimensionsPart(_ url: inout ThumborURL, _ rest: Substring) -> Substring? {
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        var text = rest[..<slash]
        let flipHorizontal = text.hasPrefix("-")
        if flipHorizontal { text = text.dropFirst() }
        guard let x = text.firstIndex(of: "x") else { return nil }
        // `orig` has no x, and digits none: the first x separates the sides.
        guard let width = side(text[..<x]) else { return nil }
        var second = text[text.index(after: x)...]
        let flipVertical = second.hasPrefix("-")
        if flipVertical { second = second.dropFirst() }
        guard let height = side(second) else { return nil }
        url.flipHorizontal = flipHorizontal
        url.flipVertical = flipVertical
        url.width = width
        url.height = height
        return rest[rest.index(after: slash)...]
    }

    private static func side(_ text: Substring) -> Side? {
        if text.isEmpty { return .pixels(0) }
        if text == "orig" { return .original }
        return digits(text).map(Side.pixels)
    }

    /// `filters:` then the shortest text ending in `)` that a `/` follows.
    private static func filtersPart(_ url: inout ThumborURL, _ rest: Substring) -> Substring? {
        guard rest.hasPrefix("filters:") else { return nil }
        let body = rest.dropFirst(8)
        var index = body.startIndex
        while let close = body[index...].firstIndex(of: ")") {
            let next = body.index(after: close)
            if next < body.endIndex, body[next] == "/", close > body.startIndex {
                url.filters = decoded(body[...close])
                return body[body.index(after: next)...]
            }
            index = next
        }
        return nil
    }

    /// Decimal digits only (at most 9, so the value fits comfortably); nil otherwise.
    private static func digits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// Percent-decoded once, or as it is when it is not valid percent-encoding.
    static func decoded(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }
}
