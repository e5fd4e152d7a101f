import CLCMS
import CLCMSSupport
import Dispatch
import Foundation

/// What the pixels handed to a ``ColorTransform`` hold.
enum ColorPixelLayout: Hashable, Sendable {
    /// RGBA, 8 bits a sample (gray images as R = G = B).
    case rgba8
    /// RGBA, 16 bits a sample in the machine's byte order (gray as R = G = B).
    case rgba16
    /// CMYK, 8 bits a sample, 0 = no ink.
    case cmyk8
    /// CMYK, 8 bits a sample, inverted (255 = no ink), as Adobe's applications write JPEG.
    case cmyk8Inverted
}

/// A conversion from one profile's pixels to sRGB RGBA8, relative colorimetric with black-point
/// compensation, made once per profile and layout (``ColorTransforms``) and shared by every
/// thread: Little CMS transforms made without their one-pixel cache are safe to share.
///
/// An RGB matrix/shaper profile is converted by ``MatrixShaper`` (more exact at 16 bits and faster
/// than Little CMS's optimised transforms); a gray profile is a table of 65,536 levels, made through
/// Little CMS once. A transform whose
/// output differs by at most 1 from its input on a grid of colours (an sRGB profile, under another
/// name or version) is ``isIdentity`` and skipped.
final class ColorTransform: @unchecked Sendable {
    private enum Method {
        case identity
        case lcms(cmsHTRANSFORM)
        /// Curves and a matrix, for an RGB matrix/shaper profile.
        case matrixShaper(MatrixShaper)
        /// sRGB R, G, B for each 16-bit gray level.
        case grayTable([UInt8])

        /// Whether the method lives in its Little CMS context.
        var needsContext: Bool {
            if case .lcms = self { true } else { false }
        }
    }

    private let method: Method
    private let context: cmsContext?
    let layout: ColorPixelLayout

    /// Images below this many pixels are transformed on the calling thread alone. A 500×312
    /// thumbnail (156,000 pixels, 2.9 ms on one core here) is worth splitting: `imago serve` made
    /// cold variants of profiled photos 14% slower than of untagged ones with it at 262,144.
    private static let parallelThreshold = 1 << 16

    private init(method: Method, context: cmsContext?, layout: ColorPixelLayout) {
        self.method = method
        self.context = context
        self.layout = layout
    }

    deinit {
        if case .lcms(let transform) = method { cmsDeleteTransform(transform) }
        imago_lcms_context_delete(context)
    }

    /// Whether the transform leaves 8-bit RGB as it is.
    var isIdentity: Bool {
        if case .identity = method { true } else { false }
    }

    /// Why a profile was not used.
    enum Refusal: String, Error {
        /// Over ``DecodingOptions/maxColorProfileSize``.
        case tooLarge = "too_large"
        /// Little CMS could not read it, or needed more than ``DecodingOptions/maxColorTransformMemory``.
        case unreadable
        /// It describes other pixels than the image has (a CMYK profile on RGB pixels).
        case mismatched
    }

    /// Makes the transform for `profile`'s pixels laid out as `layout`, within the limits.
    static func make(profile: ColorProfile, layout: ColorPixelLayout, maxProfileSize: Int, maxMemory: Int) -> Result<ColorTransform, Refusal> {
        guard profile.data.count <= maxProfileSize else { return .failure(.tooLarge) }
        let isCMYK = layout == .cmyk8 || layout == .cmyk8Inverted
        switch profile.kind {
        case .cmyk where !isCMYK, .rgb where isCMYK, .gray where isCMYK, .other: return .failure(.mismatched)
        default: break
        }
        guard let context = imago_lcms_context_create(maxMemory) else { return .failure(.unreadable) }
        switch method(profile: profile, layout: layout, context: context) {
        case .failure(let refusal):
            imago_lcms_context_delete(context)
            return .failure(refusal)
        case .success(let method):
            // Only a Little CMS transform lives on in its context; a table or the identity does not.
            guard method.needsContext else {
                imago_lcms_context_delete(context)
                return .success(ColorTransform(method: method, context: nil, layout: layout))
            }
            return .success(ColorTransform(method: method, context: context, layout: layout))
        }
    }

