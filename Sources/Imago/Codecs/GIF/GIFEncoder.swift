import CGIF
import Foundation

/// Encodes GIF with giflib: one palette of at most 256 colours for every frame (a median cut:
/// exact when the image has that few), pixels under half opacity transparent.
/// An animation keeps its frames, durations (to the hundredth of a second) and loop count
/// (NETSCAPE2.0; none for "play once"); an opaque one writes each frame as the rectangle that
/// changed since the one before. Pixels with a colour profile are converted to sRGB first, as GIF
/// carries none.
public struct GIFEncoder: ImageEncoding {
    public let format = ImageFormat.gif

    /// Makes a GIF encoder.
    public init() {}

    /// The most memory ``encode(_:)`` allocates beyond `image`, known before it starts: a palette index per pixel and the LZW output, for each frame: 0.5 bytes a pixel on a 13 MP photo.
    public func workingBytes(for image: Image) -> Int { image.width * image.height * (1 + image.frames.count) }

    public func encode(_ image: Image) throws(ImagoError) -> Data {
        guard image.width > 0, image.height > 0, image.width <= 65_535, image.height <= 65_535 else {
            throw encodingError(format, "cannot write \(image.width)×\(image.height): GIF holds at most 65535×65535")
        }
        let image = image.convertedToSRGB()
        let palette = GIFPalette(frames: image.frames.map(\.pixels))
        let output = Output()
        var code: Int32 = 0
        let opened = EGifOpen(Unmanaged.passUnretained(output).toOpaque(), Self.write, &code)
        guard let gif = opened else { throw encodingError(format, Self.message(code)) }
        var failed = false
        withExtendedLifetime(output) {
            failed = !write(image, palette: palette, to: gif)
        }
        let failure = failed ? Self.message(gif.pointee.Error) : nil
        // Closing writes the trailer and frees the file either way.
        guard EGifCloseFile(gif, &code) == GIF_OK, failure == nil else { throw encodingError(format, failure ?? Self.message(code)) }
        return output.data
    }

    /// Where giflib's write callback puts the bytes.
    private final class Output {
        var data = Data()
    }

    private static let write: OutputFunc = { gif, bytes, count in
        guard let gif, let user = gif.pointee.UserData, let bytes, count > 0 else { return 0 }
        Unmanaged<Output>.fromOpaque(user).takeUnretainedValue().data.append(bytes, count: Int(count))
        return count
    }

    /// The screen, the loop count, then every frame; false when giflib fails.
    private func write(_ image: Image, palette: GIFPalette, to gif: UnsafeMutablePointer<GifFileType>) -> Bool {
        EGifSetGifVersion(gif, true)
        // The table has a power of two entries, 2…256.
        var tableSize = 2
        while tableSize < palette.count { tableSize *= 2 }
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: tableSize)
        for index in 0..<palette.count {
            colors[index] = GifColorType(Red: palette.colors[index * 3], Green: palette.colors[index * 3 + 1], Blue: palette.colors[index * 3 + 2])
        }
        guard let map = GifMakeMapObject(Int32(tableSize), &colors) else { return false }
        defer { GifFreeMapObject(map) }
        let bits = tableSize.trailingZeroBitCount
        guard EGifPutScreenDesc(gif, Int32(image.width), Int32(image.height), Int32(bits), 0, map) == GIF_OK else { return false }
        if image.isAnimated, image.loopCount != 1, !putLoopCount(image.loopCount, gif) { return false }
        var previous: [UInt8]?
        for frame in image.frames {
            let indices = palette.indices(frame.pixels)
            // Transparent frames replace the whole canvas (disposed to the background after); opaque
            // ones draw over the last and need only the rectangle that changed.
            let area = palette.transparentIndex == nil ? Self.changed(indices, since: previous, width: image.width) : nil
            let rectangle = area ?? (left: 0, top: 0, width: image.width, height: image.height)
            if image.isAnimated || palette.transparentIndex != nil {
                let delay = frame.duration.components
                let centiseconds = Int(delay.seconds) * 100 + Int(delay.attoseconds / 10_000_000_000_000_000)
                var control = GraphicsControlBlock(
                    DisposalMode: palette.transparentIndex == nil ? DISPOSE_DO_NOT : DISPOSE_BACKGROUND, UserInputFlag: false,
                    DelayTime: Int32(min(max(centiseconds, 0), 65_535)), TransparentColor: Int32(palette.transparentIndex ?? Int(NO_TRANSPARENT_COLOR)))
                var block = [GifByteType](repeating: 0, count: 4)
                let length = EGifGCBToExtension(&control, &block)
                guard EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), block) == GIF_OK else { return false }
            }
            guard
                EGifPutImageDesc(gif, Int32(rectangle.left), Int32(rectangle.top), Int32(rectangle.width), Int32(rectangle.height), false, nil)
                    == GIF_OK
            else { return false }
            var row = [GifPixelType](repeating: 0, count: rectangle.width)
            for y in rectangle.top..<(rectangle.top + rectangle.height) {
                let start = y * image.width + rectangle.left
                row.withUnsafeMutableBufferPointer { row in
                    for x in 0..<rectangle.width { row[x] = indices[start + x] }
                }
                guard EGifPutLine(gif, &row, Int32(rectangle.width)) == GIF_OK else { return false }
            }
            previous = indices
        }
        return true
    }

    /// The NETSCAPE2.0 application extension: repeat `count` times, 0 for ever.
    private func putLoopCount(_ count: Int, _ gif: UnsafeMutablePointer<GifFileType>) -> Bool {
        let loops = UInt16(clamping: count)
        return EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK
            && EGifPutExtensionBlock(gif, 11, Array("NETSCAPE2.0".utf8)) == GIF_OK
            && EGifPutExtensionBlock(gif, 3, [1, UInt8(loops & 0xFF), UInt8(loops >> 8)]) == GIF_OK
            && EGifPutExtensionTrailer(gif) == GIF_OK
    }

    /// The smallest rectangle holding every index that differs from `previous` (one pixel when
    /// none does: a frame must hold at least one); nil for the first frame.
    static func changed(_ indices: [UInt8], since previous: [UInt8]?, width: Int) -> (left: Int, top: Int, width: Int, height: Int)? {
        guard let previous else { return nil }
        let height = indices.count / width
        var left = width, right = -1, top = height, bottom = -1
        for y in 0..<height {
            let start = y * width
            var first = -1, last = -1
            for x in 0..<width where indices[start + x] != previous[start + x] {
                if first < 0 { first = x }
                last = x
            }
            guard first >= 0 else { continue }
            (left, right) = (min(left, first), max(right, last))
            (top, bottom) = (min(top, y), y)
        }
        guard right >= 0 else { return (0, 0, 1, 1) }
        return (left, top, right - left + 1, bottom - top + 1)
    }

    private static func message(_ code: Int32) -> String {
        guard let text = GifErrorString(code) else { return "giflib error \(code)" }
        return String(cString: text)
    }
}
