import CGIF
import Foundation

/// Decodes GIF with giflib, record by record so every frame's size is checked before its pixels
/// are read: all frames composited on the canvas with disposal none / background / previous,
/// transparency, interlacing, loop count (NETSCAPE2.0) and delays, where 10 ms or less counts as
/// 100 ms as browsers do. Blocks of part of the canvas with no delay join the frame they complete
/// (a picture painted in parts, more than 256 colours in all). A stream cut after at least one whole frame yields the frames it has.
public struct GIFDecoder: ImageDecoding {
    public let format = ImageFormat.gif

    /// Makes a GIF decoder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool {
        data.starts(with: Array("GIF87a".utf8)) || data.starts(with: Array("GIF89a".utf8))
    }

    /// The canvas and a copy of it for every frame, the frames counted by walking the blocks.
    public func estimate(_ data: Data, options: DecodingOptions) -> DecodeEstimate? {
        data.withUnsafeBytes { bytes -> DecodeEstimate in
            guard bytes.count >= 13 else { return DecodeEstimate(width: 0, height: 0, bytes: 0) }
            let width = Int(bytes[6]) | Int(bytes[7]) << 8, height = Int(bytes[8]) | Int(bytes[9]) << 8
            return .buffers(Self.frameCount(bytes) + 1, width: width, height: height, options: options)
        }
    }

    /// The image descriptors in a GIF, found by hopping over color tables and sub-blocks.
    static func frameCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= 13 else { return 0 }
        var offset = 13, frames = 0
        if bytes[10] & 0x80 != 0 { offset += 3 << (Int(bytes[10] & 7) + 1) }
        func skipSubBlocks() {
            while offset < bytes.count {
                let length = Int(bytes[offset])
                offset += 1 + length
                if length == 0 { return }
            }
        }
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x21:
                offset += 2
                skipSubBlocks()
            case 0x2C:
                frames += 1
                guard offset + 10 < bytes.count else { return frames }
                let flags = bytes[offset + 9]
                offset += 10
                if flags & 0x80 != 0 { offset += 3 << (Int(flags & 7) + 1) }
                offset += 1  // LZW minimum code size
                skipSubBlocks()
            default:
                return frames  // the trailer, or bytes that are not a block
            }
        }
        return frames
    }

    public func decode(_ data: Data, options: DecodingOptions) throws(ImagoError) -> Image {
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(ImagoError) in try decode(bytes, options: options) }
        }
        return try result.get()
    }

    /// Where giflib's read callback takes its bytes from.
    private final class Input {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    }

    /// The graphics control extension in force for the next frame.
    private struct Control {
        var disposal = Int32(DISPOSAL_UNSPECIFIED)
        var delay = 0
        var transparentIndex = Int32(NO_TRANSPARENT_COLOR)
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImagoError) -> Image {
        let input = Input(bytes)
        var status: Int32 = 0
        let opened = withExtendedLifetime(input) {
            DGifOpen(
                Unmanaged.passUnretained(input).toOpaque(),
                { gif, buffer, count in
                    guard let gif, let buffer, let user = gif.pointee.UserData else { return 0 }
                    let input = Unmanaged<Input>.fromOpaque(user).takeUnretainedValue()
                    let available = min(Int(count), input.bytes.count - input.offset)
                    guard available > 0, let base = input.bytes.baseAddress else { return 0 }
                    buffer.update(from: base.advanced(by: input.offset).assumingMemoryBound(to: UInt8.self), count: available)
                    input.offset += available
                    return Int32(available)
                }, &status)
        }
        guard let gif = opened else { throw ImagoError.invalid(.gif, Self.message(status)) }
        defer { DGifCloseFile(gif, &status) }
        return try withExtendedLifetime(input) { () throws(ImagoError) -> Image in
            try decodeFrames(gif, declaredFrames: Self.frameCount(bytes), options: options)
        }
    }

    /// `declaredFrames` (the image descriptors a walk over the blocks found) lets an animation
    /// over the limits be refused before its canvas is allocated; each frame is checked again as
    /// it is read, since a damaged file may hold fewer.
    private func decodeFrames(_ gif: UnsafeMutablePointer<GifFileType>, declaredFrames: Int, options: DecodingOptions) throws(ImagoError) -> Image {
        let width = Int(gif.pointee.SWidth), height = Int(gif.pointee.SHeight)
        try options.check(width: width, height: height)
        // n frames hold n buffers at the last one (the newest shares the canvas).
        try options.checkFrames(declaredFrames, width: width, height: height)
        try options.checkMemory(max(declaredFrames, 1), width: width, height: height)
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var frames: [Image.Frame] = []
        var control = Control()
        var loopCount = 1
        var failure: ImagoError?
        // Parts painted since the last frame, which the next block completes (or the end does).
        var paintedPart = false
        records: while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else {
                failure = Self.error(gif)
                break
            }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else {
                    failure = Self.error(gif)
                    break records
                }
                try options.checkFrames(frames.count + 1, width: width, height: height)
                // Held while this frame is drawn: the frames so far, the canvas (a copy once a frame
                // shares it) and, for disposal "previous", the canvas saved before drawing.
                let savesCanvas = control.disposal == DISPOSE_PREVIOUS
                try options.checkMemory(frames.count + 1 + (savesCanvas ? 1 : 0), width: width, height: height)
                do {
                    let saved = savesCanvas ? canvas : nil
                    let drawn = try Self.drawFrame(gif, transparentIndex: control.transparentIndex, on: &canvas, width: width, height: height, options: options)
                    // A block of part of the canvas with no delay, whose pixels stay, is one part of a
                    // picture painted in parts (the "high colour" technique: blocks of 256 colours
                    // each): it joins the frame it completes. Whole-canvas frames of no delay stay
                    // frames, as browsers animate them.
                    let keeps = control.disposal == DISPOSAL_UNSPECIFIED || control.disposal == DISPOSE_DO_NOT
                    let isPart = drawn.x.count < width || drawn.y.count < height
                    if control.delay == 0, keeps, isPart {
                        paintedPart = true
                        control = Control()
                        continue records
                    }
                    paintedPart = false
                    // Browsers show delays of 10 ms or less as 100 ms.
                    let delay = control.delay <= 1 ? 100 : control.delay * 10
                    frames.append(Image.Frame(pixels: canvas, duration: .milliseconds(delay)))
                    if control.disposal == DISPOSE_BACKGROUND {
                        Self.clear(drawn, on: &canvas, width: width)
                    } else if let saved {
                        canvas = saved
                    }
                    control = Control()
                } catch {
                    failure = error
                    break records
                }
            case EXTENSION_RECORD_TYPE:
                do {
                    try Self.readExtension(gif, control: &control, loopCount: &loopCount)
                } catch {
                    failure = error
                    break records
                }
            case TERMINATE_RECORD_TYPE:
                break records
            default:
                failure = ImagoError.invalid(.gif, "unknown record")
                break records
            }
        }
        if paintedPart { frames.append(Image.Frame(pixels: canvas, duration: .milliseconds(100))) }
        if let failure, frames.isEmpty { throw failure }
        guard !frames.isEmpty else { throw ImagoError.invalid(.gif, "no image in the file") }
        if frames.count == 1 { frames[0].duration = .zero }
        let hasAlpha = frames.contains { frame in stride(from: 3, to: frame.pixels.count, by: 4).contains { frame.pixels[$0] != 255 } }
        return Image(
            width: width, height: height, frames: frames, loopCount: frames.count > 1 ? loopCount : 0,
            metadata: ImageMetadata(format: .gif, originalWidth: width, originalHeight: height, hasAlpha: hasAlpha, bitsPerSample: 8)
        )
    }

    /// The part of a frame's rectangle that lies on the canvas: a frame may be declared anywhere,
    /// partly or wholly outside it (Pillow and browsers draw only what falls inside).
    private struct Visible {
        var x: Range<Int>
        var y: Range<Int>
    }

    /// Reads the current image row by row (de-interlaced) and draws its opaque pixels on the canvas
    /// through its color map (local, else global). One row buffer, so a frame declared larger than
    /// the canvas costs no more memory than the canvas. Returns the rectangle drawn.
    private static func drawFrame(
        _ gif: UnsafeMutablePointer<GifFileType>, transparentIndex: Int32, on canvas: inout [UInt8], width: Int, height: Int,
        options: DecodingOptions
    ) throws(ImagoError) -> Visible {
        let description = gif.pointee.Image
        let left = Int(description.Left), top = Int(description.Top)
        let frameWidth = Int(description.Width), frameHeight = Int(description.Height)
        try options.check(width: frameWidth, height: frameHeight)
        let visible = Visible(x: min(left, width)..<min(left + frameWidth, width), y: min(top, height)..<min(top + frameHeight, height))
        let rows: [Int] =
            description.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: frameHeight, by: step)) }
            : Array(0..<frameHeight)
        let map = description.ColorMap ?? gif.pointee.SColorMap
        let colors = map?.pointee.Colors
        let colorCount = colors == nil ? 0 : Int(map?.pointee.ColorCount ?? 0)
        var line = [GifPixelType](repeating: 0, count: frameWidth)
        for row in rows {
            let ok = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frameWidth)) == GIF_OK }
            guard ok else { throw error(gif) }
            let y = top + row
            guard visible.y.contains(y), let colors else { continue }
            for x in visible.x {
                let index = Int(line[x - left])
                // Transparent and out-of-palette pixels leave the canvas as it is.
                guard index != Int(transparentIndex), index < colorCount else { continue }
                let color = colors[index]
                let offset = (y * width + x) * 4
                canvas[offset] = color.Red
                canvas[offset + 1] = color.Green
                canvas[offset + 2] = color.Blue
                canvas[offset + 3] = 255
            }
        }
        return visible
    }

    /// Disposal to background: browsers clear the frame's rectangle (the part on the canvas) to transparent.
    private static func clear(_ visible: Visible, on canvas: inout [UInt8], width: Int) {
        for y in visible.y {
            for x in visible.x {
                let offset = (y * width + x) * 4
                canvas[offset] = 0
                canvas[offset + 1] = 0
                canvas[offset + 2] = 0
                canvas[offset + 3] = 0
            }
        }
    }

    /// Reads an extension: the graphics control block, or the NETSCAPE2.0 loop count.
    private static func readExtension(_ gif: UnsafeMutablePointer<GifFileType>, control: inout Control, loopCount: inout Int) throws(ImagoError) {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw error(gif) }
        var isNetscape = false
        var first = true
        while let current = block {
            let length = Int(current[0])
            if code == GRAPHICS_EXT_FUNC_CODE, first {
                var gcb = GraphicsControlBlock()
                if DGifExtensionToGCB(length, current + 1, &gcb) == GIF_OK {
                    control = Control(disposal: gcb.DisposalMode, delay: Int(gcb.DelayTime), transparentIndex: gcb.TransparentColor)
                }
            } else if code == APPLICATION_EXT_FUNC_CODE, first {
                isNetscape = length == 11 && (0..<11).map { current[1 + $0] } == Array("NETSCAPE2.0".utf8)
            } else if isNetscape, length >= 3, current[1] == 1 {
                loopCount = Int(current[2]) | Int(current[3]) << 8
            }
            first = false
            guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw error(gif) }
        }
    }

    private static func error(_ gif: UnsafeMutablePointer<GifFileType>) -> ImagoError {
        ImagoError.invalid(.gif, message(gif.pointee.Error))
    }

    /// giflib's message for an error code. It has none for 0, which it reports when data stops
    /// right after an image descriptor, and none for codes it does not know.
    private static func message(_ code: Int32) -> String {
        guard code != 0, let text = GifErrorString(code) else { return "data ends early or is corrupt" }
        return String(cString: text)
    }

}
