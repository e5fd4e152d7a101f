import Foundation
import Imago

extension ThumborTransformation {
    /// One post-transform filter on `image`. Filters that only set how the answer is written
    /// (`format`, `quality`, `max_bytes`, `max_age`, `autojpg`, `strip_exif`, `strip_icc`) leave the
    /// pixels; the plan reads them.
    func apply(_ filter: ThumborFilter, to image: Image) throws(ImagoError) -> Image {
        let alpha = image.metadata.hasAlpha
        switch filter {
        case .brightness(let percent): return FramePixels.eachFrame(image) { ThumborPixels.brightness(&$0, percent) }
        case .contrast(let percent): return FramePixels.eachFrame(image) { ThumborPixels.contrast(&$0, percent) }
        case .rgb(let red, let green, let blue): return FramePixels.eachFrame(image) { ThumborPixels.rgb(&$0, red, green, blue) }
        case .saturation(let change): return FramePixels.eachFrame(image) { ThumborPixels.saturation(&$0, change) }
        case .equalize: return FramePixels.eachFrame(image) { ThumborPixels.equalize(&$0) }
        case .curve(let all, let red, let green, let blue):
            return FramePixels.eachFrame(image) { ThumborPixels.curve(&$0, all: all, red: red, green: green, blue: blue) }
        case .noise(let amount, let seed): return FramePixels.eachFrame(image) { ThumborPixels.noise(&$0, amount: amount, seed: seed) }
        case .colorize(let red, let green, let blue, let color):
            // thumbor reads the colour with `bytearray.fromhex`: six hex digits, else the filter fails.
            guard color.utf8.count == 6, let value = Int(color, radix: 16) else { throw Self.failed("colorize needs a colour of six hex digits") }
            let fill = (value >> 16 & 0xFF, value >> 8 & 0xFF, value & 0xFF)
            return FramePixels.eachFrame(image) { ThumborPixels.colorize(&$0, percents: (red, green, blue), fill: fill) }
        case .grayscale: return try ImageProcessors.Grayscale().process(image)
        case .convolution(let matrix, let columns, let normalize):
            return try FramePixels.eachFrame(image) { (pixels: inout [UInt8]) throws(ImagoError) in
                pixels = try ThumborPixels.convolve(
                    pixels, width: image.width, height: image.height, kernel: matrix, columns: columns, normalize: normalize, alpha: alpha)
            }
        case .blur(let radius, let sigma):
            return try FramePixels.eachFrame(image) { (pixels: inout [UInt8]) throws(ImagoError) in
                pixels = try ThumborPixels.blur(pixels, width: image.width, height: image.height, radius: radius, sigma: sigma, alpha: alpha)
            }
        case .sharpen(let amount, let radius, let luminanceOnly):
            return FramePixels.eachFrame(image) {
                ThumborSharpen.apply(&$0, width: image.width, height: image.height, amount: amount, radius: radius, luminanceOnly: luminanceOnly)
            }
        case .proportion(let factor):
            guard factor > 0, factor <= 1 else { return image }
            let (width, height) = (Double(image.width) * factor, Double(image.height) * factor)
            guard width >= 1, height >= 1 else { return image }
            return try ImageProcessors.Resize(size: PixelSize(width: Int(width), height: Int(height)), contentMode: .fill, upscale: true).process(image)
        case .upscale: return try upscaled(image)
        case .backgroundColor(let name):
            guard let color = ThumborColor.parse(name) else { throw Self.failed("background_color names no colour") }
            let canvas = FramePixels.canvas(image.width, image.height, color)
            return FramePixels.eachFrame(image, alpha: true) { pixels in
                var base = canvas
                ThumborPixels.composite(
                    pixels, width: image.width, height: image.height, over: &base, width: image.width, height: image.height, x: 0, y: 0, merge: true)
                pixels = base
            }
        case .fill(let color, let fillTransparent): return try filled(image, color: color, fillTransparent: fillTransparent)
        case .roundCorner(let a, let b, let red, let green, let blue, let transparent):
            return FramePixels.eachFrame(image, alpha: transparent ? true : nil) { pixels in
                ThumborRoundCorner.apply(
                    &pixels, width: image.width, height: image.height, a: a, b: b,
                    color: (UInt8(truncatingIfNeeded: red), UInt8(truncatingIfNeeded: green), UInt8(truncatingIfNeeded: blue)),
                    transparent: transparent)
            }
        case .watermark(let watermark): return try watermarked(image, watermark)
        case .frame(let url): return try framed(image, url)
        // The plan turns `rotate` into its own step; the rest set how the answer is written.
        case .rotate, .autoJPG, .extractFocal, .focal, .format, .maxAge, .maxBytes, .noUpscale, .quality, .stretch, .stripEXIF, .stripICC: return image
        }
    }

