import CResample
import Foundation

/// Separable convolution of RGBA8 pixels: a horizontal pass, then a vertical one, each with
/// weights computed once per output column or row (fixed point, 14 bits). Alpha is handled
/// premultiplied so transparent pixels do not bleed their colour into their neighbours.
/// Resizing uses Lanczos3 (widened by the scale when reducing, so every source pixel counts);
/// blurring uses a Gaussian.
enum Resampler {
    /// For each output position: the first input position it reads and its weights.
    struct Weights {
        var starts: [Int32]
        var counts: [Int32]
        /// `taps` weights per output position, of which the first `counts[i]` are used. In 16
        /// bits: every weight lies within ±(2^14 + the few units of rounding given to the largest
        /// tap), and a multiply whose operands the compiler knows fit 16 bits becomes x86's
        /// `pmaddwd`, where a 32-bit one needs four instructions without SSE4.1.
        var values: [Int16]
        var taps: Int

        static let precision: Int32 = 14

        /// Lanczos3 weights mapping `input` positions, of which the first `extent` are the
        /// picture (the last may be partial), onto `output` positions.
        static func lanczos3(input: Int, output: Int, extent: Double? = nil) -> Weights {
            let scale = (extent ?? Double(input)) / Double(output)
            let filterScale = max(scale, 1)
            let support = 3 * filterScale
            return make(input: input, output: output, support: support) { position in
                let center = (Double(position) + 0.5) * scale
                return (center, { lanczos3(($0 - center) / filterScale) })
            }
        }

        /// Gaussian weights of standard deviation `sigma` over `size` positions (same size out).
        static func gaussian(size: Int, sigma: Double) -> Weights {
            // Taps past the row's length add nothing (they are dropped): never more than it.
            let support = min(max(3 * sigma, 0.5), Double(max(size, 1)))
            return make(input: size, output: size, support: support) { position in
                let center = Double(position) + 0.5
                return (center, { exp(-(($0 - center) * ($0 - center)) / (2 * sigma * sigma)) })
            }
        }

        /// Weights from a kernel placed at each output position; taps outside the input are
        /// dropped and the rest renormalised, so edges keep their level.
        private static func make(input: Int, output: Int, support: Double, kernel: (Int) -> (center: Double, weight: (Double) -> Double)) -> Weights {
            let taps = Int((support * 2).rounded(.up)) + 1
            var weights = Weights(
                starts: .init(repeating: 0, count: output), counts: .init(repeating: 0, count: output), values: .init(repeating: 0, count: output * taps),
                taps: taps)
            var real = [Double](repeating: 0, count: taps)
            var rounded = [Int32](repeating: 0, count: taps)
            let one = Double(1 << precision)
            for position in 0..<output {
                let (center, weight) = kernel(position)
                let first = max(0, Int((center - support + 0.5).rounded(.down)))
                let last = min(input, Int((center + support + 0.5).rounded(.down)))
                let count = min(max(last - first, 1), taps)
                var total = 0.0
                for tap in 0..<count {
                    // The weight at the centre of input pixel first + tap.
                    real[tap] = weight(Double(first + tap) + 0.5)
                    total += real[tap]
                }
                if total == 0 {
                    real[0] = 1
                    total = 1
                }
                // Rounded one by one, then the rounding error goes to the largest tap so that
                // the weights sum to exactly one: a solid image stays solid.
                var sum: Int32 = 0
                var largest = 0
                for tap in 0..<count {
                    rounded[tap] = Int32((real[tap] / total * one).rounded())
                    sum += rounded[tap]
                    if rounded[tap] > rounded[largest] { largest = tap }
                }
                rounded[largest] += Int32(one) - sum
                for tap in 0..<count {
                    // Normalised weights of Lanczos and Gaussian kernels stay within ±2^14 plus
                    // the rounding; clamping keeps Int16 safe whatever a kernel returns.
                    weights.values[position * taps + tap] = Int16(clamping: rounded[tap])
                }
                weights.starts[position] = Int32(min(first, input - 1))
                weights.counts[position] = Int32(count)
            }
            return weights
        }

