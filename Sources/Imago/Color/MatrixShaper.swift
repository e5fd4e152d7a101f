import CLCMS
import Foundation

/// The conversion of an RGB matrix/shaper profile (three tone curves and three colorants: Adobe
/// RGB, ProPhoto, Display P3, BT.2020, every camera and phone profile) to sRGB, done here rather
/// than by Little CMS. Relative colorimetric between two such profiles is exactly curves, a 3×3
/// matrix and sRGB's inverse curve (both blacks are zero, so black-point compensation is nothing);
/// Little CMS does the same arithmetic, but its optimised 16-bit path samples it on a 33-point grid
/// and was up to 28 levels off in the shadows (`cmsDoTransform` against its own double-precision
/// transform, ProPhoto to sRGB), and its 8-bit path runs at ~45 MP/s where this runs several times
/// faster and is made in microseconds rather than milliseconds.
///
/// Tables: each input curve at 256 levels (8-bit input) and at 4,097 points with linear
/// interpolation between them (16-bit input; the error, at most h²/8·f″ with h = 1/4096, is under
/// 0.001 of an output level for gamma 1.8–2.4); the output curve as one shared table of 65,536
/// linear levels to 8-bit sRGB, a step of at most 0.05 of an output level.
struct MatrixShaper: Sendable {
    /// Linear light for each 8-bit level: red's 256, then green's, then blue's.
    private let linear8: [Float]
    /// Linear light at 16-bit levels 0, 16, 32, …, 65,536 (4,097 points a channel, R then G then B).
    private let linear16: [Float]
    /// Source RGB to linear sRGB, row by row.
    private let matrix: [Float]

    private static let points16 = 4097

    /// The profile's curves and colorants, when it is a plain RGB matrix/shaper whose black is zero
    /// and Little CMS would use nothing else for it (no A2B or D2B table, an input, display or
    /// colour-space profile); nil otherwise, for Little CMS to convert.
    init?(source: cmsHPROFILE, sRGB target: cmsHPROFILE) {
        let plainClasses: [cmsProfileClassSignature] = [cmsSigInputClass, cmsSigDisplayClass, cmsSigColorSpaceClass]
        let tables: [cmsTagSignature] = [cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag, cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigDToB2Tag]
        guard cmsGetColorSpace(source) == cmsSigRgbData, plainClasses.contains(cmsGetDeviceClass(source)), cmsIsMatrixShaper(source) != 0,
            !tables.contains(where: { cmsIsTag(source, $0) != 0 })
        else { return nil }
        guard let sourceMatrix = Self.colorants(source), let targetMatrix = Self.colorants(target), let inverse = Self.inverted(targetMatrix) else {
            return nil
        }
        let curveTags = [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag]
        var linear8: [Float] = [], linear16: [Float] = []
        linear8.reserveCapacity(3 * 256)
        linear16.reserveCapacity(3 * Self.points16)
        for tag in curveTags {
            guard let raw = cmsReadTag(source, tag) else { return nil }
            let curve = OpaquePointer(raw)
            // A black above zero would need black-point compensation: Little CMS's business.
            guard abs(cmsEvalToneCurveFloat(curve, 0)) < 1e-5 else { return nil }
            for level in 0..<256 { linear8.append(cmsEvalToneCurveFloat(curve, Float(level) / 255)) }
            for point in 0..<Self.points16 { linear16.append(cmsEvalToneCurveFloat(curve, min(1, Float(point * 16) / 65535))) }
        }
        guard (linear8 + linear16).allSatisfy({ $0.isFinite }) else { return nil }
        var matrix = [Float](repeating: 0, count: 9)
        for row in 0..<3 {
            for column in 0..<3 {
                matrix[row * 3 + column] = Float((0..<3).reduce(0.0) { $0 + inverse[row * 3 + $1] * sourceMatrix[$1 * 3 + column] })
            }
        }
        (self.linear8, self.linear16, self.matrix) = (linear8, linear16, matrix)
    }

    /// Converts RGBA8 rows in place (alpha left alone).
    func apply(rgba8 pixels: UnsafeMutablePointer<UInt8>, count: Int) {
        let m = matrix
        let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        linear8.withUnsafeBufferPointer { table in
            Self.encode.withUnsafeBufferPointer { encode in
                for pixel in 0..<count {
                    let p = pixels + pixel * 4
                    let r = table[Int(p[0])], g = table[256 + Int(p[1])], b = table[512 + Int(p[2])]
                    p[0] = encode[Self.index(m0 * r + m1 * g + m2 * b)]
                    p[1] = encode[Self.index(m3 * r + m4 * g + m5 * b)]
                    p[2] = encode[Self.index(m6 * r + m7 * g + m8 * b)]
                }
            }
        }
    }

    /// Converts RGBA16 rows (machine byte order) into RGBA8 rows; alpha is the caller's.
    func apply(rgba16 pixels: UnsafePointer<UInt16>, into output: UnsafeMutablePointer<UInt8>, count: Int) {
        let m = matrix
        let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        let points = Self.points16
        linear16.withUnsafeBufferPointer { table in
            Self.encode.withUnsafeBufferPointer { encode in
                @inline(__always) func linear(_ sample: UInt16, _ channel: Int) -> Float {
                    let index = channel * points + Int(sample >> 4)
                    let low = table[index]
                    return low + (table[index + 1] - low) * Float(sample & 15) * (1 / 16)
                }
                for pixel in 0..<count {
                    let p = pixels + pixel * 4, q = output + pixel * 4
                    let r = linear(p[0], 0), g = linear(p[1], 1), b = linear(p[2], 2)
                    q[0] = encode[Self.index(m0 * r + m1 * g + m2 * b)]
                    q[1] = encode[Self.index(m3 * r + m4 * g + m5 * b)]
                    q[2] = encode[Self.index(m6 * r + m7 * g + m8 * b)]
                }
            }
        }
    }

    /// A linear value's place in ``encode``, clipped to the sRGB gamut as Little CMS clips.
    @inline(__always) private static func index(_ value: Float) -> Int {
        Int(min(max(value, 0), 1) * 65535 + 0.5)
    }

    /// 8-bit sRGB (IEC 61966-2.1) for each of 65,536 linear levels.
    private static let encode: [UInt8] = (0...65_535).map { level in
        let linear = Double(level) / 65535
        let encoded = linear <= 0.003_130_8 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
        return UInt8((min(max(encoded, 0), 1) * 255).rounded())
    }

    /// The profile's colorants (PCS XYZ, D50) as a row-major RGB-to-XYZ matrix.
    private static func colorants(_ profile: cmsHPROFILE) -> [Double]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let raw = cmsReadTag(profile, tag) else { return nil }
            columns.append(raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        let matrix = [columns[0].X, columns[1].X, columns[2].X, columns[0].Y, columns[1].Y, columns[2].Y, columns[0].Z, columns[1].Z, columns[2].Z]
        return matrix.allSatisfy { $0.isFinite && abs($0) < 16 } ? matrix : nil
    }

    /// The inverse of a row-major 3×3 matrix; nil when it is (nearly) singular.
    private static func inverted(_ m: [Double]) -> [Double]? {
        let cofactors = [
            m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
        ]
        let determinant = m[0] * cofactors[0] + m[1] * cofactors[3] + m[2] * cofactors[6]
        guard abs(determinant) > 1e-9 else { return nil }
        return cofactors.map { $0 / determinant }
    }
}
