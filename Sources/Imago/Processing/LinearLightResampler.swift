import Foundation

/// Resizing in linear light, as libvips does for imgproxy's `IMGPROXY_USE_LINEAR_COLORSPACE`: the
/// sRGB curve is undone before pixels are averaged and redone after, so a fine black-and-white
/// pattern becomes the grey it looks (sRGB 188), not a darker one (128). The same Lanczos3 weights
/// and block reduction as ``Resampler``, over 16-bit linear, premultiplied samples: 8 bytes a
/// pixel of the reduced input and of one pass's output, what ``Resampler``'s own 16-bit copies
/// hold, so the memory a plan reserves for a resize covers it.
enum LinearLightResampler {
    /// sRGB's transfer undone: 8-bit encoded to 16-bit linear.
    static let toLinear: [UInt16] = (0..<256).map { code in
        let value = Double(code) / 255
        let linear = value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
        return UInt16((linear * 65_535).rounded())
    }

    /// sRGB's transfer redone: 16-bit linear to 8-bit encoded (64 KiB, made once).
    static let toEncoded: [UInt8] = (0..<65_536).map { sample in
        let linear = Double(sample) / 65_535
        let value = linear <= 0.003_130_8 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
        return UInt8((min(max(value, 0), 1) * 255).rounded())
    }

    /// `pixels` (width × height RGBA8, straight alpha, sRGB) resized to `newWidth × newHeight`
    /// in linear light; `extent` as ``Resampler/resize(_:width:height:to:_:hasAlpha:extent:)``.
    static func resize(
        _ pixels: [UInt8], width: Int, height: Int, to newWidth: Int, _ newHeight: Int, hasAlpha: Bool, extent: (width: Double, height: Double)? = nil
    ) -> [UInt8] {
        if newWidth == width && newHeight == height { return pixels }
        let factorX = max(1, width / (newWidth * 2)), factorY = max(1, height / (newHeight * 2))
        let (linear, inWidth, inHeight) = linearBlocks(pixels, width: width, height: height, factorX: factorX, factorY: factorY)
        let inExtent = extent.map { (width: $0.width / Double(factorX), height: $0.height / Double(factorY)) }
        let horizontal = Resampler.Weights.lanczos3(input: inWidth, output: newWidth, extent: inExtent?.width)
        let vertical = Resampler.Weights.lanczos3(input: inHeight, output: newHeight, extent: inExtent?.height)
        // Rows first, into 16-bit linear; then columns, straight into 8-bit sRGB.
        var between = [UInt16](repeating: 0, count: newWidth * inHeight * 4)
        linear.withUnsafeBufferPointer { source in
            between.withUnsafeMutableBufferPointer { target in
                for y in 0..<inHeight {
                    let row = source.baseAddress! + y * inWidth * 4, out = target.baseAddress! + y * newWidth * 4
                    for x in 0..<newWidth {
                        convolve(row, stride: 4, weights: horizontal, at: x) { channel, value in out[x * 4 + channel] = clamp16(value) }
                    }
                }
            }
        }
        return [UInt8](unsafeUninitializedCapacity: newWidth * newHeight * 4) { output, initialized in
            between.withUnsafeBufferPointer { source in
                for x in 0..<newWidth {
                    let column = source.baseAddress! + x * 4
                    for y in 0..<newHeight {
                        var sample: (Float, Float, Float, Float) = (0, 0, 0, 0)
                        convolve(column, stride: newWidth * 4, weights: vertical, at: y) { channel, value in
                            switch channel {
                            case 0: sample.0 = value
                            case 1: sample.1 = value
                            case 2: sample.2 = value
                            default: sample.3 = value
                            }
                        }
                        let alpha = min(max(sample.3, 0), 65_535)
                        let pixel = output.baseAddress! + (y * newWidth + x) * 4
                        // Back from premultiplied: an opaque image's alpha is 65535 throughout.
                        let scale: Float = alpha > 0 ? 65_535 / alpha : 0
                        pixel[0] = toEncoded[Int(clamp16(sample.0 * scale))]
                        pixel[1] = toEncoded[Int(clamp16(sample.1 * scale))]
                        pixel[2] = toEncoded[Int(clamp16(sample.2 * scale))]
                        pixel[3] = hasAlpha ? UInt8((alpha / 257).rounded()) : 255
                    }
                }
            }
            initialized = newWidth * newHeight * 4
        }
    }

    /// The four channels' weighted sums for output position `position`, read every `stride`
    /// samples from `line`.
    @inline(__always)
    private static func convolve(
        _ line: UnsafePointer<UInt16>, stride: Int, weights: Resampler.Weights, at position: Int, _ emit: (Int, Float) -> Void
    ) {
        let start = Int(weights.starts[position]), count = Int(weights.counts[position])
        var sums: (Float, Float, Float, Float) = (0, 0, 0, 0)
        let one = Float(1 << Resampler.Weights.precision)
        for tap in 0..<count {
            let weight = Float(weights.values[position * weights.taps + tap]) / one
            let sample = line + (start + tap) * stride
            sums.0 += weight * Float(sample[0])
            sums.1 += weight * Float(sample[1])
            sums.2 += weight * Float(sample[2])
            sums.3 += weight * Float(sample[3])
        }
        emit(0, sums.0)
        emit(1, sums.1)
        emit(2, sums.2)
        emit(3, sums.3)
    }

    @inline(__always)
    private static func clamp16(_ value: Float) -> UInt16 { UInt16(min(max(value, 0), 65_535).rounded()) }

    /// `pixels` as 16-bit linear, premultiplied samples, each `factorX × factorY` block averaged
    /// into one (blocks at the right and bottom edges may be smaller): the whole input is never
    /// held at 16 bits.
    private static func linearBlocks(_ pixels: [UInt8], width: Int, height: Int, factorX: Int, factorY: Int) -> ([UInt16], Int, Int) {
        let outWidth = (width + factorX - 1) / factorX, outHeight = (height + factorY - 1) / factorY
        var sums = [UInt64](repeating: 0, count: outWidth * 4)
        var counts = [UInt64](repeating: 0, count: outWidth)
        let output = [UInt16](unsafeUninitializedCapacity: outWidth * outHeight * 4) { output, initialized in
            pixels.withUnsafeBufferPointer { input in
                toLinear.withUnsafeBufferPointer { toLinear in
                    for outY in 0..<outHeight {
                        for index in 0..<sums.count { sums[index] = 0 }
                        for index in 0..<counts.count { counts[index] = 0 }
                        let firstRow = outY * factorY, rows = min(factorY, height - firstRow)
                        for row in firstRow..<firstRow + rows {
                            let line = input.baseAddress! + row * width * 4
                            for x in 0..<width {
                                let pixel = line + x * 4, block = x / factorX
                                let alpha = UInt64(pixel[3]) * 257
                                sums[block * 4] += UInt64(toLinear[Int(pixel[0])]) * alpha / 65_535
                                sums[block * 4 + 1] += UInt64(toLinear[Int(pixel[1])]) * alpha / 65_535
                                sums[block * 4 + 2] += UInt64(toLinear[Int(pixel[2])]) * alpha / 65_535
                                sums[block * 4 + 3] += alpha
                                counts[block] += 1
                            }
                        }
                        let out = output.baseAddress! + outY * outWidth * 4
                        for block in 0..<outWidth {
                            let count = max(counts[block], 1)
                            for channel in 0..<4 { out[block * 4 + channel] = UInt16((sums[block * 4 + channel] + count / 2) / count) }
                        }
                    }
                }
            }
            initialized = outWidth * outHeight * 4
        }
        return (output, outWidth, outHeight)
    }
}
