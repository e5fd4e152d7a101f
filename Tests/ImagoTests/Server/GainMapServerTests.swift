import Foundation
import Imago
import Testing

@testable import ImagoServer

/// HDR gain maps through `imago serve` (imgproxy and thumbor URLs, `/info`) and the CLI
/// (`convert`, `thumbnail`, `info`): kept in JPEG answers by default and moved by every plan step,
/// dropped when asked, never decoded for a format that cannot carry one.
@Suite("HDR gain maps: server and CLI")
struct GainMapServerTests {
    static func keep() -> DecodingOptions {
        var options = DecodingOptions()
        options.gainMapHandling = .keep
        return options
    }

    /// The answer decoded with its gain map kept; the map's alignment with the picture.
    static func decoded(_ body: Data) throws -> (image: Image, alignment: Double?) {
        let image = try JPEGDecoder().decode(body, options: keep())
        return (image, image.gainMap == nil ? nil : try GainMapTests.alignment(image))
    }

    @Test("imgproxy URLs: resize, crop, rotate, flip, extend and padding keep the map on the picture; preserve_hdr:0, the setting or a WebP answer drop it")
    func imgproxy() async throws {
        let source = try JPEGEncoder(quality: 95).encode(GainMapHostileTests.image(width: 320, height: 240, mapWidth: 160, mapHeight: 120))
        try await withServer { server in
            let url = server.origin.serve(source, at: "/hdr.jpg").absoluteString
            for options in [
                ["rs:fit:100:100"], ["c:200:150:nowe"], ["rot:90", "rs:fill:90:120"], ["fl:1:0"], ["rs:fit:300:300", "ex:1", "bg:000"],
                ["pd:10:20:30:40", "bg:000"], ["rs:fill:120:120:1:1", "g:ce"],
            ] {
                let answer = try await server.get(ServerHarness.path(url, options, extension: "jpg"))
                #expect(answer.status == 200 && answer.header("Content-Type") == "image/jpeg", "\(options)")
                let (image, alignment) = try Self.decoded(answer.body)
                #expect(image.gainMap != nil, "\(options) keeps the map")
                #expect((alignment ?? 0) >= 0.85, "\(options): \(alignment ?? 0)")
            }
            for (options, ext) in [(["rs:fit:100:100", "ph:0"], "jpg"), (["rs:fit:100:100"], "webp"), (["rs:fit:100:100"], "png")] {
                let answer = try await server.get(ServerHarness.path(url, options, extension: ext))
                #expect(answer.status == 200)
                if ext == "jpg" {
                    let kept = try Self.decoded(answer.body).image.gainMap != nil
                    #expect(!kept, "\(options) drops the map")
                } else {
                    #expect(try DecoderRegistry.standard().decode(answer.body).width == 100)
                }
            }
        }
        try await withServer({ $0.output.keepsGainMap = false }) { server in
            let url = server.origin.serve(source, at: "/hdr.jpg").absoluteString
            let dropped = try Self.decoded(try await server.get(ServerHarness.path(url, ["rs:fit:100:100"], extension: "jpg")).body).image.gainMap != nil
            #expect(!dropped, "--keep-hdr false drops it")
            let asked = try Self.decoded(try await server.get(ServerHarness.path(url, ["rs:fit:100:100", "ph:1"], extension: "jpg")).body).image
            #expect(asked.gainMap != nil, "preserve_hdr:1 keeps it all the same")
        }
    }

    @Test("thumbor URLs keep the map through crop, fit and flips; format(webp) drops it; /info reports it")
    func thumborAndInfo() async throws {
        let source = try JPEGEncoder(quality: 95).encode(GainMapHostileTests.image(width: 320, height: 240, mapWidth: 160, mapHeight: 120))
        try await withServer({ $0.dialect = .thumbor }) { server in
            let photo = server.origin.serve(source, at: "/hdr.jpg")
            let host = photo.host! + ":" + String(photo.port!)
            for transform in ["100x0", "-120x90", "10x20:300x200/100x0", "fit-in/90x90", "150x150/filters:fill(black)"] {
                let answer = try await server.get("/unsafe/\(transform)/\(host)/hdr.jpg")
                #expect(answer.status == 200 && answer.header("Content-Type") == "image/jpeg", "\(transform)")
                let (image, alignment) = try Self.decoded(answer.body)
                #expect(image.gainMap != nil && (alignment ?? 0) >= 0.85, "\(transform): \(alignment ?? 0)")
            }
            let webp = try await server.get("/unsafe/100x0/filters:format(webp)/\(host)/hdr.jpg")
            #expect(webp.status == 200 && webp.header("Content-Type") == "image/webp")
        }
        try await withServer { server in
            let url = server.origin.serve(source, at: "/hdr.jpg").absoluteString
            let facts = try ImageInfoTests.json(try await server.get("/info" + ServerHarness.path(url)).body)
            let map = try #require(facts["gain_map"] as? [String: Any])
            #expect(map["width"] as? Int == 160 && map["height"] as? Int == 120 && map["channels"] as? Int == 1 && map["metadata"] as? String == "iso21496")
            #expect(abs((map["headroom"] as? Double ?? 0) - 4) < 1e-6 && abs((map["max_boost"] as? Double ?? 0) - 4) < 1e-6)
        }
    }

