import Foundation
import Imago

extension ProcessingOptions {
    /// `segments` applied in order, each `name:argument:…` with imgproxy's full or short name:
    /// `resize`/`rs`, `size`/`s`, `resizing_type`/`rt`, `width`/`w`, `height`/`h`,
    /// `min-width`/`mw`, `min-height`/`mh`, `zoom`/`z`, `dpr`, `enlarge`/`el`, `extend`/`ex`,
    /// `extend_aspect_ratio`/`extend_ar`/`exar`, `gravity`/`g`, `crop`/`c`, `trim`/`t`,
    /// `padding`/`pd`, `auto_rotate`/`ar`, `rotate`/`rot`, `flip`/`fl`, `background`/`bg`,
    /// `blur`/`bl`, `sharpen`/`sh`, `pixelate`/`pix`, `watermark`/`wm`, `strip_metadata`/`sm`,
    /// `keep_copyright`/`kcr`, `strip_color_profile`/`scp`, `preserve_hdr`/`ph`,
    /// `enforce_thumbnail`/`eth`, `quality`/`q`, `format_quality`/`fq`, `autoquality`/`aq`, `max_bytes`/`mb`,
    /// `format`/`f`/`ext`, `skip_processing`/`skp`, `raw`, `cachebuster`/`cb`, `expires`/`exp`,
    /// `filename`/`fn`, `return_attachment`/`att`, `preset`/`pr`, `max_src_resolution`/`msr`,
    /// `max_src_file_size`/`msfs`, `max_animation_frames`/`maf`,
    /// `max_animation_frame_resolution`/`mafr`, `max_result_dimension`/`mrd`.
    ///
    /// The `default` preset applies first; `pr` expands presets in place (a preset met again
    /// inside itself is skipped, as imgproxy skips it). Booleans are read as Go's
    /// `strconv.ParseBool` reads them. Throws a 400 naming the option at fault, and a 404 for an
    /// `expires` in the past (`now` is the unix time to compare with).
    public init(parsing segments: [String], presets: [String: [String]] = [:], now: Int = Int(Date().timeIntervalSince1970)) throws(ServerError) {
        try self.init(parsing: segments, presets: presets, now: now, startingFrom: ProcessingOptions())
    }

    /// Options parsed as ``init(parsing:presets:now:)`` parses them, over `start` (what a
    /// request's client hints set) instead of the defaults.
    /// Without `allowsSecurityOptions` (imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS=false`) the
    /// limit options (`msr`, `msfs`, `maf`, `mafr`, `mrd`) are imgproxy's 403, in presets too.
    init(
        parsing segments: [String], presets: [String: [String]], now: Int = Int(Date().timeIntervalSince1970), startingFrom start: ProcessingOptions,
        allowsSecurityOptions: Bool = true, argumentsSeparator: String = ":"
    )
        throws(ServerError)
    {
        self = start
        var parser = Parser(presets: presets, now: now, allowsSecurityOptions: allowsSecurityOptions, separator: argumentsSeparator)
        if presets["default"] != nil { try parser.apply(name: "preset", ["default"], to: &self, using: []) }
        try parser.apply(segments, to: &self, using: [])
    }
}

/// The option names and argument rules of imgproxy's `options/parser`.
private struct Parser {
    let presets: [String: [String]]
    let now: Int
    var allowsSecurityOptions = true
    /// What divides a segment's name and arguments (`:`, or `IMGPROXY_ARGUMENTS_SEPARATOR`).
    var separator = ":"
    /// The limit options imgproxy calls security options.
    static let securityOptions: Set<String> = [
        "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf", "max_animation_frame_resolution", "mafr",
        "max_result_dimension", "mrd",
    ]

    mutating func apply(_ segments: [String], to options: inout ProcessingOptions, using used: [String]) throws(ServerError) {
        for segment in segments {
            var parts = segment.components(separatedBy: separator)
            let name = parts.removeFirst()
            try apply(name: name, parts, to: &options, using: used)
        }
    }

