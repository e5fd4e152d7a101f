import Foundation
import Imago
import Testing

@Suite("EXIF orientation")
struct OrientationTests {
    enum Corner: CaseIterable { case topLeft, topRight, bottomLeft, bottomRight }

    /// Where the stored top-left and top-right pixels appear once the image is upright, per the
    /// EXIF specification's meaning of each value.
    static let expected: [Int: (topLeft: Corner, topRight: Corner)] = [
        1: (.topLeft, .topRight), 2: (.topRight, .topLeft), 3: (.bottomRight, .bottomLeft), 4: (.bottomLeft, .bottomRight),
        5: (.topLeft, .bottomLeft), 6: (.topRight, .bottomRight), 7: (.bottomRight, .topRight), 8: (.bottomLeft, .topLeft),
    ]

    static func pixel(_ image: Image, _ corner: Corner) -> [UInt8] {
        let (x, y) =
            switch corner {
            case .topLeft: (0, 0)
            case .topRight: (image.width - 1, 0)
            case .bottomLeft: (0, image.height - 1)
            case .bottomRight: (image.width - 1, image.height - 1)
            }
        let p = image.pixel(x: x, y: y)
        return [p.r, p.g, p.b, p.a]
    }

    /// The corpus photo with its EXIF orientation set by exiftool.
    static func tagged(_ orientation: Int) async throws -> Data {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imago-orientation-\(UUID().uuidString).jpeg")
        try Corpus.data("jpeg/video-001.jpeg").write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await runTool("/usr/bin/exiftool", ["-q", "-n", "-overwrite_original", "-Orientation=\(orientation)", file.path])
        return try Data(contentsOf: file)
    }

    @Test("orientations 1–8 come out upright; the raw option keeps the stored pixels", arguments: 1...8)
    func orientation(value: Int) async throws {
        try await Self.expectUpright(Self.tagged(value), value: value, options: DecodingOptions())
    }

    @Test("at 1/8 scale (the DC-only decoder) orientations 1–8 come out upright too", arguments: 1...8)
    func orientationEighth(value: Int) async throws {
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 1, height: 1)
        try await Self.expectUpright(Self.tagged(value), value: value, options: options)
    }

    static func expectUpright(_ data: Data, value: Int, options: DecodingOptions) throws {
        var raw = options
        raw.appliesOrientation = false
        let stored = try JPEGDecoder().decode(data, options: raw)
        #expect(stored.metadata.orientationApplied == .up)
        #expect(Set(Corner.allCases.map { Self.pixel(stored, $0) }).count == 4, "corners must differ for the test to mean anything")

        let upright = try JPEGDecoder().decode(data, options: options)
        let orientation = try #require(ImageOrientation(rawValue: value))
        #expect(upright.metadata.orientationApplied == orientation)
        if orientation.swapsDimensions {
            #expect((upright.width, upright.height) == (stored.height, stored.width))
        } else {
            #expect((upright.width, upright.height) == (stored.width, stored.height))
        }
        let (topLeft, topRight) = try #require(Self.expected[value])
        #expect(Self.pixel(upright, topLeft) == Self.pixel(stored, .topLeft))
        #expect(Self.pixel(upright, topRight) == Self.pixel(stored, .topRight))
    }

    @Test("a scaled decode covers the target in upright terms")
    func scaledRotated() async throws {
        let data = try await Self.tagged(6)
        let full = try JPEGDecoder().decode(data, options: DecodingOptions())
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: full.width / 2, height: full.height / 2)
        let half = try JPEGDecoder().decode(data, options: options)
        #expect(half.width >= full.width / 2 && half.height >= full.height / 2)
        #expect(half.width < full.width)
    }
}
