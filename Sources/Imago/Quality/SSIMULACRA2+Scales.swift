import Foundation

/// One scale of an image in SSIMULACRA2's positive XYB: three planes (X, Y, B−Y) of width × height.
struct XYBScale: Sendable {
    let width: Int
    let height: Int
    var planes: [[Float]]
}

/// The norms one scale contributes: for X, Y and B, SSIM's 1- and 4-norm, then the artifact and
/// detail-loss maps' 1- and 4-norms (the reference's `avg_ssim` and `avg_edgediff`).
struct ScaleNorms {
    var ssim = [Double](repeating: 0, count: 6)
    var edge = [Double](repeating: 0, count: 12)
}

/// The original's side of one scale: its planes, their blur (mu1) and the blur of their squares
/// (sigma1²), computed once for every candidate.
struct PreparedScale: Sendable {
    let original: XYBScale
    let mu: [[Float]]
    let sigmaSquared: [[Float]]

    static let blur = RecursiveGaussian(sigma: 1.5)

    init(_ original: XYBScale) {
        self.original = original
        var mu = [[Float]](), sigmaSquared = [[Float]]()
        for plane in original.planes {
            mu.append(Self.blurred(plane, width: original.width, height: original.height))
            sigmaSquared.append(Self.blurred(plane.map { $0 * $0 }, width: original.width, height: original.height))
        }
        self.mu = mu
        self.sigmaSquared = sigmaSquared
    }