    static func failed(_ reason: String) -> ImagoError { ImagoError(.processingFailed(reason), url: nil, stage: .processing) }

    /// `upscale`: enlarged to fit the request's box when smaller on both sides (the canvas budget
    /// is checked by the plan, from ``upscaledSize(_:)``).
    private func upscaled(_ image: Image) throws(ImagoError) -> Image {
        guard let size = upscaledSize(PixelSize(width: image.width, height: image.height)) else { return image }
        return try ImageProcessors.Resize(size: PixelSize(width: max(1, size.width), height: max(1, size.height)), contentMode: .fill, upscale: true)
            .process(image)
    }

    /// The size `upscale` makes of a picture of `size`; nil when it leaves it.
    func upscaledSize(_ size: PixelSize) -> PixelSize? {
        let targetWidth = Double(pixels(requestWidth, size.width)), targetHeight = Double(pixels(requestHeight, size.height))
        let (sourceWidth, sourceHeight) = (Double(size.width), Double(size.height))
        guard sourceWidth < targetWidth, sourceHeight < targetHeight else { return nil }
        if sourceWidth / targetWidth >= sourceHeight / targetHeight {
            return PixelSize(width: Int(targetWidth), height: Int(sourceHeight * targetWidth / sourceWidth))
        }
        return PixelSize(width: Int(sourceWidth * targetHeight / sourceHeight), height: Int(targetHeight))
    }

    /// `fill`: a canvas of the request's box (the image's side where the box has 0) in the colour,
    /// the image centred on it, composed over it when `fillTransparent`, else pasted.
    private func filled(_ image: Image, color name: String, fillTransparent: Bool) throws(ImagoError) -> Image {
        let width = pixels(requestWidth, image.width), height = pixels(requestHeight, image.height)
        let (targetWidth, targetHeight) = (width == 0 ? image.width : width, height == 0 ? image.height : height)
        var background: [UInt8]
        let lower = name.lowercased()
        if lower == "blur" {
            // The image over transparency, blurred at radius 50, stretched to the box.
            let blurred = try ThumborPixels.blur(image.frames[0].pixels, width: image.width, height: image.height, radius: 50, sigma: 0, alpha: true)
            var metadata = image.metadata
            metadata.hasAlpha = true
            let small = Image(width: image.width, height: image.height, frames: [.init(pixels: blurred)], metadata: metadata)
            background = try ImageProcessors.Resize(size: PixelSize(width: targetWidth, height: targetHeight), contentMode: .fill, upscale: true).process(small)
                .pixels
        } else {
            let color: RGBAColor?
            if lower == "auto" {
                let mean = ThumborPixels.meanColor(image.frames[0].pixels)
                color = RGBAColor(red: UInt8(mean.0), green: UInt8(mean.1), blue: UInt8(mean.2))
            } else {
                color = ThumborColor.parse(name)
            }
            guard let color else { throw Self.failed("fill names no colour") }
            background = FramePixels.canvas(targetWidth, targetHeight, color)
        }
        let x = (targetWidth - image.width).floorDivided(by: 2), y = (targetHeight - image.height).floorDivided(by: 2)
        var frames: [Image.Frame] = []
        for frame in image.frames {
            var base = background
            var top = frame.pixels
            if !image.metadata.hasAlpha { FramePixels.makeOpaque(&top) }
            ThumborPixels.composite(
                top, width: image.width, height: image.height, over: &base, width: targetWidth, height: targetHeight, x: x, y: y, merge: fillTransparent)
            frames.append(.init(pixels: base, duration: frame.duration))
        }
        var metadata = image.metadata
        metadata.hasAlpha = true
        return Image(width: targetWidth, height: targetHeight, frames: frames, loopCount: image.loopCount, metadata: metadata)
            .carryingGainMap(of: image, .region(x: Double(-x), y: Double(-y), width: Double(targetWidth), height: Double(targetHeight)))
    }

