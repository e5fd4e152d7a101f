import Foundation
import Testing

@testable import Imago

/// HDR gain maps through decode, every geometric processor and encode, checked against libvips
/// 8.18 with libultrahdr: it makes the sources, must find the gain map in Imago's outputs, and its
/// HDR reconstruction is the yardstick for Imago's.
@Suite("HDR gain maps against libvips + libultrahdr", .enabled(if: UltraHDRReference.isInstalled), .serialized)
struct GainMapTests {
    /// The gain map kept, and the base in its own colour space (libultrahdr's scene is Display
    /// P3), where the gains apply and where libvips reconstructs.
    static func keep() -> DecodingOptions {
        var options = DecodingOptions()
        options.gainMapHandling = .keep
        options.colorProfileHandling = .keep
        return options
    }

    /// How well the gain map sits on the picture: the intersection over union of the base's
    /// near-white block (the HDR highlight, tone-mapped to 231 in libultrahdr's SDR base; nothing
    /// else in the scene is above 180) and the pixels the gain map boosts over 2×.
    static func alignment(_ image: Image) throws -> Double {
        let map = try #require(image.gainMap)
        let hdr = map.hdrRendition(of: image, headroom: 1000)
        var both = 0, either = 0
        for index in 0..<(image.width * image.height) {
            let green = image.pixels[index * 4 + 1]
            let white = image.pixels[index * 4] >= 215 && green >= 215 && image.pixels[index * 4 + 2] >= 215
            let base = Float(green) / 255
            let linear = base <= 0.04045 ? base / 12.92 : pow((base + 0.055) / 1.055, 2.4)
            let boosted = linear > 0.05 && hdr[index * 3 + 1] / linear > 2
            if white && boosted { both += 1 }
            if white || boosted { either += 1 }
        }
        return either == 0 ? 0 : Double(both) / Double(either)
    }

    /// Mean absolute difference of two renditions and the mean of each over the highlight block
    /// (the scene's 0.6…0.8 × 0.3…0.55 of the picture, less a margin), in linear light.
    static func compare(_ a: [Float], _ b: [Float], width: Int, height: Int) -> (meanError: Double, highlightA: Double, highlightB: Double) {
        var error = 0.0
        for index in a.indices { error += Double(abs(a[index] - b[index])) }
        var sumA = 0.0, sumB = 0.0, count = 0
        for y in Int(Double(height) * 0.35)..<Int(Double(height) * 0.5) {
            for x in Int(Double(width) * 0.65)..<Int(Double(width) * 0.75) {
                for channel in 0..<3 {
                    sumA += Double(a[(y * width + x) * 3 + channel])
                    sumB += Double(b[(y * width + x) * 3 + channel])
                    count += 1
                }
            }
        }
        return (error / Double(a.count), sumA / Double(count), sumB / Double(count))
    }

    @Test("libultrahdr's file: the gain map found at libvips' size with its metadata; dropped, never decoded, but still described")
    func decodesLibultrahdr() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try await UltraHDRReference.scene(width: 320, height: 240, in: directory)
        let facts = try #require(try await UltraHDRReference.facts(data, in: directory).gainMap)
        let image = try JPEGDecoder().decode(data, options: Self.keep())
        let map = try #require(image.gainMap)
        #expect(map.width == facts.width && map.height == facts.height && map.channelCount == facts.bands)
        let meta = map.metadata
        for channel in 0..<3 {
            #expect(abs(exp2(meta.gainMapMax[channel]) - facts.maxContentBoost[channel]) < 1e-3)
            #expect(abs(exp2(meta.gainMapMin[channel]) - facts.minContentBoost[channel]) < 1e-4)
            #expect(abs(meta.gamma[channel] - facts.gamma[channel]) < 1e-4)
            #expect(abs(meta.baseOffset[channel] - facts.offsetSDR[channel]) < 1e-4)
            #expect(abs(meta.alternateOffset[channel] - facts.offsetHDR[channel]) < 1e-4)
        }
        #expect(abs(meta.hdrCapacityMax - facts.hdrCapacityMax) < 1e-3 && abs(exp2(meta.baseHeadroom) - facts.hdrCapacityMin) < 1e-4)
        #expect(image.metadata.sourceGainMap?.metadataSource == "iso21496")

