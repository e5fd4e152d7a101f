import Foundation
import Imago
import Testing

/// What the colour tests compare with: fixtures made by tools nobody here wrote (ImageMagick, Little
/// CMS's own `jpgicc`/`tificc`, a Little CMS program compiled in the test), from Debian's profiles,
/// and the CIEDE2000 colour difference.
enum ColorReference {
    static let profiles = "/usr/share/color/icc"
    static let sRGB = "\(profiles)/colord/sRGB.icc"
    static let adobeRGB = "\(profiles)/colord/AdobeRGB1998.icc"
    static let proPhoto = "\(profiles)/colord/ProPhotoRGB.icc"
    static let swapped = "\(profiles)/colord/SwappedRedAndGreen.icc"
    static let gray = "\(profiles)/ghostscript/sgray.icc"
    static let swop = "\(profiles)/ghostscript/default_cmyk.icc"
    static let convert = "/usr/bin/convert"

    /// A 160×100 photo-like picture (a wallpaper, reduced) as an untagged sRGB PNG.
    static func source(in directory: URL) async throws -> URL {
        let source = directory.appendingPathComponent("source.png")
        if !FileManager.default.fileExists(atPath: source.path) {
            try await runTool(convert, ["/usr/share/backgrounds/rhythm.jpg", "-resize", "160x100!", "-strip", "png24:\(source.path)"])
        }
        return source
    }

    /// `source` converted by ImageMagick from sRGB into `profile` and written as `name` (its
    /// extension picks the format) with the profile embedded.
    static func tagged(_ profile: String, _ name: String, in directory: URL, extra: [String] = []) async throws -> URL {
        let output = directory.appendingPathComponent(name)
        try await runTool(convert, [try source(in: directory).path, "-profile", sRGB, "-profile", profile] + extra + [output.path])
        return output
    }

    /// ImageMagick's conversion of a tagged file to sRGB (relative colorimetric, black-point
    /// compensation), decoded.
    static func magickSRGB(_ file: URL, in directory: URL) async throws -> Image {
        let output = directory.appendingPathComponent("magick-\(file.lastPathComponent).png")
        try await runTool(convert, [file.path, "-intent", "relative", "-black-point-compensation", "-profile", sRGB, "-depth", "8", "png24:\(output.path)"])
        return try PNGDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
    }

    /// Little CMS's `jpgicc` conversion of a JPEG to sRGB (relative colorimetric, black-point
    /// compensation, quality 100), decoded; `inputProfile` for a file that carries none.
    static func jpgiccSRGB(_ file: URL, inputProfile: String? = nil, in directory: URL) async throws -> Image {
        let output = directory.appendingPathComponent("jpgicc-\(file.lastPathComponent)")
        try await runTool("/usr/bin/jpgicc", ["-t1", "-b", "-q100"] + (inputProfile.map { ["-i\($0)"] } ?? []) + [file.path, output.path])
        return try JPEGDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
    }

    /// Little CMS's `tificc` conversion of a TIFF to sRGB, decoded.
    static func tificcSRGB(_ file: URL, inputProfile: String? = nil, in directory: URL) async throws -> Image {
        let output = directory.appendingPathComponent("tificc-\(file.lastPathComponent)")
        try await runTool("/usr/bin/tificc", ["-t1", "-b", "-w8"] + (inputProfile.map { ["-i\($0)"] } ?? []) + ["-o\(sRGB)", file.path, output.path])
        return try TIFFDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
    }

    /// Profiles made by a Little CMS program compiled here: a Display P3 profile (primaries
    /// .680/.320, .265/.690, .150/.060, D65, the sRGB curve) and a profile of about 200 KB (sRGB's
    /// primaries and curve with a large private tag), written to `p3.icc` and `large.icc`.
    static func lcmsProfiles(in directory: URL) async throws -> (p3: URL, large: URL) {
        let program = """
            #include <lcms2.h>
            int main(int argc, char **argv) {
                cmsCIExyY d65 = {0.3127, 0.3290, 1.0};
                cmsCIExyYTRIPLE p3 = {{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
                cmsCIExyYTRIPLE srgb = {{0.64, 0.33, 1.0}, {0.30, 0.60, 1.0}, {0.15, 0.06, 1.0}};
                double parameters[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
                cmsToneCurve *curve = cmsBuildParametricToneCurve(NULL, 4, parameters);
                cmsToneCurve *curves[3] = {curve, curve, curve};
                cmsHPROFILE profile = cmsCreateRGBProfile(&d65, &p3, curves);
                if (!profile || !cmsSaveProfileToFile(profile, argv[1])) return 1;
                // sRGB's primaries and curve, with 200 KB of a private tag that readers skip.
                cmsHPROFILE big = cmsCreateRGBProfile(&d65, &srgb, curves);
                static unsigned char filler[200000];
                for (int i = 0; i < 200000; i++) filler[i] = (unsigned char)(i * 7);
                if (!big || !cmsWriteRawTag(big, (cmsTagSignature)0x7A7A7A7A, filler, sizeof filler)) return 1;
                cmsMLU *name = cmsMLUalloc(NULL, 1);
                cmsMLUsetASCII(name, "en", "US", "Large test profile");
                cmsWriteTag(big, cmsSigProfileDescriptionTag, name);
                return cmsSaveProfileToFile(big, argv[2]) ? 0 : 1;
            }
            """
        let source = directory.appendingPathComponent("profiles.c"), binary = directory.appendingPathComponent("profiles")
        try program.write(to: source, atomically: true, encoding: .utf8)
        try await runTool("/usr/bin/cc", [source.path, "-llcms2", "-o", binary.path])
        let p3 = directory.appendingPathComponent("p3.icc"), large = directory.appendingPathComponent("large.icc")
        try await runTool(binary.path, [p3.path, large.path])
        return (p3, large)
    }