    /// `watermark(url, x, y, alpha, w_ratio, h_ratio)`, as thumbor's filter places it.
    private func watermarked(_ image: Image, _ mark: ThumborWatermark) throws(ImagoError) -> Image {
        guard let overlay = overlays[mark.url] else { throw Self.failed("the watermark could not be loaded") }
        var watermark = overlay
        var markPixels = watermark.frames[0].pixels
        if !watermark.metadata.hasAlpha { FramePixels.makeOpaque(&markPixels) }
        ThumborPixels.fade(&markPixels, percent: mark.alpha)
        var metadata = watermark.metadata
        metadata.hasAlpha = true
        watermark = Image(width: watermark.width, height: watermark.height, frames: [.init(pixels: markPixels)], metadata: metadata)
        let imageSize = (Double(image.width), Double(image.height))
        var markSize = (watermark.width, watermark.height)
        if mark.widthRatio != nil || mark.heightRatio != nil {
            var maxWidth = mark.widthRatio.map { imageSize.0 * $0 }, maxHeight = mark.heightRatio.map { imageSize.1 * $0 }
            let own = (Double(markSize.0), Double(markSize.1))
            if maxWidth == nil { maxWidth = own.0 * maxHeight! / own.1 }
            if maxHeight == nil { maxHeight = own.1 * maxWidth! / own.0 }
            if own.0 / maxWidth! >= own.1 / maxHeight! {
                markSize = (Int(maxWidth!.rounded(.toNearestOrEven)), Int((own.1 * maxWidth! / own.0).rounded(.toNearestOrEven)))
            } else {
                markSize = (Int((own.0 * maxHeight! / own.1).rounded(.toNearestOrEven)), Int(maxHeight!.rounded(.toNearestOrEven)))
            }
            try checkCanvas(markSize.0, markSize.1)
            watermark = try ImageProcessors.Resize(size: PixelSize(width: max(1, markSize.0), height: max(1, markSize.1)), contentMode: .fill, upscale: true)
                .process(watermark)
            markSize = (watermark.width, watermark.height)
        }
        /// `Np` as pixels of `length`; otherwise the text.
        func position(_ text: String, _ length: Int) -> String {
            guard text.hasSuffix("p"), let percent = Double(text.dropFirst(text.hasPrefix("-") ? 1 : 0).dropLast()) else { return text }
            return (text.hasPrefix("-") ? "-" : "") + String(Int((Double(length) * percent / 100 + 1e-5).rounded(.toNearestOrEven)))
        }
        let xText = position(mark.x, image.width), yText = position(mark.y, image.height)
        /// Where the copy goes along an axis that does not repeat: centred, or offset from either edge.
        func placement(_ text: String, _ length: Int, _ size: Int) -> Int {
            if text == "center" { return Int(Double(length - size) / 2) }
            let value = Int(text) ?? 0
            return text.hasPrefix("-") ? length - size + value : value
        }
        var spots: [(Int, Int)] = []
        let repeatX = xText == "repeat", repeatY = yText == "repeat"
        /// How many copies along a repeating axis, and the room left between them.
        func tiles(_ length: Int, _ size: Int) -> (count: Int, space: Int) {
            if Double(length) / Double(size) < 2 { return (Int((Double(length) / Double(size)).rounded(.up)), 10) }
            return (length / size, length % size)
        }
        if !repeatX, !repeatY {
            spots = [(placement(xText, image.width, markSize.0), placement(yText, image.height, markSize.1))]
        } else if repeatX, repeatY {
            var x = tiles(image.width, markSize.0), y = tiles(image.height, markSize.1)
            if x.count * y.count > 100 {
                let (countX, countY) = (min(6, x.count), min(6, y.count))
                x = (countX, image.width - countX * markSize.0)
                y = (countY, image.height - countY * markSize.1)
            }
            let spaceX = x.space.floorDivided(by: max(x.count, 2) - 1), spaceY = y.space.floorDivided(by: max(y.count, 2) - 1)
            for i in 0..<max(0, x.count) {
                for j in 0..<max(0, y.count) { spots.append((i * spaceX + i * markSize.0, j * spaceY + j * markSize.1)) }
            }
        } else if repeatX {
            let x = tiles(image.width, markSize.0), y = placement(yText, image.height, markSize.1)
            let space = x.space.floorDivided(by: max(x.count, 2) - 1)
            for i in 0..<max(0, x.count) { spots.append((i * space + i * markSize.0, y)) }
        } else {
            let y = tiles(image.height, markSize.1), x = placement(xText, image.width, markSize.0)
            let space = y.space.floorDivided(by: max(y.count, 2) - 1)
            for j in 0..<max(0, y.count) { spots.append((x, j * space + j * markSize.1)) }
        }
        let top = watermark.frames[0].pixels
        let marked = FramePixels.eachFrame(image, alpha: true) { pixels in
            if !image.metadata.hasAlpha { FramePixels.makeOpaque(&pixels) }
            for (x, y) in spots {
                ThumborPixels.composite(
                    top, width: markSize.0, height: markSize.1, over: &pixels, width: image.width, height: image.height, x: x, y: y, merge: true)
            }
        }
        return FramePixels.unboosted(marked, under: top, width: markSize.0, height: markSize.1, at: spots.map { (x: $0.0, y: $0.1) })
    }

