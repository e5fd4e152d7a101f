import Foundation
import Imago

/// One of thumbor 7.8's built-in filters (those that need no face or eye detector), with its
/// arguments as thumbor parses them.
public enum ThumborFilter: Sendable, Hashable {
    /// `autojpg([enabled])`: a PNG without transparency is written as JPEG.
    case autoJPG(Bool)
    /// `background_color(color)`: transparency composed over a colour.
    case backgroundColor(String)
    /// `blur(radius[, sigma])`: thumbor's Gaussian (sigma defaults to the radius).
    case blur(radius: Int, sigma: Double)
    /// `brightness(percent)`.
    case brightness(Int)
    /// `colorize(red%, green%, blue%, hex)`: each channel blended toward the colour.
    case colorize(red: Int, green: Int, blue: Int, color: String)
    /// `contrast(percent)`.
    case contrast(Int)
    /// `convolution(m1;m2;…, columns[, normalize])`.
    case convolution(matrix: [Double], columns: Int, normalize: Bool)
    /// `curve(all, red, green, blue)`: each a list of `(x,y)` points.
    case curve(all: [ThumborPoint], red: [ThumborPoint], green: [ThumborPoint], blue: [ThumborPoint])
    /// `equalize()`: each channel's histogram equalised.
    case equalize
    /// `extract_focal()`: the focal point from a crop in the image's own thumbor URL.
    case extractFocal
    /// `fill(color[, fill_transparent])`: the box filled around the image (`transparent`,
    /// `auto` for the mean colour, `blur` for the image blurred).
    case fill(color: String, fillTransparent: Bool)
    /// `focal(LxT:RxB)`: a focal point.
    case focal(left: Int, top: Int, right: Int, bottom: Int)
    /// `format(name)`: the output format; an unknown name is no format.
    case format(String?)
    /// `frame(url)`: the image framed by a nine-patch image.
    case frame(String)
    /// `grayscale()`.
    case grayscale
    /// `max_age(seconds)`: the answer's `Cache-Control` max-age.
    case maxAge(Int)
    /// `max_bytes(n)`: quality lowered until the answer fits.
    case maxBytes(Int)
    /// `no_upscale()`: the box no larger than the image.
    case noUpscale
    /// `noise(amount[, seed])`.
    case noise(amount: Int, seed: Int)
    /// `proportion(factor)`: scaled by a factor in (0, 1].
    case proportion(Double)
    /// `quality(n)`.
    case quality(Int)
    /// `rgb(r%, g%, b%)`: each channel shifted.
    case rgb(red: Int, green: Int, blue: Int)
    /// `rotate(degrees)`: counter-clockwise, multiples of 90 only.
    case rotate(Int)
    /// `round_corner(a[|b], r, g, b[, transparent])`.
    case roundCorner(a: Int, b: Int, red: Int, green: Int, blue: Int, transparent: Bool)
    /// `saturation(factor)`.
    case saturation(Double)
    /// `sharpen(amount, radius, luminance_only)`: thumbor's wavelet sharpen.
    case sharpen(amount: Double, radius: Double, luminanceOnly: Bool)
    /// `stretch()`: resized to the box without cropping.
    case stretch
    /// `strip_exif()`.
    case stripEXIF
    /// `strip_icc()`.
    case stripICC
    /// `upscale()`: with `fit-in`, enlarged to the box.
    case upscale
    /// `watermark(url, x, y, alpha[, w_ratio, h_ratio])`.
    case watermark(ThumborWatermark)

    /// When thumbor runs the filter: before the image loads, once it has loaded, or after the
    /// transformation (most).
    public enum Phase: Sendable {
        /// Before the image loads (`focal`, `extract_focal`, `stretch`: they read only the URL).
        case preLoad
        /// Once the image has loaded, before the transformation (`no_upscale`).
        case afterLoad
        /// After the transformation, in the URL's order.
        case postTransform
    }

    /// The filter's phase.
    public var phase: Phase {
        switch self {
        case .extractFocal, .focal, .stretch: .preLoad
        case .noUpscale: .afterLoad
        default: .postTransform
        }
    }