        private static func lanczos3(_ x: Double) -> Double {
            if x == 0 { return 1 }
            guard abs(x) < 3 else { return 0 }
            let pix = Double.pi * x
            return 3 * sin(pix) * sin(pix / 3) / (pix * pix)
        }
    }

    /// `pixels` (width × height RGBA8, straight alpha) resized to `newWidth × newHeight`.
    /// Reducing by more than twice, whole blocks are first averaged down to within twice the
    /// target (as Pillow's `reducing_gap`): Lanczos over hundreds of taps would cost far more and
    /// see the same pixels. `extent`: how much of the picture the pixels cover, when their last
    /// column and row are partial (``Image/coveredSize``); nil when they cover their size.
    static func resize(
        _ pixels: [UInt8], width: Int, height: Int, to newWidth: Int, _ newHeight: Int, hasAlpha: Bool, extent: (width: Double, height: Double)? = nil
    ) -> [UInt8] {
        if newWidth == width && newHeight == height { return pixels }
        let factorX = max(1, width / (newWidth * 2)), factorY = max(1, height / (newHeight * 2))
        if factorX > 1 || factorY > 1 {
            let (reduced, reducedWidth, reducedHeight) = boxReduce(pixels, width: width, height: height, factorX: factorX, factorY: factorY, hasAlpha: hasAlpha)
            let reducedExtent = extent.map { (width: $0.width / Double(factorX), height: $0.height / Double(factorY)) }
            return resize(reduced, width: reducedWidth, height: reducedHeight, to: newWidth, newHeight, hasAlpha: hasAlpha, extent: reducedExtent)
        }
        let horizontal = newWidth == width ? nil : Weights.lanczos3(input: width, output: newWidth, extent: extent?.width)
        let vertical = newHeight == height ? nil : Weights.lanczos3(input: height, output: newHeight, extent: extent?.height)
        return convolve(pixels, width: width, height: height, horizontal: horizontal, vertical: vertical, hasAlpha: hasAlpha)
    }

    /// Each `factorX × factorY` block averaged into one pixel (blocks at the right and bottom
    /// edges may be smaller); with alpha, colours are weighted by it.
    static func boxReduce(_ pixels: [UInt8], width: Int, height: Int, factorX: Int, factorY: Int, hasAlpha: Bool) -> ([UInt8], Int, Int) {
        let outWidth = (width + factorX - 1) / factorX, outHeight = (height + factorY - 1) / factorY
        var sums = [UInt64](repeating: 0, count: outWidth * 4)
        let output = [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 4) { output, initialized in
            pixels.withUnsafeBufferPointer { input in
                sums.withUnsafeMutableBufferPointer { sums in
                    for outY in 0..<outHeight {
                        for index in 0..<sums.count { sums[index] = 0 }
                        let firstRow = outY * factorY, rows = min(factorY, height - firstRow)
                        for row in firstRow..<firstRow + rows {
                            let line = input.baseAddress! + row * width * 4
                            for x in 0..<width {
                                let pixel = line + x * 4, sum = sums.baseAddress! + (x / factorX) * 4
                                let alpha = UInt64(pixel[3])
                                let weight = hasAlpha ? alpha : 1
                                sum[0] += UInt64(pixel[0]) * weight
                                sum[1] += UInt64(pixel[1]) * weight
                                sum[2] += UInt64(pixel[2]) * weight
                                sum[3] += alpha
                            }
                        }
                        for outX in 0..<outWidth {
                            let count = UInt64(rows * min(factorX, width - outX * factorX))
                            let sum = sums.baseAddress! + outX * 4, out = output.baseAddress! + (outY * outWidth + outX) * 4
                            let weights = hasAlpha ? sum[3] : count
                            for channel in 0..<3 {
                                out[channel] = weights == 0 ? 0 : UInt8((sum[channel] + weights / 2) / weights)
                            }
                            out[3] = UInt8((sum[3] + count / 2) / count)
                        }
                    }
                }
            }
            initialized = outWidth * outHeight * 4
        }
        return (output, outWidth, outHeight)
    }

