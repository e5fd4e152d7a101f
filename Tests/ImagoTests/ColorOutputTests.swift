import Foundation
@testable import Imago
import ImagoServer
import ImagoTestSupport
import Testing

/// Colour and metadata on the way out: kept profiles embedded by every encoder and read back byte
/// for byte by exiftool, profiles over 64 KB across JPEG markers, copyright and all metadata kept
/// when asked (never GPS with the copyright alone); and through the pipeline, `imago convert`,
/// `imago info` and `imago serve`.
@Suite("Colour: kept profiles, metadata, pipeline, CLI and server", .timeLimit(.minutes(6)))
struct ColorOutputTests {
    typealias Reference = ColorReference

    static func keeping(_ metadata: DecodingOptions.MetadataHandling = .strip) -> DecodingOptions {
        var options = DecodingOptions()
        options.colorProfileHandling = .keep
        options.metadataHandling = metadata
        return options
    }

    /// The encoders Imago has, with the extension exiftool reads each by.
    static var encoders: [(any ImageEncoding, String)] {
        var encoders: [(any ImageEncoding, String)] = [(JPEGEncoder(quality: 95), "jpg"), (PNGEncoder(), "png"), (WebPEncoder(quality: 95), "webp")]
        #if AVIF
            encoders.append((AVIFEncoder(quality: 90, speed: 10), "avif"))
        #endif
        return encoders
    }