    /// thumbor 7.8's `BUILTIN_FILTERS`: the filter modules its default `FILTERS` lists (its
    /// package also has `autojpg` and `redeye`, which it leaves out).
    public static let builtinModules = [
        "brightness", "colorize", "contrast", "rgb", "round_corner", "quality", "noise", "watermark", "equalize", "fill", "sharpen", "strip_exif",
        "strip_icc", "frame", "grayscale", "rotate", "format", "max_bytes", "convolution", "blur", "extract_focal", "focal", "no_upscale",
        "saturation", "max_age", "curve", "background_color", "upscale", "proportion", "stretch",
    ].map { "thumbor.filters." + $0 }

    /// The names of ``builtinModules``' filters.
    public static let builtinNames = Set(builtinModules.map(name(ofModule:)))

    /// The names of every filter Imago has (``builtinModules``' and `autojpg`).
    public static var knownNames: Set<String> { Set(specs.keys) }

    /// A filter's name from its module's path in thumbor's `FILTERS` (`thumbor.filters.blur` →
    /// `blur`): a filter module defines the one filter its file is named after.
    public static func name(ofModule path: String) -> String {
        String(path.split(separator: ".").last ?? Substring(path))
    }

    /// The filters of `text` (what follows `filters:`), in order, as thumbor's factory makes them:
    /// the text is split at `):`, a name thumbor does not know (or `allowed` does not hold) is
    /// skipped, and a filter whose arguments do not match its pattern is dropped.
    public static func parse(_ text: String, allowed: Set<String>? = nil) -> [ThumborFilter] {
        guard !text.isEmpty else { return [] }
        let parts = text.components(separatedBy: "):")
        return parts.enumerated().compactMap { index, part in
            let name = String(part.prefix { $0 != "(" })
            guard let spec = specs[name], allowed?.contains(name) ?? true else { return nil }
            let call = index == parts.count - 1 ? part : part + ")"
            guard let arguments = spec.arguments(of: call) else { return nil }
            return spec.make(arguments)
        }
    }
}

/// A point of a `curve` filter.
public struct ThumborPoint: Sendable, Hashable {
    /// The input level.
    public var x: Int
    /// The output level.
    public var y: Int
}

/// The `watermark` filter's arguments.
public struct ThumborWatermark: Sendable, Hashable {
    /// Where the watermark comes from (through the same loader and policy as images).
    public var url: String
    /// `center`, `repeat`, pixels (negative from the right), or `Np` percent.
    public var x: String
    /// As ``x``, vertically.
    public var y: String
    /// Transparency 0…100 (100 invisible).
    public var alpha: Int
    /// Largest width as a percentage of the image; nil for none.
    public var widthRatio: Double?
    /// Largest height as a percentage of the image; nil for none.
    public var heightRatio: Double?
}

/// A filter's argument patterns, as thumbor's `filter_method` declares them, compiled into one
/// expression the way `BaseFilter.compile_regex` does.
private struct FilterSpec: Sendable {
    let expression: NSRegularExpression
    let make: @Sendable ([String?]) -> ThumborFilter?

    /// `params`: each argument's pattern and whether it may be left out.
    init(_ name: String, _ params: [(pattern: String, optional: Bool)], make: @escaping @Sendable ([String?]) -> ThumborFilter?) {
        var pattern = NSRegularExpression.escapedPattern(for: name) + "\\("
        for (index, param) in params.enumerated() {
            pattern += "(?:\(index > 0 ? "," : "")\\s*(\(param.pattern))\\s*)\(param.optional ? "?" : "")"
        }
        pattern += "\\)"
        // The patterns are constants of this file.
        expression = try! NSRegularExpression(pattern: pattern)
        self.make = make
    }

    /// The captured arguments (nil or empty for those left out), when `call` starts with a match.
    func arguments(of call: String) -> [String?]? {
        let range = NSRange(call.startIndex..., in: call)
        guard let match = expression.firstMatch(in: call, options: [.anchored], range: range) else { return nil }
        return (1..<match.numberOfRanges).map { index in
            Range(match.range(at: index), in: call).map { String(call[$0]) }.flatMap { $0.isEmpty ? nil : $0 }
        }
    }
}