    /// `pixels` blurred with a Gaussian of standard deviation `sigma`.
    static func blur(_ pixels: [UInt8], width: Int, height: Int, sigma: Double, hasAlpha: Bool) -> [UInt8] {
        guard sigma > 0 else { return pixels }
        return convolve(
            pixels, width: width, height: height,
            horizontal: Weights.gaussian(size: width, sigma: sigma),
            vertical: Weights.gaussian(size: height, sigma: sigma), hasAlpha: hasAlpha)
    }

    /// The horizontal pass (when given) then the vertical one; output size from the weights.
    /// Opaque images are filtered in 8 bits; images with alpha in 16 bits, premultiplied
    /// (colour × alpha, and alpha × 255), so that un-premultiplying at the end loses nothing.
    /// Sums fit Int32: 65,025 × 2^14 × the largest total of absolute Lanczos weights (< 1.3).
    private static func convolve(_ pixels: [UInt8], width: Int, height: Int, horizontal: Weights?, vertical: Weights?, hasAlpha: Bool) -> [UInt8] {
        guard hasAlpha else { return convolve(pixels, width: width, height: height, horizontal: horizontal, vertical: vertical) }
        let result: [UInt16] = convolveInSwift(premultiplied(pixels), width: width, height: height, horizontal: horizontal, vertical: vertical)
        return unpremultiplied(result)
    }

    /// Opaque images: the passes' inner loops in C (CResample), which multiplies with x86's
    /// `pmaddwd`; the same sums as the generic passes below, so the same pixels.
    static func convolve(_ pixels: [UInt8], width: Int, height: Int, horizontal: Weights?, vertical: Weights?) -> [UInt8] {
        var current = pixels
        var currentWidth = width
        if let horizontal {
            let outWidth = horizontal.starts.count
            current = [UInt8](unsafeUninitializedCapacity: outWidth * height * 4) { output, initialized in
                current.withUnsafeBufferPointer { input in
                    horizontal.starts.withUnsafeBufferPointer { starts in
                        horizontal.counts.withUnsafeBufferPointer { counts in
                            horizontal.values.withUnsafeBufferPointer { values in
                                imago_resample_rows(
                                    input.baseAddress, currentWidth, height, output.baseAddress, outWidth, starts.baseAddress, counts.baseAddress,
                                    values.baseAddress, horizontal.taps)
                            }
                        }
                    }
                }
                initialized = outWidth * height * 4
            }
            currentWidth = outWidth
        }
        if let vertical {
            let outHeight = vertical.starts.count, rowBytes = currentWidth * 4
            current = [UInt8](unsafeUninitializedCapacity: rowBytes * outHeight) { output, initialized in
                current.withUnsafeBufferPointer { input in
                    vertical.starts.withUnsafeBufferPointer { starts in
                        vertical.counts.withUnsafeBufferPointer { counts in
                            vertical.values.withUnsafeBufferPointer { values in
                                imago_resample_columns(
                                    input.baseAddress, rowBytes, output.baseAddress, outHeight, starts.baseAddress, counts.baseAddress, values.baseAddress,
                                    vertical.taps)
                            }
                        }
                    }
                }
                initialized = rowBytes * outHeight
            }
        }
        return current
    }

    /// The passes in Swift, for any sample width: 16-bit premultiplied images take this path, and
    /// tests check the C path against it.
    static func convolveInSwift<Sample: FixedWidthInteger & UnsignedInteger>(
        _ pixels: [Sample], width: Int, height: Int, horizontal: Weights?, vertical: Weights?
    ) -> [Sample] {
        var current = pixels
        var currentWidth = width
        if let horizontal {
            current = horizontalPass(current, width: currentWidth, height: height, weights: horizontal)
            currentWidth = horizontal.starts.count
        }
        if let vertical {
            current = verticalPass(current, width: currentWidth, weights: vertical)
        }
        return current
    }