    // One switch over every name: a table of closures would hide the argument rules.
    // swiftlint:disable:next cyclomatic_complexity function_body_length
    mutating func apply(name: String, _ arguments: [String], to o: inout ProcessingOptions, using used: [String]) throws(ServerError) {
        let a = Arguments(name: name, values: arguments)
        if !allowsSecurityOptions, Self.securityOptions.contains(name) { throw ServerError(status: 403, "Security processing options are not allowed") }
        switch name {
        case "resize", "rs":
            try a.count(1...8)
            o.resizingType = try a.resizingType(0) ?? o.resizingType
            try size(a.dropFirst(1), into: &o)
        case "size", "s":
            try a.count(1...7)
            try size(a, into: &o)
        case "resizing_type", "rt":
            try a.count(1...1)
            o.resizingType = try a.resizingType(0) ?? o.resizingType
        case "width", "w":
            try a.count(1...1)
            o.width = try a.side(0) ?? o.width
        case "height", "h":
            try a.count(1...1)
            o.height = try a.side(0) ?? o.height
        case "min-width", "mw":
            try a.count(1...1)
            o.minWidth = try a.side(0) ?? o.minWidth
        case "min-height", "mh":
            try a.count(1...1)
            o.minHeight = try a.side(0) ?? o.minHeight
        case "zoom", "z":
            try a.count(1...2)
            guard let x = try a.number(0, 0.0001...1000, above: 0) else { throw a.bad("needs a factor above 0") }
            o.zoom = .init(x: x, y: try a.number(1, 0.0001...1000, above: 0) ?? x)
        case "dpr":
            try a.count(1...1)
            o.dpr = try a.number(0, 0.01...8, above: 0) ?? o.dpr
        case "enlarge", "el":
            try a.count(1...1)
            o.enlarge = try a.flag(0) ?? o.enlarge
        case "extend", "ex":
            o.extend = try extensionValue(a, o.extend)
        case "extend_aspect_ratio", "extend_ar", "exar":
            o.extendAspectRatio = try extensionValue(a, o.extendAspectRatio)
        case "gravity", "g":
            o.gravity = try a.gravity(from: 0, allowing: Gravity.Kind.common + [.smart, .focusPoint, .objects]) ?? o.gravity
        case "crop", "c":
            try a.count(1...5)
            var crop = o.crop ?? .init()
            crop.width = try a.number(0, 0...65_535) ?? crop.width
            crop.height = try a.number(1, 0...65_535) ?? crop.height
            if arguments.count > 2 { crop.gravity = try a.gravity(from: 2, allowing: Gravity.Kind.common + [.smart, .focusPoint, .objects]) }
            o.crop = crop.width == 0 && crop.height == 0 ? nil : crop
        case "trim", "t":
            try a.count(1...4)
            var trim = ProcessingOptions.TrimSettings()
            trim.threshold = try a.number(0, 0...255) ?? trim.threshold
            trim.color = try a.color(1)
            trim.equalHorizontal = try a.flag(2) ?? false
            trim.equalVertical = try a.flag(3) ?? false
            o.trim = trim
        case "padding", "pd":
            try a.count(1...4)
            let top = try a.side(0) ?? o.padding.top
            let right = try a.side(1) ?? top
            o.padding = .init(top: top, right: right, bottom: try a.side(2) ?? top, left: try a.side(3) ?? right)
        case "auto_rotate", "ar":
            try a.count(1...1)
            o.autoRotate = try a.flag(0) ?? o.autoRotate
        case "rotate", "rot":
            try a.count(1...1)
            guard let text = a.value(0) else { break }
            guard let angle = Int(text), angle % 90 == 0, abs(angle) <= 3600 else { throw a.bad("'\(text)' is not a multiple of 90") }
            o.rotate = (angle % 360 + 360) % 360
        case "flip", "fl":
            try a.count(1...2)
            o.flipHorizontal = try a.flag(0) ?? o.flipHorizontal
            o.flipVertical = try a.flag(1) ?? o.flipVertical
        case "background", "bg":
            switch arguments.count {
            case 1: o.background = try a.color(0)
            case 3:
                var channels: [UInt8] = []
                for index in 0..<3 {
                    guard let value = a.value(index).flatMap({ UInt8($0) }) else { throw a.bad("'\(arguments[index])' is not a number from 0 to 255") }
                    channels.append(value)
                }
                o.background = RGBAColor(red: channels[0], green: channels[1], blue: channels[2])
            default: throw a.bad("takes a hex colour or R:G:B")
            }
        case "blur", "bl":
            try a.count(1...1)
            o.blur = try a.number(0, 0...ImageProcessors.GaussianBlur.maxRadius) ?? o.blur
        case "sharpen", "sh":
            try a.count(1...1)
            o.sharpen = try a.number(0, 0...ImageProcessors.Sharpen.maxSigma) ?? o.sharpen
        case "pixelate", "pix":
            try a.count(1...1)
            o.pixelate = try a.side(0) ?? o.pixelate
        case "watermark", "wm":
            try a.count(1...7)
            var placement = ProcessingOptions.WatermarkPlacement()
            guard let opacity = try a.number(0, 0...1) else { throw a.bad("needs an opacity from 0 to 1") }
            placement.opacity = opacity
            if let text = a.value(1) {
                guard let kind = Gravity.Kind(rawValue: text), (Gravity.Kind.common + [.replicate]).contains(kind) else {
                    throw a.bad("unknown position '\(text)'")
                }
                placement.position.kind = kind
            }
            placement.position.x = try a.number(2, -65_535...65_535) ?? 0
            placement.position.y = try a.number(3, -65_535...65_535) ?? 0
            placement.scale = try a.number(4, 0...1000, above: 0) ?? 0
            o.watermark = opacity > 0 ? placement : nil
        case "strip_metadata", "sm":
            try a.count(1...1)
            o.stripMetadata = try a.flag(0) ?? o.stripMetadata
        case "keep_copyright", "kcr":
            try a.count(1...1)
            o.keepCopyright = try a.flag(0) ?? o.keepCopyright
        case "strip_color_profile", "scp":
            try a.count(1...1)
            o.stripColorProfile = try a.flag(0) ?? o.stripColorProfile
        case "preserve_hdr", "ph":
            try a.count(1...1)
            o.preserveHDR = try a.flag(0) ?? o.preserveHDR
        case "enforce_thumbnail", "eth":
            try a.count(1...1)
            o.enforceThumbnail = try a.flag(0) ?? o.enforceThumbnail
        case "video_thumbnail_second", "vts":
            try a.count(1...1)
            o.videoThumbnailSecond = try a.number(0, 0...86_400) ?? o.videoThumbnailSecond
        case "video_thumbnail_keyframes", "vtk":
            try a.count(1...1)
            o.videoThumbnailKeyframes = try a.flag(0) ?? o.videoThumbnailKeyframes
        case "video_thumbnail_representative", "vtr":
            try a.count(1...1)
            o.videoThumbnailRepresentative = try a.flag(0) ?? o.videoThumbnailRepresentative
        case "video_thumbnail_tile", "vtt":
            o.videoThumbnailTile = try a.videoFrames(o.videoThumbnailTile, first: 1...100, second: 1...100)
        case "video_thumbnail_animation", "vta":
            o.videoThumbnailAnimation = try a.videoFrames(o.videoThumbnailAnimation, first: 0...60_000, second: 1...1_000)
        case "page", "pg":
            try a.count(1...1)
            o.page = try a.integer(0, 0...65_535) ?? o.page
        case "pages", "pgs":
            try a.count(1...1)
            o.pages = try a.integer(0, 1...1_000) ?? o.pages
        case "quality", "q":
            try a.count(1...1)
            o.quality = try a.integer(0, 0...100) ?? o.quality
        case "format_quality", "fq":
            guard arguments.count % 2 == 0 else { throw a.bad("takes format:quality pairs") }
            for index in stride(from: 0, to: arguments.count, by: 2) {
                guard let format = ImageFormatName.canonical(arguments[index]) else { throw a.bad("unknown format '\(arguments[index])'") }
                o.formatQuality[format] = try a.integer(index + 1, 0...100) ?? 0
            }
        case "autoquality", "aq":
            try a.count(1...5)
            var option = ProcessingOptions.AutoQualityOption()
            if let text = a.value(0) {
                guard let method = AutoQualitySettings.Method(rawValue: text) else {
                    throw a.bad("method must be none, size or ssimulacra2 (Imago measures SSIMULACRA2 where imgproxy Pro measures DSSIM)")
                }
                option.method = method
            }
            option.target = try a.number(1, 0...Double(Int32.max))
            option.minQuality = try a.integer(2, 1...100)
            option.maxQuality = try a.integer(3, 1...100)
            option.allowedError = try a.number(4, 0...100)
            o.autoQuality = option
        case "max_bytes", "mb":
            try a.count(1...1)
            o.maxBytes = try a.integer(0, 0...Int(Int32.max)) ?? o.maxBytes
        case "format", "f", "ext":
            try a.count(1...1)
            if let text = a.value(0) {
                guard OutputFormat(extension: text) != nil else { throw a.bad("Imago does not write '\(text)'") }
                o.format = text.lowercased()
            }
        case "skip_processing", "skp":
            for index in arguments.indices {
                guard let format = ImageFormatName.canonical(arguments[index]) else { throw a.bad("unknown format '\(arguments[index])'") }
                if !o.skipProcessing.contains(format) { o.skipProcessing.append(format) }
            }
        case "raw":
            try a.count(1...1)
            o.raw = try a.flag(0) ?? o.raw
        case "cachebuster", "cb":
            try a.count(1...1)
            o.cacheBuster = arguments[0]
        case "expires", "exp":
            try a.count(1...1)
            guard let time = Int(arguments[0]) else { throw a.bad("'\(arguments[0])' is not a unix time") }
            if time > 0, time < now { throw ServerError(status: 404, "expired URL") }
            o.delivery.expires = time > 0 ? time : nil
        case "filename", "fn":
            try a.count(1...2)
            var name = arguments[0]
            if try a.flag(1) == true {
                guard let decoded = ProcessingPath.base64URLDecoded(name) else { throw a.bad("is not URL-safe base64 of UTF-8 text") }
                name = decoded
            } else {
                name = name.removingPercentEncoding ?? name
            }
            o.delivery.filename = name.isEmpty ? nil : name
        case "return_attachment", "att":
            try a.count(1...1)
            o.delivery.returnsAttachment = try a.flag(0) ?? o.delivery.returnsAttachment
        case "max_src_resolution", "msr":
            try a.count(1...1)
            o.maxSourcePixels = try a.megapixels(0) ?? o.maxSourcePixels
        case "max_src_file_size", "msfs":
            try a.count(1...1)
            o.maxSourceBytes = try a.integer(0, 0...Int(Int32.max)) ?? o.maxSourceBytes
        case "max_animation_frames", "maf":
            try a.count(1...1)
            o.maxFrames = try a.integer(0, 1...1_000_000) ?? o.maxFrames
        case "max_animation_frame_resolution", "mafr":
            try a.count(1...1)
            o.maxFramePixels = try a.megapixels(0) ?? o.maxFramePixels
        case "max_result_dimension", "mrd":
            try a.count(1...1)
            o.maxResultDimension = try a.side(0) ?? o.maxResultDimension
        case "preset", "pr":
            for preset in arguments where !preset.isEmpty {
                guard let segments = presets[preset] else { throw a.bad("no preset '\(preset)'") }
                guard !used.contains(preset) else { continue }  // a preset inside itself: skipped, as in imgproxy
                try apply(segments, to: &o, using: used + [preset])
            }
        default:
            throw .badRequest("unknown option '\(name)'")
        }
    }

