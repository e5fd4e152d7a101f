import CLCMS
import CLCMSSupport
import Foundation

/// Profiles Imago makes itself, through Little CMS, from what a file states without an ICC
/// profile (PNG `gAMA`/`cHRM`, CICP in AVIF and HEIC), and the default CMYK profile.
extension ColorProfile {
    /// A chromaticity: CIE x and y.
    struct Chromaticity: Hashable {
        var x: Double
        var y: Double
    }

    /// A transfer curve from encoded values to linear light (0…1).
    enum TransferCurve: Hashable {
        /// `linear = encoded ^ exponent`.
        case gamma(Double)
        /// IEC 61966-2-1's piecewise curve.
        case sRGB
        /// SMPTE ST 2084 (HDR10), reference white (203 cd/m²) at 1, brighter light rolled off.
        case perceptualQuantizer
        /// ARIB STD-B67 (HLG) on a 1,000 cd/m² display, reference white at 1, brighter rolled off.
        case hybridLogGamma
    }

    /// The primaries of sRGB and BT.709, with D65 white.
    static let sRGBPrimaries = (
        white: Chromaticity(x: 0.3127, y: 0.3290), red: Chromaticity(x: 0.64, y: 0.33), green: Chromaticity(x: 0.30, y: 0.60),
        blue: Chromaticity(x: 0.15, y: 0.06)
    )

    private struct BuildKey: Hashable {
        var white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity
        var curve: TransferCurve
        var description: String
    }

    /// Profiles built so far: every PNG of a site with the same `gAMA` gets the same bytes, made once.
    private static let built = Locked<[BuildKey: ColorProfile?]>([:])

    /// Profiles built and kept now.
    static var builtProfileCount: Int {
        built.withLock { $0.count }
    }

    /// Forgets the profiles built so far.
    static func forgetBuiltProfiles() {
        built.withLock { $0 = [:] }
    }

    /// An RGB matrix/curve profile, or nil when Little CMS cannot make it (primaries that span no
    /// space).
    static func rgb(
        white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity, curve: TransferCurve, description: String
    ) -> ColorProfile? {
        let key = BuildKey(white: white, red: red, green: green, blue: blue, curve: curve, description: description)
        if let made = built.withLock({ $0[key] }) { return made }
        let made = build(white: white, red: red, green: green, blue: blue, curve: curve, description: description)
        built.withLock { built in
            if built.count >= 64 { built.removeAll() }
            built[key] = made
        }
        return made
    }

    private static func build(
        white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity, curve: TransferCurve, description: String
    ) -> ColorProfile? {
        guard let context = imago_lcms_context_create(16 << 20) else { return nil }
        defer { imago_lcms_context_delete(context) }
        guard let tone = toneCurve(curve, context: context) else { return nil }
        defer { cmsFreeToneCurve(tone) }
        var whitePoint = cmsCIExyY(x: white.x, y: white.y, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: red.x, y: red.y, Y: 1), Green: cmsCIExyY(x: green.x, y: green.y, Y: 1), Blue: cmsCIExyY(x: blue.x, y: blue.y, Y: 1))
        var curves: [OpaquePointer?] = [tone, tone, tone]
        guard let profile = cmsCreateRGBProfileTHR(context, &whitePoint, &primaries, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        if let text = cmsMLUalloc(context, 1) {
            defer { cmsMLUfree(text) }
            _ = cmsMLUsetASCII(text, "en", "US", description)
            _ = cmsWriteTag(profile, cmsSigProfileDescriptionTag, UnsafeRawPointer(text))
        }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return ColorProfile(iccData: Data(bytes))
    }

    /// The profile a PNG's `gAMA` (encoding gamma × 100,000) and `cHRM` describe, or nil when they
    /// describe sRGB (gamma 1/2.2 with sRGB's chromaticities or none, as libpng judges it).
    static func png(gamma: UInt32?, chromaticities: (white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity)?) -> ColorProfile? {
        guard gamma != nil || chromaticities != nil else { return nil }
        let primaries = chromaticities ?? sRGBPrimaries
        let isSRGBGamut = chromaticities.map { isClose($0, sRGBPrimaries) } ?? true
        let curve: TransferCurve
        if let gamma, gamma > 0 {
            // 1/2.2 stands for sRGB's curve, as libpng and browsers take it.
            curve = abs(Int(gamma) - 45_455) <= 1_000 ? .sRGB : .gamma(100_000 / Double(gamma))
        } else {
            curve = .sRGB
        }
        if isSRGBGamut, curve == .sRGB { return nil }
        // A gamma outside what any display uses is damage, not a colour space.
        if case .gamma(let exponent) = curve, !(0.1...10).contains(exponent) { return nil }
        return rgb(
            white: primaries.white, red: primaries.red, green: primaries.green, blue: primaries.blue, curve: curve,
            description: "Imago PNG gAMA/cHRM")
    }

