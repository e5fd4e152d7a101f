import CLCMS
import Foundation
@testable import Imago
import Testing

/// Imago's own curves-and-matrix conversion against Little CMS's double-precision transform (its
/// unoptimised pipeline, the exact answer) on every RGB profile Debian ships in colord and Little
/// CMS's own directory.
@Suite("Colour: matrix/shaper conversion against Little CMS in double precision")
struct MatrixShaperTests {
    static let profiles: [String] = {
        let directories = ["/usr/share/color/icc/colord", "/usr/share/color/icc"]
        return directories.flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".icc") }.sorted().map { "\(directory)/\($0)" }
        }
    }()

    /// Samples spread over the cube with a fixed generator, half of them in the shadows, where
    /// errors show most.
    static func samples(count: Int, maximum: Int) -> [Int] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<count * 3).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let value = Int(state >> 33)
            return index < count * 3 / 2 ? value % (maximum / 6 + 1) : value % (maximum + 1)
        }
    }

    /// Little CMS's answer in double precision, rounded to 8 bits.
    static func reference(_ profile: Data, _ samples: [Int], maximum: Int) throws -> [UInt8] {
        let source = try #require(profile.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) })
        defer { cmsCloseProfile(source) }
        let target = try #require(cmsCreate_sRGBProfile())
        defer { cmsCloseProfile(target) }
        // TYPE_RGB_DBL: PT_RGB, 3 channels, 0 bytes (double), floating point.
        let double = cmsUInt32Number((4 << 16) | (3 << 3) | (1 << 22))
        let flags = cmsUInt32Number(cmsFLAGS_NOCACHE | cmsFLAGS_BLACKPOINTCOMPENSATION)
        let transform = try #require(cmsCreateTransform(source, double, target, double, cmsUInt32Number(INTENT_RELATIVE_COLORIMETRIC), flags))
        defer { cmsDeleteTransform(transform) }
        let input = samples.map { Double($0) / Double(maximum) }
        var output = [Double](repeating: 0, count: input.count)
        cmsDoTransform(transform, input, &output, cmsUInt32Number(input.count / 3))
        return output.map { UInt8((min(max($0, 0), 1) * 255).rounded()) }
    }

    @Test("8-bit and 16-bit pixels come out within 1 of Little CMS's exact answer; the matrix/shaper profiles are converted here", arguments: profiles)
    func againstLittleCMS(path: String) throws {
        let profile = try #require(ColorProfile(iccData: try Data(contentsOf: URL(fileURLWithPath: path))))
        guard profile.kind == .rgb else { return }
        for (layout, maximum) in [(ColorPixelLayout.rgba8, 255), (.rgba16, 65535)] {
            let transform = try ColorTransform.make(profile: profile, layout: layout, maxProfileSize: 4 << 20, maxMemory: 64 << 20).get()
            let count = 20_000
            let samples = Self.samples(count: count, maximum: maximum)
            let expected = try Self.reference(profile.data, samples, maximum: maximum)
            var output = [UInt8](repeating: 0, count: count * 4)
            if layout == .rgba8 {
                for index in 0..<count * 4 { output[index] = index % 4 == 3 ? 255 : UInt8(samples[index / 4 * 3 + index % 4]) }
                transform.apply(&output, width: count, height: 1)
            } else {
                let wide: [UInt16] = (0..<count * 4).map { index in index % 4 == 3 ? UInt16.max : UInt16(samples[index / 4 * 3 + index % 4]) }
                wide.withUnsafeBufferPointer { input in
                    output.withUnsafeMutableBufferPointer { transform.apply(rgba16: input, width: count, height: 1, into: $0) }
                }
            }
            var worst = 0
            for index in 0..<count * 3 {
                let got = Int(output[index / 3 * 4 + index % 3])
                worst = max(worst, abs(got - Int(expected[index])))
            }
            #expect(worst <= 1, "\(path) \(layout): \(worst) levels off")
        }
    }
}