    /// `size`'s arguments (also `resize`'s after its type): width, height, enlarge, then extend's.
    private func size(_ a: Arguments, into o: inout ProcessingOptions) throws(ServerError) {
        o.width = try a.side(0) ?? o.width
        o.height = try a.side(1) ?? o.height
        o.enlarge = try a.flag(2) ?? o.enlarge
        if a.value(3) != nil { o.extend = try extensionValue(a.dropFirst(3), o.extend) }
    }

    private func extensionValue(_ a: Arguments, _ current: ProcessingOptions.Extension) throws(ServerError) -> ProcessingOptions.Extension {
        try a.count(1...4)
        var value = current
        value.enabled = try a.flag(0) ?? value.enabled
        if a.values.count > 1 { value.gravity = try a.gravity(from: 1, allowing: Gravity.Kind.common + [.focusPoint]) ?? Gravity() }
        return value
    }
}

/// An option's arguments, read by imgproxy's rules; each error names the option.
private struct Arguments {
    let name: String
    let values: [String]

    func bad(_ why: String) -> ServerError { .badRequest("bad option '\(name)': \(why)") }

    func dropFirst(_ count: Int) -> Arguments { Arguments(name: name, values: Array(values.dropFirst(count))) }

    func count(_ range: ClosedRange<Int>) throws(ServerError) {
        guard range.contains(values.count) else { throw bad("takes \(range.lowerBound)–\(range.upperBound) arguments") }
    }

