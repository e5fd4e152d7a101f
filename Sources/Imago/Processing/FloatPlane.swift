import Foundation

/// One channel of an image as floats, for the processors that measure before they change
/// (sharpen's lightness, smart crop's saliency).
struct FloatPlane {
    let width: Int
    let height: Int
    var values: [Float]

    init(width: Int, height: Int, values: [Float]) {
        precondition(values.count == width * height)
        self.width = width
        self.height = height
        self.values = values
    }

    /// The lightness of RGBA8 `pixels`, 0…100 (Rec. 709 weights on the encoded values: close to
    /// L* for sharpening, not a colorimetric conversion).
    static func lightness(of pixels: [UInt8], width: Int, height: Int) -> FloatPlane {
        var values = [Float](repeating: 0, count: width * height)
        pixels.withUnsafeBufferPointer { source in
            for index in 0..<width * height {
                let r = Float(source[index * 4]), g = Float(source[index * 4 + 1]), b = Float(source[index * 4 + 2])
                values[index] = (0.2126 * r + 0.7152 * g + 0.0722 * b) * (100 / 255)
            }
        }
        return FloatPlane(width: width, height: height, values: values)
    }

    /// Blurred by a Gaussian of standard deviation `sigma`, edges clamped. The kernel spans three
    /// sigmas each side, capped at the plane's own size.
    func blurred(sigma: Double) -> FloatPlane {
        guard sigma > 0, width > 0, height > 0 else { return self }
        let radius = max(1, min(Int((3 * sigma).rounded(.up)), max(width, height)))
        var kernel = (-radius...radius).map { (offset: Int) -> Float in
            let distance = Double(offset * offset)
            return Float(exp(-distance / (2 * sigma * sigma)))
        }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        // Each pass adds one kernel tap at a time over a whole row (a loop the compiler
        // vectorises), reading a row padded with its edge values instead of clamping each index.
        let taps = kernel.count
        var horizontal = [Float](repeating: 0, count: values.count)
        var padded = [Float](repeating: 0, count: width + 2 * radius)
        values.withUnsafeBufferPointer { source in
            horizontal.withUnsafeMutableBufferPointer { output in
                padded.withUnsafeMutableBufferPointer { padded in
                    for y in 0..<height {
                        let row = y * width
                        for i in 0..<padded.count { padded[i] = source[row + min(max(i - radius, 0), width - 1)] }
                        for k in 0..<taps {
                            let weight = kernel[k]
                            for x in 0..<width { output[row + x] += weight * padded[x + k] }
                        }
                    }
                }
            }
        }
        var result = [Float](repeating: 0, count: values.count)
        horizontal.withUnsafeBufferPointer { source in
            result.withUnsafeMutableBufferPointer { output in
                for y in 0..<height {
                    for k in 0..<taps {
                        let weight = kernel[k]
                        let from = min(max(y + k - radius, 0), height - 1) * width
                        for x in 0..<width { output[y * width + x] += weight * source[from + x] }
                    }
                }
            }
        }
        return FloatPlane(width: width, height: height, values: result)
    }
}