    /// The ICC profile in a file, as exiftool extracts it.
    static func exiftoolProfile(_ file: URL) async throws -> Data {
        try await runProcess(URL(fileURLWithPath: "/usr/bin/exiftool"), ["-b", "-ICC_Profile", file.path]).output
    }

    /// Mean and largest CIEDE2000 difference between two images' first frames (colour only).
    static func deltaE(_ a: Image, _ b: Image) -> (mean: Double, max: Double) {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0.0, largest = 0.0
        let count = a.width * a.height
        for index in 0..<count {
            let offset = index * 4
            let difference = ciede2000(
                lab(a.pixels[offset], a.pixels[offset + 1], a.pixels[offset + 2]), lab(b.pixels[offset], b.pixels[offset + 1], b.pixels[offset + 2]))
            total += difference
            largest = max(largest, difference)
        }
        return (total / Double(count), largest)
    }

    /// CIELAB (D65) of an 8-bit sRGB colour.
    static func lab(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> (l: Double, a: Double, b: Double) {
        func linear(_ value: UInt8) -> Double {
            let v = Double(value) / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        let (lr, lg, lb) = (linear(r), linear(g), linear(b))
        let x = (0.4124 * lr + 0.3576 * lg + 0.1805 * lb) / 0.95047
        let y = 0.2126 * lr + 0.7152 * lg + 0.0722 * lb
        let z = (0.0193 * lr + 0.1192 * lg + 0.9505 * lb) / 1.08883
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }

    /// CIEDE2000 (Sharma, Wu and Dalal's formulation).
    static func ciede2000(_ one: (l: Double, a: Double, b: Double), _ two: (l: Double, a: Double, b: Double)) -> Double {
        let radians = Double.pi / 180
        let c1 = (one.a * one.a + one.b * one.b).squareRoot(), c2 = (two.a * two.a + two.b * two.b).squareRoot()
        let meanC = (c1 + c2) / 2
        let g = 0.5 * (1 - (pow(meanC, 7) / (pow(meanC, 7) + pow(25, 7))).squareRoot())
        let a1 = (1 + g) * one.a, a2 = (1 + g) * two.a
        let c1p = (a1 * a1 + one.b * one.b).squareRoot(), c2p = (a2 * a2 + two.b * two.b).squareRoot()
        func hue(_ b: Double, _ a: Double) -> Double {
            guard a != 0 || b != 0 else { return 0 }
            let h = atan2(b, a) / radians
            return h < 0 ? h + 360 : h
        }
        let h1 = hue(one.b, a1), h2 = hue(two.b, a2)
        let deltaL = two.l - one.l, deltaC = c2p - c1p
        var deltaH = 0.0
        if c1p * c2p != 0 {
            deltaH = h2 - h1
            if deltaH > 180 { deltaH -= 360 } else if deltaH < -180 { deltaH += 360 }
        }
        let deltaBigH = 2 * (c1p * c2p).squareRoot() * sin(deltaH / 2 * radians)
        let meanL = (one.l + two.l) / 2, meanCp = (c1p + c2p) / 2
        var meanH = h1 + h2
        if c1p * c2p != 0 {
            if abs(h1 - h2) > 180 { meanH += h1 + h2 < 360 ? 360 : -360 }
            meanH /= 2
        }
        let t =
            1 - 0.17 * cos((meanH - 30) * radians) + 0.24 * cos(2 * meanH * radians) + 0.32 * cos((3 * meanH + 6) * radians)
            - 0.20 * cos((4 * meanH - 63) * radians)
        let deltaTheta = 30 * exp(-pow((meanH - 275) / 25, 2))
        let rc = 2 * (pow(meanCp, 7) / (pow(meanCp, 7) + pow(25, 7))).squareRoot()
        let sl = 1 + 0.015 * pow(meanL - 50, 2) / (20 + pow(meanL - 50, 2))
        let sc = 1 + 0.045 * meanCp
        let sh = 1 + 0.015 * meanCp * t
        let rt = -sin(2 * deltaTheta * radians) * rc
        let l = deltaL / sl, c = deltaC / sc, h = deltaBigH / sh
        return (l * l + c * c + h * h + rt * c * h).squareRoot()
    }

    /// Expects `image` within a mean ΔE2000 of 1 and a largest of 5 of `reference`.
    static func expectClose(_ image: Image, _ reference: Image, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect((image.width, image.height) == (reference.width, reference.height), comment, sourceLocation: sourceLocation)
        guard (image.width, image.height) == (reference.width, reference.height) else { return }
        let difference = deltaE(image, reference)
        #expect(
            difference.mean <= 1 && difference.max <= 5, "\(comment): ΔE2000 mean \(difference.mean), max \(difference.max)", sourceLocation: sourceLocation)
    }

    /// Expects `image` far from `reference` (mean ΔE2000 over 2): an untreated profile would look so.
    static func expectFar(_ image: Image, _ reference: Image, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        let difference = deltaE(image, reference)
        #expect(difference.mean > 2, "\(comment): ΔE2000 mean \(difference.mean)", sourceLocation: sourceLocation)
    }
}
