import Foundation
import Imago
import Testing

/// SSIMULACRA2 against cloudinary/ssimulacra2's own tool. Every expected score below is what
/// that tool (built from its source beside the project, `make ssimulacra2-reference`) printed for
/// the two PNGs these tests write: an original from the corpus and its distortion made here. With
/// `IMAGO_SSIMULACRA2` naming the tool, each case runs it again and compares live as well.
@Suite("SSIMULACRA2 against the reference implementation")
struct SSIMULACRA2Tests {
    enum Distortion: String, CaseIterable, Sendable {
        case identical, jpeg20, jpeg50, jpeg85, webp30, webp75, avif40, blur, noise
    }

    static let sources = ["jpeg/video-001.png", "png/benchRGB.png", "png/basn6a08.png"]

    /// The reference's scores, by source and distortion.
    static let expected: [String: [Distortion: Double]] = [
        "jpeg/video-001.png": [
            .identical: 100, .jpeg20: 38.64606749, .jpeg50: 45.37543702, .jpeg85: 56.20961102, .webp30: 50.70580769,
            .webp75: 62.31938411, .avif40: 49.92636979, .blur: 36.67660771, .noise: 49.42096106,
        ],
        "png/benchRGB.png": [
            .identical: 100, .jpeg20: 25.32842985, .jpeg50: 42.03383787, .jpeg85: 51.96943137, .webp30: 37.6921539,
            .webp75: 38.9179308, .avif40: 38.67000982, .blur: 5.53091247, .noise: 75.66994962,
        ],
        // Alpha: the worse of the scores over a dark and a bright background, as the reference's tool.
        "png/basn6a08.png": [
            .identical: 100, .jpeg20: -23.84775765, .jpeg50: 2.07428747, .jpeg85: 13.32543321, .webp30: 62.84395006,
            .webp75: 70.74503749, .avif40: 66.13426153, .blur: 66.21258555, .noise: 68.86400403,
        ],
    ]

    static func original(_ path: String) throws -> Image {
        try DecoderRegistry.standard().decode(try Corpus.data(path))
    }

    /// The distortion applied to `image`, as the pixels a viewer of the result would decode.
    static func distorted(_ image: Image, _ distortion: Distortion) throws -> Image? {
        let decode = { (data: Data) throws -> Image in try DecoderRegistry.standard().decode(data) }
        switch distortion {
        case .identical: return image
        case .jpeg20: return try decode(JPEGEncoder(quality: 20).encode(image))
        case .jpeg50: return try decode(JPEGEncoder(quality: 50).encode(image))
        case .jpeg85: return try decode(JPEGEncoder(quality: 85).encode(image))
        case .webp30: return try decode(WebPEncoder(quality: 30).encode(image))
        case .webp75: return try decode(WebPEncoder(quality: 75).encode(image))
        case .avif40:
            #if AVIF
                return try decode(AVIFEncoder(quality: 40, speed: 8).encode(image))
            #else
                return nil
            #endif
        case .blur: return try ImageProcessors.GaussianBlur(radius: 1.2).process(image)
        case .noise:
            var pixels = image.pixels
            var state: UInt32 = 12345
            for index in pixels.indices where index % 4 != 3 {
                state = state &* 1_103_515_245 &+ 12345
                let delta = Int((state >> 16) % 25) - 12
                pixels[index] = UInt8(max(0, min(255, Int(pixels[index]) + delta)))
            }
            var noisy = image
            noisy.frames = [Image.Frame(pixels: pixels)]
            return noisy
        }
    }

    @Test(
        "scores agree with cloudinary/ssimulacra2 within 0.5 on JPEG, WebP and AVIF at several qualities, blur and noise, with and without alpha",
        arguments: sources)
    func agreesWithReference(source: String) async throws {
        let original = try Self.original(source)
        let reference = try SSIMULACRA2.Reference(original)
        let tool = ProcessInfo.processInfo.environment["IMAGO_SSIMULACRA2"]
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let originalFile = directory.appendingPathComponent("original.png")
        try PNGEncoder().encode(original).write(to: originalFile)
        var report: [String] = []
        for distortion in Distortion.allCases {
            guard let candidate = try Self.distorted(original, distortion) else { continue }
            let score = try reference.score(candidate)
            #expect(try SSIMULACRA2.score(original: original, distorted: candidate) == score)
            if distortion == .identical { #expect(score == 100) }
            if let tool {
                let file = directory.appendingPathComponent("\(distortion).png")
                try PNGEncoder().encode(candidate).write(to: file)
                let (status, output) = try await runProcess(URL(fileURLWithPath: tool), [originalFile.path, file.path])
                let live = Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                #expect(status == 0)
                #expect(live.map { abs($0 - score) <= 0.5 } == true, "\(source) \(distortion): \(score) vs reference \(live ?? .nan)")
                report.append("\(distortion): \(live ?? .nan) (imago \(score))")
            }
            if let expected = Self.expected[source]?[distortion] {
                #expect(abs(expected - score) <= 0.5, "\(source) \(distortion): \(score), reference \(expected)")
            } else if tool == nil {
                Issue.record("no reference score for \(source) \(distortion)")
            }
        }
        if !report.isEmpty { print("SSIMULACRA2 \(source): " + report.joined(separator: ", ")) }
    }

    @Test("scores fall as a JPEG's quality falls")
    func monotone() throws {
        let original = try Self.original("png/benchRGB.png")
        let reference = try SSIMULACRA2.Reference(original)
        let scores = try [95, 80, 60, 40, 20].map { quality in
            try reference.score(try DecoderRegistry.standard().decode(JPEGEncoder(quality: quality).encode(original)))
        }
        #expect(scores == scores.sorted(by: >), "\(scores)")
        #expect(scores[0] - scores[4] > 20, "\(scores)")
    }

    @Test("images of different sizes, under 8×8 or over the pixel limit are refused with processingFailed")
    func refusals() throws {
        let small = Image.test(7, 40, [UInt8](repeating: 9, count: 7 * 40 * 4))
        let other = Image.test(40, 40, [UInt8](repeating: 9, count: 40 * 40 * 4))
        let wide = Image.test(41, 40, [UInt8](repeating: 9, count: 41 * 40 * 4))
        for (a, b) in [(small, small), (other, wide)] {
            do {
                _ = try SSIMULACRA2.score(original: a, distorted: b)
                Issue.record("\(a.width)×\(a.height) against \(b.width)×\(b.height) scored")
            } catch {
                #expect(error.code.name == "processingFailed", "\(error)")
            }
        }
        // One pixel over the limit is refused before any plane is made.
        let huge = Image.test(4097, 4096, [UInt8](repeating: 0, count: 4097 * 4096 * 4))
        #expect(throws: ImagoError.self) { try SSIMULACRA2.Reference(huge) }
    }
}