    /// Reads the profile in `context` and makes the method; every profile it opens is closed
    /// before it returns, so the caller may delete the context on failure.
    private static func method(profile: ColorProfile, layout: ColorPixelLayout, context: cmsContext) -> Result<Method, Refusal> {
        let source = profile.data.withUnsafeBytes { cmsOpenProfileFromMemTHR(context, $0.baseAddress, cmsUInt32Number($0.count)) }
        guard let source else { return .failure(.unreadable) }
        defer { cmsCloseProfile(source) }
        guard let target = cmsCreate_sRGBProfileTHR(context) else { return .failure(.unreadable) }
        defer { cmsCloseProfile(target) }
        // The header may say one thing and the tags another: Little CMS's reading decides.
        let isCMYK = layout == .cmyk8 || layout == .cmyk8Inverted
        let expected: cmsColorSpaceSignature = isCMYK ? cmsSigCmykData : profile.kind == .gray ? cmsSigGrayData : cmsSigRgbData
        guard cmsGetColorSpace(source) == expected else { return .failure(.mismatched) }
        let flags = cmsUInt32Number(cmsFLAGS_NOCACHE | cmsFLAGS_BLACKPOINTCOMPENSATION)
        let intent = cmsUInt32Number(INTENT_RELATIVE_COLORIMETRIC)
        if profile.kind == .rgb, layout == .rgba8 || layout == .rgba16, let shaper = MatrixShaper(source: source, sRGB: target) {
            if layout == .rgba8, isIdentity({ shaper.apply(rgba8: $0, count: $1) }) { return .success(.identity) }
            return .success(.matrixShaper(shaper))
        }
        if profile.kind == .gray {
            guard let table = grayTable(source, target, context: context, intent: intent, flags: flags) else { return .failure(.unreadable) }
            return .success(.grayTable(table))
        }
        let input: cmsUInt32Number =
            switch layout {
            case .rgba8: rgba8Format
            case .rgba16: rgba16Format
            case .cmyk8: cmyk8Format
            case .cmyk8Inverted: cmyk8Format | flavorBit
            }
        // Little CMS never writes an extra channel it is not asked to copy: RGBA8 is transformed in
        // place, so alpha stays where it is (copying it costs 40% of the transform), and RGBA16's
        // alpha is narrowed by `apply(rgba16:)` as every 16-bit sample is.
        guard let transform = cmsCreateTransformTHR(context, source, input, target, rgba8Format, intent, flags) else {
            return .failure(.unreadable)
        }
        if layout == .rgba8, isIdentity({ cmsDoTransform(transform, $0, $0, cmsUInt32Number($1)) }) {
            cmsDeleteTransform(transform)
            return .success(.identity)
        }
        return .success(.lcms(transform))
    }

    /// Transforms RGBA8 or CMYK8 pixels in place to sRGB RGBA8 (alpha kept; CMYK made opaque).
    func apply(_ pixels: inout [UInt8], width: Int, height: Int) {
        precondition(layout != .rgba16 && pixels.count == width * height * 4)
        switch method {
        case .identity:
            return
        case .grayTable(let table):
            pixels.withUnsafeMutableBufferPointer { buffer in
                for offset in stride(from: 0, to: buffer.count, by: 4) {
                    let level = Int(buffer[offset]) * 257 * 3
                    buffer[offset] = table[level]
                    buffer[offset + 1] = table[level + 1]
                    buffer[offset + 2] = table[level + 2]
                }
            }
        case .matrixShaper(let shaper):
            pixels.withUnsafeMutableBytes { buffer in
                let shared = SharedPointer(buffer.baseAddress!)
                Self.inStrips(width: width, height: height) { rows in
                    let start = (shared.pointer + rows.lowerBound * width * 4).assumingMemoryBound(to: UInt8.self)
                    shaper.apply(rgba8: start, count: rows.count * width)
                }
            }
        case .lcms(let transform):
            let isCMYK = layout != .rgba8
            pixels.withUnsafeMutableBytes { buffer in
                let shared = SharedPointer(buffer.baseAddress!)
                Self.inStrips(width: width, height: height) { rows in
                    let start = shared.pointer + rows.lowerBound * width * 4
                    // Same size in and out: Little CMS reads each pixel before writing it.
                    cmsDoTransformLineStride(
                        transform, start, start, cmsUInt32Number(width), cmsUInt32Number(rows.count),
                        cmsUInt32Number(width * 4), cmsUInt32Number(width * 4), 0, 0)
                    if isCMYK {
                        for offset in stride(from: 3, to: rows.count * width * 4, by: 4) { start.storeBytes(of: 255, toByteOffset: offset, as: UInt8.self) }
                    }
                }
            }
        }
    }

    /// Transforms RGBA16 pixels (machine byte order) into sRGB RGBA8; alpha, and every sample of
    /// an identity, narrowed to its high byte, as libspng narrows 16-bit PNG.
    func apply(rgba16 pixels: UnsafeBufferPointer<UInt16>, width: Int, height: Int, into output: UnsafeMutableBufferPointer<UInt8>) {
        precondition(pixels.count == width * height * 4 && output.count == width * height * 4)
        switch method {
        case .identity:
            for index in 0..<output.count { output[index] = Self.narrow(pixels[index]) }
        case .grayTable(let table):
            for offset in stride(from: 0, to: output.count, by: 4) {
                let level = Int(pixels[offset]) * 3
                output[offset] = table[level]
                output[offset + 1] = table[level + 1]
                output[offset + 2] = table[level + 2]
                output[offset + 3] = Self.narrow(pixels[offset + 3])
            }
        case .matrixShaper(let shaper):
            precondition(layout == .rgba16)
            let input = SharedPointer(UnsafeMutableRawPointer(mutating: pixels.baseAddress!))
            let target = SharedPointer(UnsafeMutableRawPointer(output.baseAddress!))
            Self.inStrips(width: width, height: height) { rows in
                shaper.apply(
                    rgba16: (input.pointer + rows.lowerBound * width * 8).assumingMemoryBound(to: UInt16.self),
                    into: (target.pointer + rows.lowerBound * width * 4).assumingMemoryBound(to: UInt8.self), count: rows.count * width)
            }
            for offset in stride(from: 3, to: output.count, by: 4) { output[offset] = Self.narrow(pixels[offset]) }
        case .lcms(let transform):
            precondition(layout == .rgba16)
            let input = SharedPointer(UnsafeMutableRawPointer(mutating: pixels.baseAddress!))
            let target = SharedPointer(UnsafeMutableRawPointer(output.baseAddress!))
            Self.inStrips(width: width, height: height) { rows in
                cmsDoTransformLineStride(
                    transform, input.pointer + rows.lowerBound * width * 8, target.pointer + rows.lowerBound * width * 4,
                    cmsUInt32Number(width), cmsUInt32Number(rows.count), cmsUInt32Number(width * 8), cmsUInt32Number(width * 4), 0, 0)
            }
            for offset in stride(from: 3, to: output.count, by: 4) { output[offset] = Self.narrow(pixels[offset]) }
        }
    }