    /// The argument at `index`, nil when absent or empty.
    func value(_ index: Int) -> String? {
        index < values.count && !values[index].isEmpty ? values[index] : nil
    }

    func side(_ index: Int) throws(ServerError) -> Int? {
        try integer(index, 0...ImageProcessors.Resize.maxSide)
    }

    /// `video_thumbnail_tile`'s or `video_thumbnail_animation`'s arguments over `current`: an
    /// empty argument keeps what was there; a step of 0 turns it off.
    func videoFrames(
        _ current: ProcessingOptions.VideoFrames?, first: ClosedRange<Int>, second: ClosedRange<Int>
    ) throws(ServerError) -> ProcessingOptions.VideoFrames? {
        try count(5...10)
        var frames = current ?? ProcessingOptions.VideoFrames()
        frames.step = try number(0, -86_400...86_400) ?? frames.step
        guard frames.step != 0 else { return nil }
        frames.first = try integer(1, first) ?? frames.first
        frames.second = try integer(2, second) ?? frames.second
        frames.width = try integer(3, 0...ImageProcessors.Resize.maxSide) ?? frames.width
        frames.height = try integer(4, 0...ImageProcessors.Resize.maxSide) ?? frames.height
        frames.extends = try flag(5) ?? frames.extends
        frames.trims = try flag(6) ?? frames.trims
        frames.fills = try flag(7) ?? frames.fills
        frames.focusX = try number(8, 0...1) ?? frames.focusX
        frames.focusY = try number(9, 0...1) ?? frames.focusY
        guard first.contains(frames.first), second.contains(frames.second) else {
            throw bad("needs its numbers: from \(first.lowerBound) to \(first.upperBound), then from \(second.lowerBound) to \(second.upperBound)")
        }
        return frames
    }