    static func blurred(_ plane: [Float], width: Int, height: Int) -> [Float] {
        var output = [Float](repeating: 0, count: plane.count)
        var scratch = [Float](repeating: 0, count: plane.count)
        plane.withUnsafeBufferPointer { plane in
            output.withUnsafeMutableBufferPointer { output in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    blur.blur(plane, into: output, scratch: scratch, width: width, height: height)
                }
            }
        }
        return output
    }

    /// The SSIM and edge norms of `candidate` (same scale, same size) against the original.
    func compare(with candidate: XYBScale) -> ScaleNorms {
        let width = original.width, height = original.height, count = width * height
        let onePerPixel = 1.0 / Double(count)
        let c2: Float = 0.0009
        var norms = ScaleNorms()
        for channel in 0..<3 {
            let img2 = candidate.planes[channel]
            let mu2 = Self.blurred(img2, width: width, height: height)
            let sigma22 = Self.blurred(img2.map { $0 * $0 }, width: width, height: height)
            var product = [Float](repeating: 0, count: count)
            original.planes[channel].withUnsafeBufferPointer { a in
                img2.withUnsafeBufferPointer { b in
                    for i in 0..<count { product[i] = a[i] * b[i] }
                }
            }
            let sigma12 = Self.blurred(product, width: width, height: height)
            var ssim1 = 0.0, ssim4 = 0.0, artifact1 = 0.0, artifact4 = 0.0, lost1 = 0.0, lost4 = 0.0
            original.planes[channel].withUnsafeBufferPointer { img1 in
                mu[channel].withUnsafeBufferPointer { mu1 in
                    sigmaSquared[channel].withUnsafeBufferPointer { s11 in
                        img2.withUnsafeBufferPointer { img2 in
                            mu2.withUnsafeBufferPointer { mu2 in
                                sigma22.withUnsafeBufferPointer { s22 in
                                    sigma12.withUnsafeBufferPointer { s12 in
                                        for i in 0..<count {
                                            let m1 = mu1[i], m2 = mu2[i]
                                            let numM: Float = 1 - (m1 - m2) * (m1 - m2)
                                            let numS: Float = 2 * (s12[i] - m1 * m2) + c2
                                            let denS: Float = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + c2
                                            let d = max(1 - Double(numM * numS / denS), 0)
                                            ssim1 += d
                                            ssim4 += (d * d) * (d * d)
                                            let edge =
                                                Double(1 + abs(img2[i] - m2)) / Double(1 + abs(img1[i] - m1)) - 1
                                            let artifact = max(edge, 0), lost = max(-edge, 0)
                                            artifact1 += artifact
                                            artifact4 += (artifact * artifact) * (artifact * artifact)
                                            lost1 += lost
                                            lost4 += (lost * lost) * (lost * lost)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            norms.ssim[channel * 2] = onePerPixel * ssim1
            norms.ssim[channel * 2 + 1] = (onePerPixel * ssim4).squareRoot().squareRoot()
            norms.edge[channel * 4] = onePerPixel * artifact1
            norms.edge[channel * 4 + 1] = (onePerPixel * artifact4).squareRoot().squareRoot()
            norms.edge[channel * 4 + 2] = onePerPixel * lost1
            norms.edge[channel * 4 + 3] = (onePerPixel * lost4).squareRoot().squareRoot()
        }
        return norms
    }
}

extension SSIMULACRA2 {
    static let scaleCount = 6

    /// The image's XYB planes at up to six scales (1:1 … 1:32, halved in linear light while the
    /// scale before had both sides at least 8, so the last may be smaller, as in the reference). With `background`, pixels are blended over that grey (0…1, in
    /// the encoded values, as the reference blends) before linearising.
    static func scales(of image: Image, background: Float?) -> [XYBScale] {
        var width = image.width, height = image.height
        var linear = linearPlanes(image, background: background)
        var scales = [XYBScale]()
        for scale in 0..<scaleCount {
            if width < 8 || height < 8 { break }
            if scale > 0 {
                let halfWidth = (width + 1) / 2, halfHeight = (height + 1) / 2
                linear = linear.map { halved($0, width: width, height: height) }
                width = halfWidth
                height = halfHeight
            }
            scales.append(XYBScale(width: width, height: height, planes: positiveXYB(linear)))
        }
        return scales
    }

    /// sRGB's transfer curve as a table for 8-bit values.
    static let linearTable: [Float] = (0..<256).map { Float(linearize(Double($0) / 255)) }

    static func linearize(_ v: Double) -> Double {
        v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearPlanes(_ image: Image, background: Float?) -> [[Float]] {
        let count = image.width * image.height
        var planes = [[Float]](repeating: [Float](repeating: 0, count: count), count: 3)
        image.pixels.withUnsafeBufferPointer { pixels in
            for channel in 0..<3 {
                planes[channel].withUnsafeMutableBufferPointer { plane in
                    if let background {
                        for i in 0..<count {
                            let alpha = Float(pixels[i * 4 + 3]) / 255
                            let value = Float(pixels[i * 4 + channel]) / 255
                            let blended = alpha * value + (1 - alpha) * background
                            plane[i] = Float(linearize(Double(blended)))
                        }
                    } else {
                        linearTable.withUnsafeBufferPointer { table in
                            for i in 0..<count { plane[i] = table[Int(pixels[i * 4 + channel])] }
                        }
                    }
                }
            }
        }
        return planes
    }

    /// A 2×2 box average, the last row and column repeated when the size is odd.
    static func halved(_ plane: [Float], width: Int, height: Int) -> [Float] {
        let outWidth = (width + 1) / 2, outHeight = (height + 1) / 2
        var output = [Float](repeating: 0, count: outWidth * outHeight)
        plane.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                for oy in 0..<outHeight {
                    let y0 = min(oy * 2, height - 1), y1 = min(oy * 2 + 1, height - 1)
                    for ox in 0..<outWidth {
                        let x0 = min(ox * 2, width - 1), x1 = min(ox * 2 + 1, width - 1)
                        var sum: Float = input[y0 * width + x0]
                        sum += input[y0 * width + x1]
                        sum += input[y1 * width + x0]
                        sum += input[y1 * width + x1]
                        output[oy * outWidth + ox] = sum * 0.25
                    }
                }
            }
        }
        return output
    }

    // libjxl's opsin absorbance matrix and bias.
    static let m00: Float = 0.30, m02: Float = 0.078, m01: Float = 1 - 0.078 - 0.30
    static let m10: Float = 0.23, m12: Float = 0.078, m11: Float = 1 - 0.078 - 0.23
    static let m20: Float = 0.24342268924547819, m21: Float = 0.20476744424496821
    static let m22: Float = 1 - 0.24342268924547819 - 0.20476744424496821
    static let bias: Float = 0.0037930732552754493

    /// Linear sRGB planes to XYB, rescaled as the reference's `MakePositiveXYB` does.
    static func positiveXYB(_ linear: [[Float]]) -> [[Float]] {
        let count = linear[0].count
        var x = [Float](repeating: 0, count: count), y = x, b = x
        let negBiasCbrt = -cbrtf(bias)
        linear[0].withUnsafeBufferPointer { red in
            linear[1].withUnsafeBufferPointer { green in
                linear[2].withUnsafeBufferPointer { blue in
                    for i in 0..<count {
                        let r = red[i], g = green[i], bl = blue[i]
                        let mixed0 = max(m00 * r + (m01 * g + (m02 * bl + bias)), 0)
                        let mixed1 = max(m10 * r + (m11 * g + (m12 * bl + bias)), 0)
                        let mixed2 = max(m20 * r + (m21 * g + (m22 * bl + bias)), 0)
                        let l = cbrtf(mixed0) + negBiasCbrt
                        let m = cbrtf(mixed1) + negBiasCbrt
                        let s = cbrtf(mixed2) + negBiasCbrt
                        let xValue = 0.5 * (l - m), yValue = 0.5 * (l + m)
                        b[i] = (s - yValue) + 0.55
                        x[i] = xValue * 14 + 0.42
                        y[i] = yValue + 0.01
                    }
                }
            }
        }
        return [x, y, b]
    }

    /// The 108 weights the reference tuned, in its order (channel, scale, norm, map).
    static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
        1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
        1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
        1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
        0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
        0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0,
        0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437,
        0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682,
        0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
        0.0005130064588990679, 0.0, 0.00010854057858411537,
    ]

    /// The weighted sum of every scale's norms through the reference's final polynomial. The
    /// weight index runs on over the scales an image has, as the reference's does, so a small
    /// image with fewer scales uses the same weights the reference gives it.
    static func combine(_ scales: [ScaleNorms]) -> Double {
        var sum = 0.0
        var index = 0
        for channel in 0..<3 {
            for scale in scales {
                for norm in 0..<2 {
                    sum += weights[index] * abs(scale.ssim[channel * 2 + norm])
                    sum += weights[index + 1] * abs(scale.edge[channel * 4 + norm])
                    sum += weights[index + 2] * abs(scale.edge[channel * 4 + norm + 2])
                    index += 3
                }
            }
        }
        var score = sum * 0.9562382616834844
        score =
            2.326765642916932 * score - 0.020884521182843837 * score * score + 6.248496625763138e-05 * score * score
            * score
        return score > 0 ? 100 - 10 * pow(score, 0.6276336467831387) : 100
    }
}