    /// A 16-bit sample's high byte.
    static func narrow(_ sample: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: sample >> 8) }

    /// Runs `body` over bands of rows, on every core when the image is large: one core transforms
    /// only ~45 megapixels of RGB a second (~15 of CMYK).
    private static func inStrips(width: Int, height: Int, _ body: (Range<Int>) -> Void) {
        let strips = width * height < parallelThreshold ? 1 : min(height, ProcessInfo.processInfo.activeProcessorCount * 2)
        guard strips > 1 else { return body(0..<height) }
        withoutActuallyEscaping(body) { body in
            // Each strip writes only its own rows.
            let shared = StripBody(run: body)
            DispatchQueue.concurrentPerform(iterations: strips) { strip in
                shared.run((height * strip / strips)..<(height * (strip + 1) / strips))
            }
        }
    }

    /// Whether 8-bit RGB comes out of `transform` (RGBA8 in place, a pixel count) within 1 of what
    /// went in, on a 9×9×9 grid (alpha, which the transform leaves alone, is not compared).
    private static func isIdentity(_ transform: (UnsafeMutablePointer<UInt8>, Int) -> Void) -> Bool {
        let levels: [UInt8] = [0, 32, 64, 96, 128, 160, 192, 224, 255]
        var samples: [UInt8] = []
        samples.reserveCapacity(levels.count * levels.count * levels.count * 4)
        for r in levels { for g in levels { for b in levels { samples += [r, g, b, 255] } } }
        var output = samples
        output.withUnsafeMutableBufferPointer { transform($0.baseAddress!, $0.count / 4) }
        return samples.indices.allSatisfy { $0 % 4 == 3 || abs(Int(samples[$0]) - Int(output[$0])) <= 1 }
    }

    /// sRGB for every 16-bit level of a gray profile.
    private static func grayTable(
        _ source: cmsHPROFILE, _ target: cmsHPROFILE, context: cmsContext, intent: cmsUInt32Number, flags: cmsUInt32Number
    ) -> [UInt8]? {
        let grayFormat = cmsUInt32Number(colorSpace(PT_GRAY) | channels(1) | bytes(2))
        guard let transform = cmsCreateTransformTHR(context, source, grayFormat, target, rgb8Format, intent, flags) else { return nil }
        defer { cmsDeleteTransform(transform) }
        let levels = (0...65_535).map { UInt16($0) }
        var table = [UInt8](repeating: 0, count: levels.count * 3)
        cmsDoTransform(transform, levels, &table, cmsUInt32Number(levels.count))
        return table
    }

    // Little CMS's pixel format words (lcms2.h's TYPE_* macros, which Swift does not import).
    private static func colorSpace(_ space: Int32) -> Int { Int(space) << 16 }
    private static func channels(_ count: Int) -> Int { count << 3 }
    private static func bytes(_ count: Int) -> Int { count }
    private static let extraChannel = 1 << 7
    private static let flavorBit = cmsUInt32Number(1 << 13)
    private static let rgba8Format = cmsUInt32Number(colorSpace(PT_RGB) | extraChannel | channels(3) | bytes(1))
    private static let rgba16Format = cmsUInt32Number(colorSpace(PT_RGB) | extraChannel | channels(3) | bytes(2))
    private static let rgb8Format = cmsUInt32Number(colorSpace(PT_RGB) | channels(3) | bytes(1))
    private static let cmyk8Format = cmsUInt32Number(colorSpace(PT_CMYK) | channels(4) | bytes(1))
}

/// The work of one strip, handed to the threads of a concurrent loop.
private struct StripBody: @unchecked Sendable {
    let run: (Range<Int>) -> Void
}

/// A pointer handed to the strips of a concurrent loop, each of which writes its own rows.
private struct SharedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}

extension ColorTransform {
    /// Whether the conversion is ``MatrixShaper``'s rather than Little CMS's (for tests).
    var isMatrixShaper: Bool {
        if case .matrixShaper = method { true } else { false }
    }
}
