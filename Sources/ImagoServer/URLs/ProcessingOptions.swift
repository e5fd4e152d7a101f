import Foundation
import Imago

/// imgproxy's processing options that Imago serves, parsed from a path's option segments, full
/// and short names alike: `resize`/`rs`, `size`/`s`, `resizing_type`/`rt`, `width`/`w`,
/// `height`/`h`, `dpr`, `enlarge`/`el`, `gravity`/`g`, `quality`/`q`, `format`/`f`/`ext`,
/// `blur`/`bl`, `strip_color_profile`/`scp`, `strip_metadata`/`sm`, `keep_copyright`/`kcr`,
/// `preset`/`pr`. Booleans are read as Go's `strconv.ParseBool` reads them in imgproxy. Later options override earlier ones, as in imgproxy. Arguments left
/// empty keep their value (`rs::300` sets only the width).
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image meets the box (imgproxy's `resizing_type`).
    public enum ResizingType: String, Sendable, Hashable {
        /// Inside the box, aspect kept.
        case fit
        /// Covering the box, aspect kept, the overflow cropped at the gravity.
        case fill
        /// As `fill`, but never enlarging: a smaller image is cropped to the box's shape instead.
        case fillDown = "fill-down"
        /// Exactly the box, aspect not kept.
        case force
        /// `fill` when the image and the box are both portrait or both landscape, else `fit`.
        case auto
    }

    /// Where a crop keeps the image: the compass points and the centre. imgproxy's smart
    /// gravity (`sm`) is taken as the centre.
    public enum Gravity: String, Sendable, Hashable {
        /// The top edge (`no`).
        case north = "no"
        /// The bottom edge (`so`).
        case south = "so"
        /// The right edge (`ea`).
        case east = "ea"
        /// The left edge (`we`).
        case west = "we"
        /// The top right corner (`noea`).
        case northEast = "noea"
        /// The top left corner (`nowe`).
        case northWest = "nowe"
        /// The bottom right corner (`soea`).
        case southEast = "soea"
        /// The bottom left corner (`sowe`).
        case southWest = "sowe"
        /// The centre (`ce`), the default.
        case center = "ce"
    }

    /// How the image meets the box (`rt`); `fit` by default.
    public var resizingType = ResizingType.fit
    /// The box's width in points; 0 takes it from the height and the image's aspect.
    public var width = 0
    /// The box's height in points; 0 takes it from the width and the image's aspect.
    public var height = 0
    /// Pixels per point (1…8).
    public var dpr = 1.0
    /// Whether an image smaller than the box is scaled up.
    public var enlarge = false
    /// Where a crop keeps the image (`g`); the centre by default.
    public var gravity = Gravity.center
    /// The crop's offset from the gravity's edge, in pixels.
    public var gravityOffset = (x: 0.0, y: 0.0)
    /// Output quality 1…100; 0 takes the server's default.
    public var quality = 0
    /// The format asked for (`jpg`, `png`, `webp`, `avif`), or nil to negotiate.
    public var format: String?
    /// Gaussian blur's sigma; 0 for none.
    public var blur = 0.0
    /// Whether the output is converted to sRGB and carries no colour profile (imgproxy's
    /// `strip_color_profile`); nil takes the server's setting.
    public var stripColorProfile: Bool?
    /// Whether the output carries no EXIF or XMP (`strip_metadata`); nil takes the server's setting.
    public var stripMetadata: Bool?
    /// Whether stripping metadata keeps the copyright and author (`keep_copyright`); nil takes the
    /// server's setting.
    public var keepCopyright: Bool?

    /// The defaults: no resize, negotiated format, the server's quality.
    public init() {}

    /// `segments` applied in order; `pr`/`preset` expands the named presets (which may not name
    /// presets themselves). Throws a 400 naming the option at fault.
    public init(parsing segments: [String], presets: [String: [String]] = [:]) throws(ServerError) {
        if let defaults = presets["default"] { try apply(defaults, presets: [:]) }
        try apply(segments, presets: presets)
    }

    public static func == (a: Self, b: Self) -> Bool { a.key == b.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    /// Everything that changes the output, as text: the cache and ETag identity of the options.
    public var key: String {
        "\(resizingType.rawValue):\(width):\(height):\(dpr):\(enlarge):\(gravity.rawValue):\(gravityOffset.x):\(gravityOffset.y):\(quality):\(format ?? ""):\(blur)"
            + ":\(Self.text(stripColorProfile)):\(Self.text(stripMetadata)):\(Self.text(keepCopyright))"
    }

    private static func text(_ flag: Bool?) -> String { flag.map { $0 ? "1" : "0" } ?? "-" }

    private mutating func apply(_ segments: [String], presets: [String: [String]]) throws(ServerError) {
        for segment in segments {
            var parts = segment.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let name = parts.removeFirst()
            try apply(name: name, parts, presets: presets)
        }
    }

    private mutating func apply(name: String, _ arguments: [String], presets: [String: [String]]) throws(ServerError) {
        func bad(_ why: String) -> ServerError { .badRequest("bad option '\(name)': \(why)") }
        func count(_ range: ClosedRange<Int>) throws(ServerError) {
            guard range.contains(arguments.count) else { throw bad("takes \(range.lowerBound)–\(range.upperBound) arguments") }
        }
        func argument(_ index: Int) -> String? {
            index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil
        }
        func side(_ index: Int) throws(ServerError) -> Int? {
            guard let text = argument(index) else { return nil }
            guard let value = Int(text), (0...ImageProcessors.Resize.maxSide).contains(value) else {
                throw bad("'\(text)' is not a size from 0 to \(ImageProcessors.Resize.maxSide)")
            }
            return value
        }
        func flag(_ index: Int) throws(ServerError) -> Bool? {
            guard let text = argument(index) else { return nil }
            // Go's strconv.ParseBool, which imgproxy uses.
            switch text {
            case "1", "t", "T", "TRUE", "true", "True": return true
            case "0", "f", "F", "FALSE", "false", "False": return false
            default: throw bad("'\(text)' is not a boolean")
            }
        }
        func number(_ index: Int, _ range: ClosedRange<Double>) throws(ServerError) -> Double? {
            guard let text = argument(index) else { return nil }
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw bad("'\(text)' is not a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
        func type(_ index: Int) throws(ServerError) -> ResizingType? {
            guard let text = argument(index) else { return nil }
            guard let type = ResizingType(rawValue: text) else { throw bad("unknown resizing type '\(text)'") }
            return type
        }

        switch name {
        case "resize", "rs":
            try count(1...5)
            resizingType = try type(0) ?? resizingType
            width = try side(1) ?? width
            height = try side(2) ?? height
            enlarge = try flag(3) ?? enlarge
            _ = try flag(4)  // extend: the canvas is never extended
        case "size", "s":
            try count(1...4)
            width = try side(0) ?? width
            height = try side(1) ?? height
            enlarge = try flag(2) ?? enlarge
            _ = try flag(3)
        case "resizing_type", "rt":
            try count(1...1)
            resizingType = try type(0) ?? resizingType
        case "width", "w":
            try count(1...1)
            width = try side(0) ?? width
        case "height", "h":
            try count(1...1)
            height = try side(0) ?? height
        case "dpr":
            try count(1...1)
            dpr = try number(0, 0.01...8) ?? dpr
        case "enlarge", "el":
            try count(1...1)
            enlarge = try flag(0) ?? enlarge
        case "gravity", "g":
            try count(1...3)
            if let text = argument(0) {
                guard let value = text == "sm" ? .center : Gravity(rawValue: text) else { throw bad("unknown gravity '\(text)'") }
                gravity = value
            }
            gravityOffset = (try number(1, -65_535...65_535) ?? 0, try number(2, -65_535...65_535) ?? 0)
        case "quality", "q":
            try count(1...1)
            quality = Int(try number(0, 0...100) ?? Double(quality))
        case "format", "f", "ext":
            try count(1...1)
            if let text = argument(0) {
                guard OutputFormat(extension: text) != nil else { throw bad("Imago does not write '\(text)'") }
                format = text
            }
        case "blur", "bl":
            try count(1...1)
            blur = try number(0, 0...100) ?? blur
        case "strip_color_profile", "scp":
            try count(1...1)
            stripColorProfile = try flag(0) ?? stripColorProfile
        case "strip_metadata", "sm":
            try count(1...1)
            stripMetadata = try flag(0) ?? stripMetadata
        case "keep_copyright", "kcr":
            try count(1...1)
            keepCopyright = try flag(0) ?? keepCopyright
        case "preset", "pr":
            for preset in arguments where !preset.isEmpty {
                guard let segments = presets[preset] else { throw bad("no preset '\(preset)'") }
                // A preset's own segments may not expand presets: no cycles, no depth to bound.
                try apply(segments, presets: [:])
            }
        default:
            throw .badRequest("unknown option '\(name)'")
        }
    }
}
