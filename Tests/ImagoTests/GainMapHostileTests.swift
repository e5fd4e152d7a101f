import Foundation
import Testing

@testable import Imago

/// Hostile Ultra HDR files, made from one Imago writes: an MPF index pointing past the end or into
/// the primary, a truncated or oversized gain map, two gain maps, nested containers, metadata with
/// NaN, infinities or zero denominators. Each gives the SDR base (or the first sound gain map),
/// never a trap; the readers alone refuse what they cannot use.
@Suite("HDR gain maps: hostile files")
struct GainMapHostileTests {
    static let metadata = GainMapMetadata(
        gainMapMin: [0], gainMapMax: [2], gamma: [1], baseOffset: [1.0 / 64], alternateOffset: [1.0 / 64], alternateHeadroom: 2)

    /// A 64×48 picture with a bright block, and a 32×24 grey gain map boosting it.
    static func image(width: Int = 64, height: Int = 48, mapWidth: Int = 32, mapHeight: Int = 24) -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let bright = x >= width / 2 && y < height / 2
                let offset = (y * width + x) * 4
                (pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3]) =
                    bright ? (250, 250, 250, 255) : (UInt8(x * 180 / width), 90, 40, 255)
            }
        }
        var map = [UInt8](repeating: 255, count: mapWidth * mapHeight * 4)
        for y in 0..<mapHeight {
            for x in 0..<mapWidth {
                let value: UInt8 = x >= mapWidth / 2 && y < mapHeight / 2 ? 240 : 10
                let offset = (y * mapWidth + x) * 4
                (map[offset], map[offset + 1], map[offset + 2]) = (value, value, value)
            }
        }
        var image = Image(
            width: width, height: height, frames: [Image.Frame(pixels: pixels)],
            metadata: ImageMetadata(format: .jpeg, originalWidth: width, originalHeight: height, hasAlpha: false))
        image.gainMap = GainMap(width: mapWidth, height: mapHeight, pixels: map, channelCount: 1, metadata: metadata)
        return image
    }

    static func keep() -> DecodingOptions {
        var options = DecodingOptions()
        options.gainMapHandling = .keep
        return options
    }

    /// Where the MPF index's TIFF header starts and the second entry's size and offset fields are.
    static func mpf(_ data: [UInt8]) throws -> (tiff: Int, secondSize: Int, secondOffset: Int) {
        let signature = Array("MPF\0".utf8)
        let at = try #require((0..<(data.count - 4)).first { Array(data[$0..<($0 + 4)]) == signature })
        let tiff = at + 4
        return (tiff, tiff + 50 + 16 + 4, tiff + 50 + 16 + 8)
    }

    static func put(_ value: Int, at offset: Int, in data: inout [UInt8]) {
        for index in 0..<4 { data[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }

    static func integer(at offset: Int, in data: [UInt8]) -> Int {
        (0..<4).reduce(0) { $0 << 8 | Int(data[offset + $1]) }
    }

    @Test("Imago's own Ultra HDR reads back: the map, its metadata from ISO 21496-1, the hdrgm XMP alone when the ISO block is gone")
    func roundTrip() throws {
        let written = try JPEGEncoder(quality: 90).encode(Self.image())
        let decoded = try JPEGDecoder().decode(written, options: Self.keep())
        let map = try #require(decoded.gainMap)
        #expect(map.width == 32 && map.height == 24 && map.channelCount == 1)
        #expect(abs(map.metadata.gainMapMax[0] - 2) < 1e-6 && abs(map.metadata.baseOffset[2] - 1.0 / 64) < 1e-6 && map.metadata.alternateHeadroom == 2)
        #expect(decoded.metadata.sourceGainMap?.metadataSource == "iso21496")
        // Without the gain map's ISO block, its hdrgm XMP says the same.
        var bytes = [UInt8](written)
        let layout = try Self.mpf(bytes)
        let secondary = layout.tiff + Self.integer(at: layout.secondOffset, in: bytes)
        #expect(bytes[secondary + 2] == 0xFF && bytes[secondary + 3] == 0xE2)
        let length = Int(bytes[secondary + 4]) << 8 | Int(bytes[secondary + 5])
        bytes.replaceSubrange((secondary + 2)..<(secondary + 4 + length), with: [])
        Self.put(Self.integer(at: layout.secondSize, in: bytes) - length - 2, at: layout.secondSize, in: &bytes)
        let fromXMP = try JPEGDecoder().decode(Data(bytes), options: Self.keep())
        #expect(fromXMP.metadata.sourceGainMap?.metadataSource == "hdrgm")
        #expect(fromXMP.gainMap?.metadata == map.metadata)
    }

    @Test("an MPF entry past the end, into the primary, or at a truncated map: the map found through the XMP directory instead, else the SDR base, whole")
    func badIndex() throws {
        let written = [UInt8](try JPEGEncoder(quality: 90).encode(Self.image()))
        let plain = try JPEGDecoder().decode(Data(written), options: DecodingOptions())
        let original = try #require(try JPEGDecoder().decode(Data(written), options: Self.keep()).gainMap)
        let layout = try Self.mpf(written)
        var cases: [(String, [UInt8])] = []
        var pastEnd = written
        Self.put(0x7FFF_FFF0, at: layout.secondOffset, in: &pastEnd)
        cases.append(("offset past the end", pastEnd))
        var hugeSize = written
        Self.put(0x7FFF_FFF0, at: layout.secondSize, in: &hugeSize)
        cases.append(("size past the end", hugeSize))
        var intoPrimary = written
        Self.put(200, at: layout.secondOffset, in: &intoPrimary)
        cases.append(("offset into the primary's scan", intoPrimary))
        var beforeIndex = written
        Self.put(0xFFFF_FFF0, at: layout.secondOffset, in: &beforeIndex)
        cases.append(("offset wrapping before the index", beforeIndex))
        var badCount = written
        badCount[layout.tiff + 8 + 2 + 12 + 8 + 3] = 200
        cases.append(("an index of 200 entries", badCount))
        // The primary's container XMP names the map's length: the other way to it, broken too.
        let lengthAttribute = Array("Item:Length=\"".utf8)
        for (name, bytes) in cases {
            let image = try JPEGDecoder().decode(Data(bytes), options: Self.keep())
            let foundOther = image.gainMap.map { $0.pixels == original.pixels && $0.metadata == original.metadata }
            #expect(foundOther == true, "\(name): found through the XMP directory")
            #expect(image.pixels == plain.pixels, "\(name): the base is whole")
            var noDirectory = bytes
            let at = try #require((0..<(bytes.count - lengthAttribute.count)).first { Array(bytes[$0..<($0 + lengthAttribute.count)]) == lengthAttribute })
            noDirectory[at + 10] = UInt8(ascii: "x")
            let alone = try JPEGDecoder().decode(Data(noDirectory), options: Self.keep())
            let hasMap = alone.gainMap != nil
            #expect(!hasMap && alone.pixels == plain.pixels, "\(name), without the directory: the SDR base")
        }
        let cut = try JPEGDecoder().decode(Data(written.dropLast(40)), options: Self.keep())
        let cutHasMap = cut.gainMap != nil
        #expect(!cutHasMap && cut.pixels == plain.pixels, "the map cut short: the SDR base")
    }

    @Test("a map larger than its base, nested containers, two maps: bounded, the first sound one or none")
    func oddContainers() throws {
        let primary = try JPEGEncoder(quality: 90).encode(
            Image(width: 16, height: 16, frames: [Image.Frame(pixels: [UInt8](repeating: 200, count: 16 * 16 * 4))], metadata: Self.image().metadata))
        let big = try JPEGEncoder(quality: 90).encode(
            Image(width: 64, height: 64, frames: [Image.Frame(pixels: [UInt8](repeating: 100, count: 64 * 64 * 4))], metadata: Self.image().metadata))
        let larger = UltraHDRContainer.assemble(primary: primary, gainMap: big, metadata: Self.metadata)
        let decoded = try JPEGDecoder().decode(larger, options: Self.keep())
        let largerKept = decoded.gainMap != nil
        #expect(!largerKept && decoded.width == 16)
        #expect(decoded.metadata.sourceGainMap?.width == 64, "described as stored, not decoded")

        // The gain map's JPEG is itself an Ultra HDR JPEG, twice over: its own map is never read.
        let inner = try JPEGEncoder(quality: 90).encode(Self.image(width: 32, height: 24, mapWidth: 16, mapHeight: 12))
        var nested = UltraHDRContainer.assemble(primary: try JPEGEncoder(quality: 90).encode(Self.image()), gainMap: inner, metadata: Self.metadata)
        nested = UltraHDRContainer.assemble(primary: nested, gainMap: inner, metadata: Self.metadata)
        let fromNested = try JPEGDecoder().decode(nested, options: Self.keep())
        #expect(fromNested.gainMap?.width == 32 && fromNested.gainMap?.height == 24)

        // Two maps in the index: the first is used.
        func withISO(_ jpeg: Data) -> [UInt8] {
            let payload = ISOGainMapMetadata.namespace + ISOGainMapMetadata.payload(Self.metadata)
            return [0xFF, 0xD8, 0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload + [UInt8](jpeg.dropFirst(2))
        }
        func grey(_ width: Int, _ height: Int, _ value: UInt8) throws -> Data {
            try JPEGEncoder(quality: 90).encode(
                Image(
                    width: width, height: height, frames: [Image.Frame(pixels: [UInt8](repeating: value, count: width * height * 4))],
                    metadata: Self.image().metadata))
        }
        let first = withISO(try grey(32, 24, 200)), second = withISO(try grey(16, 12, 50))
        var base = Self.image()
        base.gainMap = nil
        let plainPrimary = [UInt8](try JPEGEncoder(quality: 90).encode(base))
        let indexSegment = 4 + MultiPictureIndex.payloadSize(entries: 3)
        let primarySize = plainPrimary.count + indexSegment
        let tiff = 2 + 4 + 4
        let index = MultiPictureIndex(entries: [
            .init(size: primarySize, offset: 0), .init(size: first.count, offset: primarySize - tiff),
            .init(size: second.count, offset: primarySize + first.count - tiff),
        ])
        let payload = index.payload()
        let two =
            [0xFF, 0xD8, 0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload + plainPrimary.dropFirst(2) + first + second
        let fromTwo = try JPEGDecoder().decode(Data(two), options: Self.keep())
        #expect(fromTwo.gainMap?.width == 32 && fromTwo.gainMap?.pixels.first == 200)
    }

    @Test("gain-map metadata with NaN, infinities, zero denominators, a backward map or a future version is refused")
    func hostileMetadata() {
        func iso(_ bytes: [UInt8]) -> GainMapMetadata? { ISOGainMapMetadata.read(bytes) }
        let good = ISOGainMapMetadata.payload(Self.metadata)
        #expect(iso(good) == Self.metadata)
        for cut in [0, 3, 5, 9, good.count - 1] { #expect(iso(Array(good.prefix(cut))) == nil, "cut at \(cut)") }
        var zeroDenominator = good
        for index in 5..<9 { zeroDenominator[index] = 0 }
        #expect(iso(zeroDenominator) == nil)
        var backward = good
        backward[4] |= 0x04
        #expect(iso(backward) == nil)
        var future = good
        future[1] = 1
        #expect(iso(future) == nil)
        #expect(iso(ISOGainMapMetadata.versionStamp) == nil, "the primary's stamp holds no numbers")

        func xmp(_ attributes: String) -> GainMapMetadata? {
            GainMapXMP.read(
                Data("<x:xmpmeta><rdf:Description xmlns:hdrgm=\"http://ns.adobe.com/hdr-gain-map/1.0/\" hdrgm:Version=\"1.0\" \(attributes)/></x:xmpmeta>".utf8)
            )
        }
        #expect(xmp("hdrgm:GainMapMax=\"2\" hdrgm:HDRCapacityMax=\"2\"") != nil)
        #expect(xmp("hdrgm:GainMapMax=\"NaN\" hdrgm:HDRCapacityMax=\"2\"") == nil)
        #expect(xmp("hdrgm:GainMapMax=\"inf\" hdrgm:HDRCapacityMax=\"2\"") == nil)
        #expect(xmp("hdrgm:GainMapMax=\"1e400\" hdrgm:HDRCapacityMax=\"2\"") == nil)
        #expect(xmp("hdrgm:GainMapMax=\"2\" hdrgm:HDRCapacityMax=\"2\" hdrgm:Gamma=\"-1\"") == nil)
        #expect(xmp("hdrgm:GainMapMax=\"2\" hdrgm:HDRCapacityMax=\"2\" hdrgm:BaseRenditionIsHDR=\"True\"") == nil)
        #expect(xmp("hdrgm:GainMapMax=\"2\"") == nil, "HDRCapacityMax is required")
        #expect(xmp("hdrgm:GainMapMax=\"2\" hdrgm:HDRCapacityMax=\"2\" hdrgm:GainMapMin=\"x\"") == nil)
        #expect(
            GainMapXMP.readApple(Data("<x urn:com:apple:photo:2020:aux:hdrgainmap><HDRGainMap:HDRGainMapHeadroom>nan</HDRGainMap:HDRGainMapHeadroom>".utf8))
                == nil)
        #expect(MultiPictureIndex(tiff: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }

    @Test("a real iOS 17 photo's Apple gain map (libultrahdr's test file): found, headroom 4.53 stops as libvips reads it, kept through a thumbnail")
    func appleSample() throws {
        let data = try Data(contentsOf: Samples.url("ultrahdr/apple-gainmap-ios17.jpg"))
        let image = try JPEGDecoder().decode(data, options: Self.keep())
        let map = try #require(image.gainMap)
        #expect(image.metadata.sourceGainMap?.metadataSource == "apple")
        #expect(map.width == 192 && map.height == 256 && map.channelCount == 1)
        // libvips 8.18 reports max content boost and HDR capacity 23.147476 for this file.
        #expect(abs(map.metadata.maxBoost - 23.147476) < 1e-3 && abs(map.metadata.hdrCapacityMax - 23.147476) < 1e-3)
        let thumbnail = try ImageProcessors.Resize(size: PixelSize(width: 96, height: 96)).process(image)
        let reread = try JPEGDecoder().decode(try JPEGEncoder().encode(thumbnail), options: Self.keep())
        #expect(reread.width == 72 && reread.height == 96 && reread.gainMap?.width == 36 && reread.gainMap?.height == 48)
    }

    @Test("an earlier iPhone photo whose headroom is only in Apple's EXIF maker note: 3 stops (8×), as libvips reads it")
    func appleMakerNoteSample() throws {
        let data = try Data(contentsOf: Samples.url("ultrahdr/apple-gainmap-ios16.jpg"))
        let image = try JPEGDecoder().decode(data, options: Self.keep())
        let map = try #require(image.gainMap)
        #expect(image.metadata.sourceGainMap?.metadataSource == "apple" && map.width == 192 && map.height == 256)
        // libvips 8.18 reports max content boost and HDR capacity 8.0 for this file.
        #expect(abs(map.metadata.maxBoost - 8) < 1e-9 && abs(map.metadata.hdrCapacityMax - 8) < 1e-9)
        // The maker note read from a hostile block: cut anywhere, never a trap, never a headroom.
        let exif = try #require(data.withUnsafeBytes { JPEGMarkers($0).exif($0) })
        #expect(AppleMakerNote.headroom(exif: exif) == 3)
        for cut in stride(from: 0, to: exif.count, by: 97) { _ = AppleMakerNote.headroom(exif: exif.prefix(cut)) }
        #expect(AppleMakerNote.headroom(exif: Data("Exif\0\0MM\0*\0\0\0\u{8}".utf8)) == nil)
    }
}

/// The written rule for steps that are not geometric: tone steps keep the map, content put over the
/// picture (a background showing through, a watermark) fades it to no boost.
@Suite("HDR gain maps: tone and overlay rules")
struct GainMapToneRuleTests {
    @Test("a flatten fades the map to no boost where the background shows, and keeps it where the picture was opaque")
    func flatten() throws {
        var image = GainMapHostileTests.image()
        // The left half transparent: a flatten shows the background there.
        for y in 0..<image.height {
            for x in 0..<(image.width / 2) { image.frames[0].pixels[(y * image.width + x) * 4 + 3] = 0 }
        }
        image.metadata.hasAlpha = true
        let map = try #require(image.gainMap)
        let flattened = try ImageProcessors.Flatten(background: .white).process(image)
        let result = try #require(flattened.gainMap)
        let none = map.noBoostValue.0
        for y in 0..<result.height {
            #expect(result.pixels[(y * result.width + 2) * 4] == none, "row \(y): the background is not boosted")
            #expect(result.pixels[(y * result.width + 29) * 4] == map.pixels[(y * map.width + 29) * 4], "row \(y): the picture keeps its boost")
        }
        for step in [try ImageProcessors.GaussianBlur(radius: 2), ImageProcessors.Grayscale(), try ImageProcessors.Sharpen(sigma: 1)] as [any ImageProcessing] {
            #expect(try step.process(image).gainMap?.pixels == map.pixels, "\(step.identifier) keeps the map")
        }
    }
}