    @Test("imago thumbnail and convert keep the map by default (libvips finds it), drop it with --hdr drop or for PNG; imago info --json reports it")
    func commandLine() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("hdr.jpg")
        try JPEGEncoder(quality: 95).encode(GainMapHostileTests.image(width: 320, height: 240, mapWidth: 160, mapHeight: 120)).write(to: source)
        let kept = directory.appendingPathComponent("kept"), dropped = directory.appendingPathComponent("dropped")
        #expect(try await imago(["thumbnail", source.path, "--size", "100x100", "--out", kept.path]).status == 0)
        #expect(try await imago(["thumbnail", source.path, "--size", "100x100", "--out", dropped.path, "--hdr", "drop"]).status == 0)
        let thumbnail = try Data(contentsOf: kept.appendingPathComponent("hdr.jpg"))
        let (image, alignment) = try Self.decoded(thumbnail)
        #expect(image.width == 100 && image.gainMap?.width == 50 && (alignment ?? 0) >= 0.85)
        let droppedHasMap = try Self.decoded(try Data(contentsOf: dropped.appendingPathComponent("hdr.jpg"))).image.gainMap != nil
        #expect(!droppedHasMap)
        if UltraHDRReference.isInstalled {
            #expect(try await UltraHDRReference.facts(thumbnail, in: directory).gainMap?.width == 50, "libvips finds the CLI's map")
        }

        let converted = directory.appendingPathComponent("converted.jpg"), png = directory.appendingPathComponent("converted.png")
        #expect(try await imago(["convert", source.path, converted.path]).status == 0)
        #expect(try await imago(["convert", source.path, png.path]).status == 0)
        #expect(try Self.decoded(try Data(contentsOf: converted)).image.gainMap?.width == 160)
        #expect(try PNGDecoder().decode(try Data(contentsOf: png), options: DecodingOptions()).width == 320)

        let info = try await imago(["info", "--json", source.path])
        let facts = try #require((try JSONSerialization.jsonObject(with: info.output) as? [[String: Any]])?.first)
        let map = try #require(facts["gainMap"] as? [String: Any])
        #expect(map["width"] as? Int == 160 && map["channels"] as? Int == 1 && map["metadata"] as? String == "iso21496")
        #expect(abs((map["headroom"] as? Double ?? 0) - 4) < 1e-6)
        let text = String(decoding: try await imago(["info", source.path]).output, as: UTF8.self)
        #expect(text.contains("HDR gain map: 160×120 grey JPEG (ISO 21496-1), boosts up to 4.00×"))
    }
}

@Suite("HDR gain maps: watermarks")
struct GainMapWatermarkTests {
    @Test("a watermark's footprint gets no boost, in proportion to its alpha; the rest of the map is untouched")
    func watermark() throws {
        let image = GainMapHostileTests.image()
        let map = try #require(image.gainMap)
        // An opaque 16×16 mark over the boosted block (top right), a half-transparent one bottom left.
        let opaque = [UInt8](repeating: 255, count: 16 * 16 * 4)
        var half = opaque
        for index in stride(from: 3, to: half.count, by: 4) { half[index] = 128 }
        let marked = FramePixels.unboosted(
            FramePixels.unboosted(image, under: opaque, width: 16, height: 16, at: [(x: 40, y: 4)]), under: half, width: 16, height: 16, at: [(x: 0, y: 32)])
        let result = try #require(marked.gainMap)
        let none = Int(map.noBoostValue.0)
        func value(_ map: GainMap, _ x: Int, _ y: Int) -> Int { Int(map.pixels[(y * map.width + x) * 4]) }
        #expect(value(result, 24, 4) == none && value(map, 24, 4) == 240, "under the opaque mark: no boost")
        let halfway = (value(map, 4, 20) + none) / 2
        #expect(abs(value(result, 4, 20) - halfway) <= 1, "under the half-transparent mark: halfway")
        #expect(value(result, 16, 8) == value(map, 16, 8) && value(result, 30, 2) == value(map, 30, 2), "elsewhere: untouched")
    }
}