    /// Each row filtered along x: output pixel x of a row mixes the input pixels its weights name.
    private static func horizontalPass<Sample: FixedWidthInteger & UnsignedInteger>(_ input: [Sample], width: Int, height: Int, weights: Weights) -> [Sample] {
        let outWidth = weights.starts.count
        return [Sample](unsafeUninitializedCapacity: outWidth * height * 4) { output, initialized in
            input.withUnsafeBufferPointer { input in
                weights.values.withUnsafeBufferPointer { values in
                    weights.starts.withUnsafeBufferPointer { starts in
                        weights.counts.withUnsafeBufferPointer { counts in
                            let half: Int32 = 1 << (Weights.precision - 1)
                            for row in 0..<height {
                                let source = input.baseAddress! + row * width * 4
                                let target = output.baseAddress! + row * outWidth * 4
                                for x in 0..<outWidth {
                                    // One pixel's four channels at once.
                                    var sum = SIMD4<Int32>(repeating: half)
                                    var pixel = source + Int(starts[x]) * 4
                                    let weight = values.baseAddress! + x * weights.taps
                                    for tap in 0..<Int(counts[x]) {
                                        let channels = SIMD4<Int32>(Int32(pixel[0]), Int32(pixel[1]), Int32(pixel[2]), Int32(pixel[3]))
                                        sum &+= channels &* Int32(weight[tap])
                                        pixel += 4
                                    }
                                    let out = target + x * 4
                                    out[0] = clamp(sum[0])
                                    out[1] = clamp(sum[1])
                                    out[2] = clamp(sum[2])
                                    out[3] = clamp(sum[3])
                                }
                            }
                        }
                    }
                }
            }
            initialized = outWidth * height * 4
        }
    }

    /// Each output row a weighted sum of whole input rows: row-major, so the inner loop runs
    /// along memory and vectorises.
    private static func verticalPass<Sample: FixedWidthInteger & UnsignedInteger>(_ input: [Sample], width: Int, weights: Weights) -> [Sample] {
        let outHeight = weights.starts.count, rowBytes = width * 4
        var sums = [Int32](repeating: 0, count: rowBytes)
        return [Sample](unsafeUninitializedCapacity: rowBytes * outHeight) { output, initialized in
            input.withUnsafeBufferPointer { input in
                sums.withUnsafeMutableBufferPointer { sums in
                    let half: Int32 = 1 << (Weights.precision - 1)
                    for y in 0..<outHeight {
                        for index in 0..<rowBytes { sums[index] = half }
                        let first = Int(weights.starts[y])
                        for tap in 0..<Int(weights.counts[y]) {
                            let w = Int32(weights.values[y * weights.taps + tap])
                            let row = input.baseAddress! + (first + tap) * rowBytes
                            for index in 0..<rowBytes { sums[index] &+= Int32(row[index]) &* w }
                        }
                        let target = output.baseAddress! + y * rowBytes
                        for index in 0..<rowBytes { target[index] = clamp(sums[index]) }
                    }
                }
            }
            initialized = rowBytes * outHeight
        }
    }

    @inline(__always)
    private static func clamp<Sample: FixedWidthInteger & UnsignedInteger>(_ value: Int32) -> Sample {
        Sample(clamping: value >> Int32(Weights.precision))
    }

    /// Colour × alpha and alpha × 255, in 16 bits.
    static func premultiplied(_ pixels: [UInt8]) -> [UInt16] {
        [UInt16](unsafeUninitializedCapacity: pixels.count) { buffer, initialized in
            var index = 0
            while index < pixels.count {
                let alpha = UInt16(pixels[index + 3])
                buffer[index] = UInt16(pixels[index]) * alpha
                buffer[index + 1] = UInt16(pixels[index + 1]) * alpha
                buffer[index + 2] = UInt16(pixels[index + 2]) * alpha
                buffer[index + 3] = alpha * 255
                index += 4
            }
            initialized = pixels.count
        }
    }

    /// Back to straight 8-bit RGBA: colour = 255 × premultiplied / (alpha × 255).
    static func unpremultiplied(_ pixels: [UInt16]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: pixels.count) { buffer, initialized in
            var index = 0
            while index < pixels.count {
                let alpha = UInt32(pixels[index + 3])
                buffer[index + 3] = UInt8(min(255, (alpha + 127) / 255))
                for channel in 0..<3 {
                    buffer[index + channel] = alpha == 0 ? 0 : UInt8(min(255, (UInt32(pixels[index + channel]) * 255 + alpha / 2) / alpha))
                }
                index += 4
            }
            initialized = pixels.count
        }
    }
}