    func integer(_ index: Int, _ range: ClosedRange<Int>) throws(ServerError) -> Int? {
        guard let text = value(index) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw bad("'\(text)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A finite number in `range`, or, with `floor`, above it and at most the range's top.
    func number(_ index: Int, _ range: ClosedRange<Double>, above floor: Double? = nil) throws(ServerError) -> Double? {
        guard let text = value(index) else { return nil }
        let number = Double(text) ?? .nan
        let valid = number.isFinite && (floor.map { number > $0 && number <= range.upperBound } ?? range.contains(number))
        guard valid else { throw bad("'\(text)' is not a number from \(floor.map { "above \($0)" } ?? "\(range.lowerBound)") to \(range.upperBound)") }
        return number
    }

    /// Megapixels, as imgproxy's resolution arguments, in pixels.
    func megapixels(_ index: Int) throws(ServerError) -> Int? {
        try number(index, 0...100_000).map { Int($0 * 1_000_000) }
    }

    /// Go's strconv.ParseBool, which imgproxy uses.
    func flag(_ index: Int) throws(ServerError) -> Bool? {
        guard let text = value(index) else { return nil }
        switch text {
        case "1", "t", "T", "TRUE", "true", "True": return true
        case "0", "f", "F", "FALSE", "false", "False": return false
        default: throw bad("'\(text)' is not a boolean")
        }
    }

    func color(_ index: Int) throws(ServerError) -> RGBAColor? {
        guard let text = value(index) else { return nil }
        guard !text.hasPrefix("#"), text.utf8.count != 8, let color = RGBAColor(hex: text) else { throw bad("'\(text)' is not a hex colour") }
        return color
    }

    func resizingType(_ index: Int) throws(ServerError) -> ProcessingOptions.ResizingType? {
        guard let text = value(index) else { return nil }
        guard let type = ProcessingOptions.ResizingType(rawValue: text) else { throw bad("unknown resizing type '\(text)'") }
        return type
    }

    /// A gravity from the argument at `start`: its type, then offsets (`fp` takes exactly two
    /// fractions; `sm` none; `obj` class names, `objw` names and weights).
    func gravity(from start: Int, allowing kinds: [Gravity.Kind]) throws(ServerError) -> Gravity? {
        guard let text = value(start) else { return nil }
        let given = values.count - start
        if text == "objw", kinds.contains(.objects) {
            guard given % 2 == 1 else { throw bad("objw takes class names and weights in pairs") }
            var gravity = Gravity(.objects)
            for index in stride(from: start + 1, to: values.count, by: 2) {
                guard let name = value(index), !name.isEmpty else { throw bad("objw's class names cannot be empty") }
                if try number(index + 1, 0...1_000_000) ?? 1 > 0 { gravity.objectClasses.append(name.lowercased()) }
            }
            // Every class weighed at 0 asks for none: no object can centre the window.
            if gravity.objectClasses.isEmpty { gravity.objectClasses = ["none"] }
            return gravity
        }
        guard let kind = Gravity.Kind(rawValue: text), kinds.contains(kind) else { throw bad("unknown gravity '\(text)'") }
        switch kind {
        case .objects:
            var gravity = Gravity(.objects)
            for index in start + 1..<values.count {
                guard let name = value(index), !name.isEmpty else { throw bad("obj's class names cannot be empty") }
                gravity.objectClasses.append(name.lowercased())
            }
            return gravity
        case .smart:
            guard given == 1 else { throw bad("smart gravity takes no offsets") }
            return Gravity(.smart)
        case .focusPoint:
            guard given == 3 else { throw bad("a focus point takes x and y") }
            return Gravity(.focusPoint, x: try number(start + 1, 0...1) ?? 0.5, y: try number(start + 2, 0...1) ?? 0.5)
        default:
            guard given <= 3 else { throw bad("a gravity takes at most two offsets") }
            return Gravity(kind, x: try number(start + 1, -65_535...65_535) ?? 0, y: try number(start + 2, -65_535...65_535) ?? 0)
        }
    }
}

/// The image format names imgproxy knows, to their canonical names: the names of Imago's format
/// table (``Imago/ImageFormat/table``), which are imgproxy's (`heif` for HEIC, `tiff`, `jxl`, …).
enum ImageFormatName {
    static func canonical(_ name: String) -> String? { ImageFormat.named(name)?.rawValue }
}