    /// The profile CICP code points (ITU-T H.273, as AVIF and HEIC `nclx` give them) describe, or
    /// nil for sRGB and for codes Imago does not know (taken as sRGB). BT.709's and BT.601's
    /// transfer, which are SDR camera curves, are shown with sRGB's as browsers show them.
    static func cicp(primaries: Int, transfer: Int) -> ColorProfile? {
        let white = sRGBPrimaries.white
        let gamut: (white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity, name: String)? =
            switch primaries {
            case 1, 2: nil
            case 5: (white, .init(x: 0.64, y: 0.33), .init(x: 0.29, y: 0.60), .init(x: 0.15, y: 0.06), "BT.601 625")
            case 6, 7: (white, .init(x: 0.630, y: 0.340), .init(x: 0.310, y: 0.595), .init(x: 0.155, y: 0.070), "BT.601 525")
            case 9: (white, .init(x: 0.708, y: 0.292), .init(x: 0.170, y: 0.797), .init(x: 0.131, y: 0.046), "BT.2020")
            case 11: (.init(x: 0.314, y: 0.351), .init(x: 0.680, y: 0.320), .init(x: 0.265, y: 0.690), .init(x: 0.150, y: 0.060), "DCI-P3")
            case 12: (white, .init(x: 0.680, y: 0.320), .init(x: 0.265, y: 0.690), .init(x: 0.150, y: 0.060), "Display P3")
            default: nil
            }
        let curve: (TransferCurve, String)? =
            switch transfer {
            case 4: (.gamma(2.2), "gamma 2.2")
            case 5: (.gamma(2.8), "gamma 2.8")
            case 8: (.gamma(1), "linear")
            case 16: (.perceptualQuantizer, "PQ")
            case 18: (.hybridLogGamma, "HLG")
            default: nil
            }
        guard gamut != nil || curve != nil else { return nil }
        let space = gamut ?? (sRGBPrimaries.white, sRGBPrimaries.red, sRGBPrimaries.green, sRGBPrimaries.blue, "sRGB")
        return rgb(
            white: space.white, red: space.red, green: space.green, blue: space.blue, curve: curve?.0 ?? .sRGB,
            description: "Imago CICP \(space.name)" + (curve.map { ", \($0.1)" } ?? ""))
    }

    /// The CMYK profile for CMYK images that carry none, as libvips and imgproxy have one: the
    /// system's SWOP profile (Debian's `libgs-common`), or nil when there is none (the pixels are
    /// then converted as ink over white).
    static let defaultCMYK: ColorProfile? = {
        let candidates = ["/usr/share/color/icc/ghostscript/default_cmyk.icc", "/usr/share/color/icc/ghostscript/ps_cmyk.icc"]
        for path in candidates {
            if let data = FileManager.default.contents(atPath: path), let profile = ColorProfile(iccData: data), profile.kind == .cmyk {
                return profile
            }
        }
        return nil
    }()

    private static func isClose(
        _ a: (white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity),
        _ b: (white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity)
    ) -> Bool {
        [(a.white, b.white), (a.red, b.red), (a.green, b.green), (a.blue, b.blue)].allSatisfy { abs($0.x - $1.x) < 0.01 && abs($0.y - $1.y) < 0.01 }
    }

    private static func toneCurve(_ curve: TransferCurve, context: cmsContext) -> OpaquePointer? {
        switch curve {
        case .gamma(let exponent):
            return cmsBuildGamma(context, exponent)
        case .sRGB:
            // Little CMS's parametric type 4: Y = (aX + b)^g for X ≥ d, else cX.
            let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            return cmsBuildParametricToneCurve(context, 4, parameters)
        case .perceptualQuantizer, .hybridLogGamma:
            let count = 4096
            let values = (0..<count).map { index -> Float in
                let encoded = Double(index) / Double(count - 1)
                let nits = curve == .perceptualQuantizer ? pqNits(encoded) : hlgNits(encoded)
                return Float(rollOff(nits / 203))
            }
            return cmsBuildTabulatedToneCurveFloat(context, cmsUInt32Number(count), values)
        }
    }

    /// SMPTE ST 2084's EOTF: cd/m² for an encoded value.
    private static func pqNits(_ encoded: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let power = pow(encoded, 1 / m2)
        return 10_000 * pow(max(power - c1, 0) / (c2 - c3 * power), 1 / m1)
    }

    /// ARIB STD-B67's inverse OETF and a 1,000 cd/m² display's OOTF (system gamma 1.2).
    private static func hlgNits(_ encoded: Double) -> Double {
        let a = 0.178_832_77, b = 0.284_668_92, c = 0.559_910_73
        let scene = encoded <= 0.5 ? encoded * encoded / 3 : (exp((encoded - c) / a) + b) / 12
        return 1000 * pow(scene, 1.2)
    }

    /// Linear light relative to reference white, into 0…1: unchanged up to 0.75, then rolled off
    /// toward 1 so highlights keep some detail instead of clipping flat.
    private static func rollOff(_ value: Double) -> Double {
        guard value > 0.75 else { return max(value, 0) }
        return 0.75 + 0.25 * (1 - exp(-(value - 0.75) / 0.25))
    }
}