    @Test("a kept profile is embedded by every encoder and read back byte for byte by exiftool and by Imago; one over 64 KB spans JPEG markers")
    func keptProfileRoundTrip() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let adobe = try await Reference.tagged(Reference.adobeRGB, "adobe.png", in: directory)
        let (_, large) = try await Reference.lcmsProfiles(in: directory)
        let largeBytes = try Data(contentsOf: large)
        #expect(largeBytes.count > 65_519 * 3, "a profile that takes four APP2 segments")
        let largeTagged = directory.appendingPathComponent("large.png")
        try await runTool(Reference.convert, [try Reference.source(in: directory).path, "-profile", large.path, largeTagged.path])
        for source in [adobe, largeTagged] {
            let image = try PNGDecoder().decode(try Data(contentsOf: source), options: Self.keeping())
            let profile = try #require(image.metadata.colorProfile)
            for (encoder, ext) in Self.encoders {
                let output = directory.appendingPathComponent("kept-\(source.lastPathComponent).\(ext)")
                try encoder.encode(image).write(to: output)
                await #expect(try Reference.exiftoolProfile(output) == profile.data, "\(ext) \(source.lastPathComponent)")
                let again = try DecoderRegistry.standard().decode(try Data(contentsOf: output), options: Self.keeping())
                #expect(again.metadata.colorProfile == profile, "\(ext) read back by Imago")
            }
        }
        // Converted to sRGB (the default), the output carries no profile.
        let converted = try PNGDecoder().decode(try Data(contentsOf: adobe), options: DecodingOptions())
        for (encoder, ext) in Self.encoders {
            let output = directory.appendingPathComponent("converted.\(ext)")
            try encoder.encode(converted).write(to: output)
            await #expect(try Reference.exiftoolProfile(output).isEmpty, "\(ext)")
        }
    }

    @Test("metadata: none by default; the copyright and author alone (no GPS, no camera); all of it with the orientation reset to 1")
    func metadataKept() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("photo.jpg")
        try await runTool(Reference.convert, [try Reference.source(in: directory).path, photo.path])
        try await runTool(
            "/usr/bin/exiftool",
            [
                "-q", "-overwrite_original", "-Copyright=(c) Jane Doe", "-Artist=Jane Doe", "-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-Make=Canon",
                "-Orientation#=6", "-XMP-dc:Rights=(c) Jane XMP", "-XMP-dc:Creator=Jane", "-XMP-tiff:Orientation#=6", photo.path,
            ])
        func tags(_ file: URL) async throws -> [String: String] {
            let output = try await runProcess(
                URL(fileURLWithPath: "/usr/bin/exiftool"),
                ["-s", "-n", "-Copyright", "-Artist", "-GPSLatitude", "-Make", "-Rights", "-Creator", "-Orientation", file.path]
            ).output
            var found: [String: String] = [:]
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2 { found[parts[0]] = parts[1] }
            }
            return found
        }
        let data = try Data(contentsOf: photo)
        for (encoder, ext) in Self.encoders {
            let none = directory.appendingPathComponent("none.\(ext)")
            try encoder.encode(try JPEGDecoder().decode(data, options: DecodingOptions())).write(to: none)
            await #expect(try tags(none).isEmpty, "\(ext): no metadata by default")
            let copyright = directory.appendingPathComponent("copyright.\(ext)")
            try encoder.encode(try JPEGDecoder().decode(data, options: Self.keeping(.copyright))).write(to: copyright)
            await #expect(
                try tags(copyright) == ["Copyright": "(c) Jane Doe", "Artist": "Jane Doe", "Rights": "(c) Jane XMP", "Creator": "Jane"],
                "\(ext): the copyright alone")
            let all = directory.appendingPathComponent("all.\(ext)")
            try encoder.encode(try JPEGDecoder().decode(data, options: Self.keeping(.all))).write(to: all)
            let allTags = try await tags(all)
            #expect(allTags["GPSLatitude"] == "48.85" && allTags["Make"] == "Canon" && allTags["Copyright"] == "(c) Jane Doe", "\(ext): all")
            #expect(allTags["Orientation"] == "1", "\(ext): the pixels were turned upright")
        }
    }

    @Test("the pipeline converts to sRGB, a thumbnail after its resize, and keeps the profile when the request asks")
    func pipeline() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let adobe = try await Reference.tagged(Reference.adobeRGB, "adobe.jpg", in: directory, extra: ["-sampling-factor", "1x1", "-quality", "98"])
        let reference = try await Reference.magickSRGB(adobe, in: directory)
        let pipeline = ImagePipeline()
        let image = try await pipeline.image(for: adobe)
        Reference.expectClose(image, reference, "pipeline")
        // A thumbnail is converted after its reduced decode and resize: as ImageMagick converts the
        // same thumbnail kept in its profile.
        let thumbnail = ImageRequest.Thumbnail(size: PixelSize(width: 40, height: 40))
        let small = try await pipeline.image(for: ImageRequest(url: adobe, thumbnail: thumbnail))
        #expect(small.metadata.colorProfile == nil)
        let kept = try await pipeline.image(for: ImageRequest(url: adobe, options: [.keepsColorProfile], thumbnail: thumbnail))
        #expect(kept.metadata.colorProfile?.data == (try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB))))
        let keptFile = directory.appendingPathComponent("kept-thumbnail.png")
        try PNGEncoder().encode(kept).write(to: keptFile)
        let referenceSmall = try await Reference.magickSRGB(keptFile, in: directory)
        Reference.expectClose(small, referenceSmall, "thumbnail")
        Reference.expectFar(kept, referenceSmall, "kept")
        // Both variants were made from one transfer and are cached under their own keys.
        let again = try await pipeline.image(for: ImageRequest(url: adobe, options: [.keepsColorProfile], thumbnail: thumbnail))
        #expect(again.metadata.colorProfile != nil && again.pixels == kept.pixels)
    }

    @Test("imago convert converts to sRGB; --keep-color-profile keeps pixels and profile; imago info tells the profile and metadata")
    func commandLine() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let adobe = try await Reference.tagged(Reference.adobeRGB, "adobe.png", in: directory)
        let reference = try await Reference.magickSRGB(adobe, in: directory)
        let converted = directory.appendingPathComponent("converted.png"), kept = directory.appendingPathComponent("kept.webp")
        #expect(try await imago(["convert", adobe.path, converted.path]).status == 0)
        Reference.expectClose(try PNGDecoder().decode(try Data(contentsOf: converted), options: DecodingOptions()), reference, "imago convert")
        await #expect(try Reference.exiftoolProfile(converted).isEmpty)
        #expect(try await imago(["convert", "--keep-color-profile", "--lossless", adobe.path, kept.path]).status == 0)
        await #expect(try Reference.exiftoolProfile(kept) == (try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB))))
        let keptImage = try WebPDecoder().decode(try Data(contentsOf: kept), options: Self.keeping())
        let stored = try PNGDecoder().decode(try Data(contentsOf: adobe), options: Self.keeping())
        #expect(keptImage.pixels == stored.pixels, "the source's pixels, unconverted")

        struct Info: Decodable {
            struct Colour: Decodable { var kind: String?, profileBytes: Int? }
            struct Metadata: Decodable { var exif: Bool, xmp: Bool, gps: Bool }
            var status: String, format: String?, width: Int?, bitsPerSample: Int?, colour: Colour?, metadata: Metadata?
        }
        let run = try await imago(["info", "--json", adobe.path, converted.path, directory.appendingPathComponent("missing.png").path])
        #expect(run.status == 1)
        let infos = try JSONDecoder().decode([Info].self, from: run.output)
        #expect(infos.count == 3)
        #expect(infos[0].format == "png" && infos[0].width == 160 && infos[0].bitsPerSample == 8)
        let profileSize = try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB)).count
        #expect(infos[0].colour?.kind == "rgb" && infos[0].colour?.profileBytes == profileSize)
        #expect(infos[1].colour?.kind == nil && infos[1].metadata?.exif == false)
        #expect(infos[2].status == "error")
        let text = try await imago(["info", adobe.path])
        #expect(String(decoding: text.output, as: UTF8.self).contains("colour: RGB, \"Compatible with Adobe RGB (1998)\""))
    }

    @Test("imago serve converts to sRGB and strips the profile by default; scp:0 keeps it; sm and kcr keep metadata as imgproxy does")
    func server() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let adobe = try await Reference.tagged(Reference.adobeRGB, "adobe.png", in: directory)
        try await runTool("/usr/bin/exiftool", ["-q", "-overwrite_original", "-Copyright=(c) Jane Doe", "-GPSLatitude=48.85", "-GPSLatitudeRef=N", adobe.path])
        let reference = try await Reference.magickSRGB(adobe, in: directory)
        let profile = try Data(contentsOf: URL(fileURLWithPath: Reference.adobeRGB))
        try await withServer { server in
            let source = server.origin.serve(try Data(contentsOf: adobe), at: "/adobe.png").absoluteString
            func fetch(_ options: [String]) async throws -> URL {
                let answer = try await server.get(ServerHarness.path(source, options, extension: "png"))
                #expect(answer.status == 200, "\(options)")
                let file = directory.appendingPathComponent("served-\(options.joined(separator: "-")).png")
                try answer.body.write(to: file)
                return file
            }
            let plain = try await fetch([])
            Reference.expectClose(try PNGDecoder().decode(try Data(contentsOf: plain), options: DecodingOptions()), reference, "served")
            await #expect(try Reference.exiftoolProfile(plain).isEmpty)
            let copyright = try await runProcess(URL(fileURLWithPath: "/usr/bin/exiftool"), ["-s3", "-Copyright", "-GPSLatitude", plain.path]).output
            #expect(String(decoding: copyright, as: UTF8.self) == "(c) Jane Doe\n", "keep_copyright by default, no GPS")
            let kept = try await fetch(["scp:0"])
            await #expect(try Reference.exiftoolProfile(kept) == profile)
            let all = try await fetch(["sm:false"])
            let allTags = try await runProcess(URL(fileURLWithPath: "/usr/bin/exiftool"), ["-s3", "-n", "-GPSLatitude", all.path]).output
            #expect(String(decoding: allTags, as: UTF8.self) == "48.85\n")
            let none = try await fetch(["kcr:0"])
            #expect(try await runProcess(URL(fileURLWithPath: "/usr/bin/exiftool"), ["-s3", "-Copyright", none.path]).output.isEmpty)
            #expect(try await server.get(ServerHarness.path(source, ["scp:maybe"])).status == 400)
        }
    }
}