        var dropping = Self.keep()
        dropping.gainMapHandling = .drop
        let dropped = try JPEGDecoder().decode(data, options: dropping)
        let droppedHasMap = dropped.gainMap != nil
        #expect(!droppedHasMap && dropped.pixels == image.pixels)
        #expect(dropped.metadata.sourceGainMap?.width == facts.width)
        #expect(dropped.cost == image.cost - map.cost)
    }

    @Test("Imago's HDR rendition of libultrahdr's file matches libvips' uhdr2scRGB in linear light, highlight at 4× kept")
    func renditionMatchesLibvips() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try await UltraHDRReference.scene(width: 320, height: 240, in: directory)
        let reference = try await UltraHDRReference.hdr(data, in: directory)
        let image = try JPEGDecoder().decode(data, options: Self.keep())
        let map = try #require(image.gainMap)
        #expect(reference.width == image.width && reference.height == image.height)
        let ours = map.hdrRendition(of: image, headroom: map.metadata.hdrCapacityMax)
        let result = Self.compare(ours, reference.values, width: image.width, height: image.height)
        #expect(result.meanError < 0.02, "mean error \(result.meanError)")
        #expect(abs(result.highlightA - result.highlightB) < 0.15 && result.highlightA > 3.5, "highlights \(result.highlightA) vs \(result.highlightB)")
        // On an SDR display the map has no weight: the rendition is the base.
        let sdr = map.hdrRendition(of: image, headroom: 1)
        #expect(sdr.max() ?? 2 <= 1.0001)
    }

    @Test("a thumbnail keeps the gain map: libvips finds it, and its HDR (by libvips and by Imago) matches libvips' own thumbnail's")
    func thumbnailAgainstLibvips() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try await UltraHDRReference.scene(width: 640, height: 480, in: directory)
        var options = Self.keep()
        options.targetSize = PixelSize(width: 160, height: 160)
        options.targetMode = .fit
        let decoded = try JPEGDecoder().decode(data, options: options)
        #expect(decoded.width < 640, "a reduced decode")
        let thumbnail = try ImageProcessors.Resize(size: PixelSize(width: 160, height: 160)).process(decoded)
        let written = try JPEGEncoder(quality: 90).encode(thumbnail)
        let facts = try await UltraHDRReference.facts(written, in: directory)
        let found = try #require(facts.gainMap, "libvips finds Imago's gain map")
        #expect(facts.width == 160 && facts.height == 120 && found.width == 80 && found.height == 60)
        #expect(abs(found.maxContentBoost[0] - thumbnail.gainMap!.metadata.maxBoost) < 1e-3)

        let theirs = try await UltraHDRReference.thumbnail(data, width: 160, height: 160, in: directory)
        let theirHDR = try await UltraHDRReference.hdr(theirs, in: directory)
        let ourHDR = try await UltraHDRReference.hdr(written, in: directory)
        #expect(theirHDR.width == ourHDR.width && theirHDR.height == ourHDR.height)
        let result = Self.compare(ourHDR.values, theirHDR.values, width: ourHDR.width, height: ourHDR.height)
        #expect(result.meanError < 0.03, "mean error \(result.meanError)")
        #expect(result.highlightA > 3.3 && abs(result.highlightA - result.highlightB) < 0.25, "highlights \(result.highlightA) vs \(result.highlightB)")
        // Imago's own reconstruction of its output against libvips' of libvips' thumbnail.
        let reread = try JPEGDecoder().decode(written, options: Self.keep())
        let rereadMap = try #require(reread.gainMap)
        #expect(rereadMap.width == 80 && reread.metadata.sourceGainMap?.metadataSource == "iso21496")
        let ours = Self.compare(
            rereadMap.hdrRendition(of: reread, headroom: rereadMap.metadata.hdrCapacityMax), theirHDR.values, width: reread.width, height: reread.height)
        #expect(ours.meanError < 0.03, "Imago's rendition: mean error \(ours.meanError)")
        #expect(ours.highlightA > 3.3 && abs(ours.highlightA - ours.highlightB) < 0.25, "highlights \(ours.highlightA) vs \(ours.highlightB)")
    }

    @Test("every geometric step keeps the gain map on the picture; a 2-pixel shift of the map is caught")
    func geometricSteps() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try await UltraHDRReference.scene(width: 320, height: 240, in: directory)
        let image = try JPEGDecoder().decode(data, options: Self.keep())
        let aligned = try Self.alignment(image)
        #expect(aligned >= 0.9, "decoded: \(aligned)")

        // The proof the measure can fail: the same map two of its pixels to the right.
        let map = try #require(image.gainMap)
        var shiftedPixels = map.pixels
        for y in 0..<map.height {
            for x in stride(from: map.width - 1, through: 2, by: -1) {
                for channel in 0..<4 { shiftedPixels[(y * map.width + x) * 4 + channel] = map.pixels[(y * map.width + x - 2) * 4 + channel] }
            }
        }
        var shifted = image
        shifted.gainMap = GainMap(width: map.width, height: map.height, pixels: shiftedPixels, channelCount: map.channelCount, metadata: map.metadata)
        #expect(try Self.alignment(shifted) < 0.9)

        let steps: [(String, any ImageProcessing)] = [
            ("resize", try ImageProcessors.Resize(size: PixelSize(width: 150, height: 150))),
            ("resize fill", try ImageProcessors.Resize(size: PixelSize(width: 97, height: 130), contentMode: .aspectFill, crop: true)),
            ("crop", try ImageProcessors.Crop(x: 101, y: 33, width: 181, height: 127)),
            ("smart crop", try ImageProcessors.SmartCrop(width: 120, height: 120)),
            ("rotate 90", ImageProcessors.Rotate(degrees: 90)!),
            ("rotate 270", ImageProcessors.Rotate(degrees: 270)!),
            ("flip", ImageProcessors.Flip(horizontal: true, vertical: true)),
            ("extend", try ImageProcessors.Extend(width: 400, height: 300, x: 37, y: 21, background: .black)),
            (
                "extend, then trim",
                ImageProcessors.Composition([
                    try ImageProcessors.Extend(width: 360, height: 260, x: 9, y: 11, background: .black),
                    try ImageProcessors.Trim(threshold: 10, color: .black),
                ])
            ),
        ]
        var written: [Data] = []
        for (name, step) in steps {
            let processed = try step.process(image)
            #expect(processed.gainMap != nil, "\(name) keeps the map")
            let score = try Self.alignment(processed)
            #expect(score >= 0.9, "\(name): \(score)")
            written.append(try JPEGEncoder(quality: 90).encode(processed))
        }
        // Each written, and read back by libvips (one process for all).
        let found = try await UltraHDRReference.facts(written, in: directory)
        for (index, facts) in found.enumerated() { #expect(facts.gainMap != nil, "libvips finds \(steps[index].0)'s map") }
        #expect(found.count == steps.count)
        // Tone steps keep the map as it is.
        for step in [try ImageProcessors.GaussianBlur(radius: 2), ImageProcessors.Grayscale(), try ImageProcessors.Sharpen(sigma: 1)] as [any ImageProcessing] {
            #expect(try step.process(image).gainMap?.pixels == map.pixels, "\(step.identifier)")
        }
        // Outside the picture, an extension shows no boost.
        let extended = try ImageProcessors.Extend(width: 400, height: 300, x: 37, y: 21, background: .black).process(image)
        let corner = try #require(extended.gainMap).pixels[0]
        #expect(corner == map.noBoostValue.0)
    }

    @Test("EXIF orientation: the map turned with the picture, at a reduced decode too")
    func orientation() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for orientation in [3, 6, 8, 5] {
            let data = try await UltraHDRReference.scene(width: 320, height: 240, orientation: orientation, in: directory)
            let image = try JPEGDecoder().decode(data, options: Self.keep())
            #expect(image.metadata.orientationApplied.rawValue == orientation)
            #expect(try Self.alignment(image) >= 0.9, "orientation \(orientation)")
            var reduced = Self.keep()
            reduced.targetSize = PixelSize(width: 80, height: 80)
            let small = try JPEGDecoder().decode(data, options: reduced)
            #expect(small.width < 240 && (small.gainMap?.width ?? 0) < 120)
            #expect(try Self.alignment(small) >= 0.85, "orientation \(orientation), reduced")
        }
    }
}