// thumbor's BaseFilter patterns.
private let positiveNumber = #"[\d]+"#
private let positiveNonZeroNumber = #"[\d]*[1-9][\d]*"#
private let number = #"[-]?[\d]+"#
private let decimalNumber = #"[-]?(?:(?:[\d]+\.?[\d]*)|(?:[\d]*\.?[\d]+))"#
private let boolean = #"[Tt]rue|[Ff]alse|1|0"#
private let string = #"(?:'.+?')|(?:[^,]+?)"#
private let curvePoints = #"\[(?:\(\d+,\d+\),?)*\]"#
// The focal filter's own pattern (a constant).
private let focalBox = try! NSRegularExpression(pattern: #"(\d+)x(\d+):(\d+)x(\d+)"#)

/// Python's `int()` of digits (which may be long: clamped, so no trap), and `float()`.
private func int(_ text: String?) -> Int? {
    guard let text else { return nil }
    if let value = Int(text) { return value }
    return text.hasPrefix("-") ? Int.min / 2 : Int.max / 2
}
private func double(_ text: String?) -> Double? { text.flatMap(Double.init) }
private func bool(_ text: String?, default value: Bool) -> Bool {
    guard let text else { return value }
    return text == "true" || text == "True" || text == "1"
}
/// thumbor's String: quotes around it removed.
private func unquoted(_ text: String?) -> String? {
    guard let text else { return nil }
    if text.count >= 3, text.hasPrefix("'"), text.hasSuffix("'") { return String(text.dropFirst().dropLast()) }
    return text
}
private func points(_ text: String?) -> [ThumborPoint] {
    guard let text else { return [] }
    let numbers = text.split { !$0.isNumber }.compactMap { Int($0) }
    return stride(from: 0, to: numbers.count - 1, by: 2).map { ThumborPoint(x: numbers[$0], y: numbers[$0 + 1]) }
}

private let specs: [String: FilterSpec] = {
    var specs: [String: FilterSpec] = [:]
    func add(_ name: String, _ params: [(String, Bool)], make: @escaping @Sendable ([String?]) -> ThumborFilter?) {
        specs[name] = FilterSpec(name, params.map { (pattern: $0.0, optional: $0.1) }, make: make)
    }
    add("autojpg", [(boolean, true)]) { .autoJPG(bool($0[0], default: true)) }
    add("background_color", [(#"[\w]+"#, false)]) { $0[0].map(ThumborFilter.backgroundColor) }
    add("blur", [(positiveNonZeroNumber, false), (decimalNumber, true)]) { args in
        int(args[0]).map { .blur(radius: $0, sigma: double(args[1]) ?? 0) }
    }
    add("brightness", [(number, false)]) { int($0[0]).map(ThumborFilter.brightness) }
    add("colorize", [(positiveNumber, false), (positiveNumber, false), (positiveNumber, false), (string, false)]) { args in
        guard let red = int(args[0]), let green = int(args[1]), let blue = int(args[2]), let color = unquoted(args[3]) else { return nil }
        return .colorize(red: red, green: green, blue: blue, color: color)
    }
    add("contrast", [(number, false)]) { int($0[0]).map(ThumborFilter.contrast) }
    add("convolution", [(#"-?\d+(?:\.\d*)?(?:;-?\d+(?:\.\d*)?)*"#, false), (positiveNonZeroNumber, false), (boolean, true)]) { args in
        guard let matrix = args[0], let columns = int(args[1]) else { return nil }
        return .convolution(matrix: matrix.split(separator: ";").map { Double($0) ?? 0 }, columns: columns, normalize: bool(args[2], default: true))
    }
    add("curve", [(curvePoints, false), (curvePoints, false), (curvePoints, false), (curvePoints, false)]) { args in
        .curve(all: points(args[0]), red: points(args[1]), green: points(args[2]), blue: points(args[3]))
    }
    add("equalize", []) { _ in .equalize }
    add("extract_focal", []) { _ in .extractFocal }
    add("fill", [(#"[\w]+"#, false), (boolean, true)]) { args in
        args[0].map { .fill(color: $0, fillTransparent: bool(args[1], default: false)) }
    }
    add("focal", [(string, false)]) { args in
        // `LxT:RxB` at its start; anything else is no focal point.
        guard let text = unquoted(args[0]),
            let match = focalBox.firstMatch(in: text, options: [.anchored], range: NSRange(text.startIndex..., in: text))
        else { return nil }
        let numbers = (1...4).map { int(Range(match.range(at: $0), in: text).map { String(text[$0]) }) ?? 0 }
        return .focal(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
    }
    add("format", [(string, false)]) { args in
        let name = unquoted(args[0])?.lowercased() ?? ""
        return .format(["png", "jpeg", "jpg", "gif", "webp", "avif", "heic", "heif"].contains(name) ? name : nil)
    }
    add("frame", [(string, false)]) { unquoted($0[0]).map(ThumborFilter.frame) }
    add("grayscale", []) { _ in .grayscale }
    add("max_age", [(positiveNumber, false)]) { int($0[0]).map(ThumborFilter.maxAge) }
    add("max_bytes", [(positiveNumber, false)]) { int($0[0]).map(ThumborFilter.maxBytes) }
    add("no_upscale", []) { _ in .noUpscale }
    add("noise", [(positiveNumber, false), (positiveNumber, true)]) { args in
        int(args[0]).map { .noise(amount: $0, seed: int(args[1]) ?? 0) }
    }
    add("proportion", [(decimalNumber, false)]) { double($0[0]).map(ThumborFilter.proportion) }
    add("quality", [(positiveNumber, false)]) { int($0[0]).map(ThumborFilter.quality) }
    add("rgb", [(number, false), (number, false), (number, false)]) { args in
        guard let red = int(args[0]), let green = int(args[1]), let blue = int(args[2]) else { return nil }
        return .rgb(red: red, green: green, blue: blue)
    }
    add("rotate", [(number, false)]) { int($0[0]).map(ThumborFilter.rotate) }
    add("round_corner", [(#"[\d]+(?:\|[\d]+)?"#, false), (positiveNumber, false), (positiveNumber, false), (positiveNumber, false), (boolean, true)]) {
        args in
        guard let radius = args[0], let red = int(args[1]), let green = int(args[2]), let blue = int(args[3]) else { return nil }
        let radii = radius.split(separator: "|").map { int(String($0)) ?? 0 }
        return .roundCorner(
            a: radii[0], b: radii.count > 1 ? radii[1] : radii[0], red: red, green: green, blue: blue, transparent: bool(args[4], default: false))
    }
    add("saturation", [(decimalNumber, false)]) { double($0[0]).map(ThumborFilter.saturation) }
    add("sharpen", [(decimalNumber, false), (decimalNumber, false), (boolean, false)]) { args in
        guard let amount = double(args[0]), let radius = double(args[1]) else { return nil }
        return .sharpen(amount: amount, radius: radius, luminanceOnly: bool(args[2], default: false))
    }
    add("stretch", []) { _ in .stretch }
    add("strip_exif", []) { _ in .stripEXIF }
    add("strip_icc", []) { _ in .stripICC }
    add("upscale", []) { _ in .upscale }
    let position = #"(?:-?\d+p?)|center|repeat"#, ratio = #"(?:-?\d+)|none"#
    add("watermark", [(string, false), (position, false), (position, false), (positiveNumber, false), (ratio, true), (ratio, true)]) { args in
        guard let url = unquoted(args[0]), let x = args[1], let y = args[2], let alpha = int(args[3]) else { return nil }
        func percent(_ text: String?) -> Double? {
            guard let text, text != "none", let value = Double(text), value != 0 else { return nil }
            return value / 100
        }
        return .watermark(ThumborWatermark(url: url, x: x, y: y, alpha: alpha, widthRatio: percent(args[4]), heightRatio: percent(args[5])))
    }
    return specs
}()
