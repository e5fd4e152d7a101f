import Foundation

/// The options of an `/info` URL, in imgproxy Pro's syntax (`size:1`, `bh:4:3`, `th:1`, …):
/// what the JSON answer reports. The defaults are imgproxy's: size, format and dimensions on, the
/// slower facts off. EXIF, IPTC, XMP and video metadata options are accepted (they are on by
/// default in imgproxy) but Imago reports none of them.
public struct InfoOptions: Sendable {
    /// `size`, `s`: the source's bytes.
    public var size = true
    /// `format`, `f`: the format and media type.
    public var format = true
    /// `dimensions`, `d`: width, height (orientation applied) and the EXIF orientation.
    public var dimensions = true
    /// `colorspace`, `cs`: `srgb`, `cmyk` or `b-w`, from the colour profile.
    public var colorspace = false
    /// `sample_format`, `sf`: `uchar` for 8 bits a sample, `ushort` above.
    public var sampleFormat = false
    /// `pages_number`, `pn`: frames (or pages).
    public var pagesNumber = false
    /// `alpha`, `a`: whether the image has an alpha channel.
    public var alpha = false
    /// `alpha`'s second argument: also whether any pixel is less than opaque.
    public var checkTransparency = false
    /// `average`, `avg`: the mean colour.
    public var average = false
    /// `average`'s second argument (default true): fully transparent pixels left out.
    public var averageIgnoresTransparent = true
    /// `blurhash`, `bh`: terms across and down, 0 for none, at most 9.
    public var blurhash: (x: Int, y: Int) = (0, 0)
    /// `thumb_hash`, `th`: the ThumbHash, as hexadecimal.
    public var thumbHash = false
    /// `calc_hashsums`, `chs`: digests of the source's bytes (`md5`, `sha1`, `sha256`, `sha512`).
    public var hashsums: [String] = []
    /// `page`, `pg`: the frame the pixel facts are taken from.
    public var page = 0
    /// `cachebuster`, `cb`: only changes the URL.
    public var cacheBuster = ""

    /// The defaults.
    public init() {}

    /// Options parsed from URL segments; a 400 names the first one that is unknown or malformed.
    /// The `default` info preset applies first; `preset`/`pr` expands `presets` in place, as
    /// processing options' presets do (a preset met again inside itself is skipped).
    /// `argumentsSeparator` divides a segment's name and arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`).
    public init(parsing segments: [String], presets: [String: [String]] = [:], argumentsSeparator: String = ":") throws(ServerError) {
        if presets["default"] != nil { try apply(["pr" + argumentsSeparator + "default"], presets: presets, using: [], separator: argumentsSeparator) }
        try apply(segments, presets: presets, using: [], separator: argumentsSeparator)
    }

    // One switch over every name, as imgproxy's parser has it.
    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func apply(_ segments: [String], presets: [String: [String]], using used: [String], separator: String) throws(ServerError) {
        for segment in segments {
            let parts = segment.components(separatedBy: separator)
            let name = parts[0], arguments = Array(parts.dropFirst())
            func flag(_ index: Int, default value: Bool) throws(ServerError) -> Bool {
                guard index < arguments.count, !arguments[index].isEmpty else { return value }
                switch arguments[index] {
                case "1", "t", "true": return true
                case "0", "f", "false": return false
                default: throw .badRequest("invalid info option '\(name)'")
                }
            }
            func number(_ index: Int, _ range: ClosedRange<Int>) throws(ServerError) -> Int {
                guard index < arguments.count, let value = Int(arguments[index]), range.contains(value) else {
                    throw .badRequest("invalid info option '\(name)'")
                }
                return value
            }
            switch name {
            case "size", "s": size = try flag(0, default: true)
            case "format", "f": format = try flag(0, default: true)
            case "dimensions", "d": dimensions = try flag(0, default: true)
            case "exif", "iptc", "xmp", "video_meta", "vm": _ = (try flag(0, default: true), try flag(1, default: false))
            case "colorspace", "cs": colorspace = try flag(0, default: false)
            case "sample_format", "sf": sampleFormat = try flag(0, default: false)
            case "pages_number", "pn": pagesNumber = try flag(0, default: false)
            case "alpha", "a": (alpha, checkTransparency) = (try flag(0, default: false), try flag(1, default: false))
            case "average", "avg": (average, averageIgnoresTransparent) = (try flag(0, default: false), try flag(1, default: true))
            case "blurhash", "bh":
                blurhash = (try number(0, 0...9), try number(1, 0...9))
                if blurhash.x == 0 || blurhash.y == 0 { blurhash = (0, 0) }
            case "thumb_hash", "th": thumbHash = try flag(0, default: true)
            case "calc_hashsums", "chs":
                let known = ["md5", "sha1", "sha256", "sha512"]
                guard arguments.allSatisfy(known.contains) else { throw .badRequest("invalid info option '\(name)'") }
                hashsums = known.filter(arguments.contains)
            case "page", "pg": page = try number(0, 0...65_535)
            case "cachebuster", "cb": cacheBuster = arguments.joined(separator: separator)
            case "preset", "pr":
                for preset in arguments where !preset.isEmpty && !used.contains(preset) {
                    guard let segments = presets[preset] else { throw .badRequest("no info preset '\(preset)'") }
                    try apply(segments, presets: presets, using: used + [preset], separator: separator)
                }
            default: throw .badRequest("unknown info option '\(name)'")
            }
        }
    }

    /// Every option, as text: part of the answer's cache key.
    var key: String {
        [
            size, format, dimensions, colorspace, sampleFormat, pagesNumber, alpha, checkTransparency, average, averageIgnoresTransparent, thumbHash,
        ].map { $0 ? "1" : "0" }.joined() + ":\(blurhash.x)x\(blurhash.y):\(hashsums.joined(separator: ",")):\(page):\(cacheBuster)"
    }
}