    /// `frame(url)`: the image padded by the nine-patch's padding and drawn over by its stretched
    /// cells (thumbor's `_nine_patch`).
    private func framed(_ image: Image, _ url: String) throws(ImagoError) -> Image {
        guard let patch = overlays[url], let padding = framePadding(url) else { throw Self.failed("the frame could not be loaded") }
        let patchPixels = Self.opaquePixels(patch)
        let width = image.width + max(0, padding.left) + max(0, padding.right), height = image.height + max(0, padding.top) + max(0, padding.bottom)
        var frames: [Image.Frame] = []
        for frame in image.frames {
            // The image pasted on white at the padding (Pillow's paste, alpha copied too).
            var canvas = FramePixels.canvas(width, height, .white)
            var top = frame.pixels
            if !image.metadata.hasAlpha { FramePixels.makeOpaque(&top) }
            ThumborPixels.composite(
                top, width: image.width, height: image.height, over: &canvas, width: width, height: height, x: max(0, padding.left), y: max(0, padding.top),
                merge: false)
            ThumborNinePatch.draw(patchPixels, width: patch.width, height: patch.height, onto: &canvas, width: width, height: height)
            frames.append(.init(pixels: canvas, duration: frame.duration))
        }
        var metadata = image.metadata
        metadata.hasAlpha = true
        return Image(width: width, height: height, frames: frames, loopCount: image.loopCount, metadata: metadata)
            .carryingGainMap(
                of: image, .region(x: Double(-max(0, padding.left)), y: Double(-max(0, padding.top)), width: Double(width), height: Double(height)))
    }
}

extension ThumborTransformation {
    /// The nine-patch padding of the frame image at `url`; nil when it was not loaded.
    func framePadding(_ url: String) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        guard let patch = overlays[url] else { return nil }
        return ThumborNinePatch.padding(Self.opaquePixels(patch), width: patch.width, height: patch.height)
    }

    /// The first frame's pixels, alpha made opaque when the image has none.
    static func opaquePixels(_ image: Image) -> [UInt8] {
        var pixels = image.frames[0].pixels
        if !image.metadata.hasAlpha { FramePixels.makeOpaque(&pixels) }
        return pixels
    }
}

extension Int {
    /// Python's `//`: the quotient rounded toward negative infinity.
    func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
