import Foundation
import Imago
import ImagoTestSupport
import Testing

/// SVG rendered by librsvg: as `rsvg-convert` renders it, at the size asked for, never reaching
/// outside the document, within the limits; and sanitised for passing through.
/// Serialized, rendering on GCD threads: the first text librsvg lays out makes fontconfig scan the
/// fonts, which under the sanitizers held the cooperative pool's threads for over a minute.
@Suite("SVG", .serialized)
struct SVGDecoderTests {
    static func render(_ data: Data, _ options: DecodingOptions = DecodingOptions()) async throws -> Image {
        try await offThePool { try SVGDecoder().decode(data, options: options) }
    }

    static let drawing = Data(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="64" height="32" viewBox="0 0 64 32">
          <defs><linearGradient id="g"><stop offset="0" stop-color="#ff0000"/><stop offset="1" stop-color="#0000ff"/></linearGradient></defs>
          <rect x="2" y="2" width="60" height="28" rx="6" fill="url(#g)"/>
          <circle cx="32" cy="16" r="9" fill="#ffffff" fill-opacity="0.5"/>
          <path d="M0 32 L64 0" stroke="#000000" stroke-width="0.5"/>
        </svg>
        """.utf8)

    /// `rsvg-convert`'s PNG of `svg`, at `size` when given.
    static func reference(_ svg: Data, width: Int? = nil, height: Int? = nil) async throws -> Image {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.svg"), output = directory.appendingPathComponent("out.png")
        try svg.write(to: input)
        var arguments = ["-f", "png", "-o", output.path]
        if let width { arguments += ["-w", "\(width)"] }
        if let height { arguments += ["-h", "\(height)"] }
        try await runTool("/usr/bin/rsvg-convert", arguments + [input.path])
        return try PNGDecoder().decode(try Data(contentsOf: output), options: DecodingOptions())
    }

    static func meanDifference(_ a: Image, _ b: Image) -> Double {
        Double(zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(a.pixels.count)
    }

    @Test("renders as rsvg-convert does, at its own size and at the size asked for (drawn there, not scaled)")
    func matchesRSVGConvert() async throws {
        let nominal = try await Self.render(Self.drawing)
        #expect((nominal.width, nominal.height, nominal.metadata.format) == (64, 32, .svg))
        #expect(Self.meanDifference(nominal, try await Self.reference(Self.drawing)) <= 1)
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 256, height: 256)
        options.targetMode = .fit
        let large = try await Self.render(Self.drawing, options)
        #expect((large.width, large.height) == (256, 128))
        #expect((large.metadata.originalWidth, large.metadata.originalHeight) == (64, 32))
        let reference = try await Self.reference(Self.drawing, width: 256, height: 128)
        #expect(Self.meanDifference(large, reference) <= 1)
        // Drawn at 256 wide: sharper than the 64-wide rendering scaled up.
        let scaled = try ImageProcessors.Resize(size: PixelSize(width: 256, height: 128), contentMode: .fill, upscale: true).process(nominal)
        #expect(Self.meanDifference(scaled, reference) > Self.meanDifference(large, reference) + 1)
    }

    @Test("a document with only a viewBox takes its size; with neither, 300 × 150")
    func sizes() async throws {
        let viewBox = try await Self.render(Data(#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 10"/>"#.utf8))
        #expect((viewBox.width, viewBox.height) == (40, 10))
        let bare = try await Self.render(Data(#"<svg xmlns="http://www.w3.org/2000/svg"/>"#.utf8))
        #expect((bare.width, bare.height) == (300, 150))
        #expect(DecoderRegistry.standard().decoder(for: Self.drawing) is SVGDecoder)
    }

    @Test("external images, entities, stylesheets and file references are never reached; the rest renders")
    func neverReachesOutside() async throws {
        let origin = try await TestOrigin.start()
        let served = origin.serve(try PNGEncoder().encode(Image.test(2, 2, [UInt8](repeating: 255, count: 16))), at: "/mark.png")
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("svg-file-ref-\(UUID().uuidString).png")
        try PNGEncoder().encode(Image.test(2, 2, [255, 0, 255, 255, 255, 0, 255, 255, 255, 0, 255, 255, 255, 0, 255, 255])).write(to: marker)
        defer { try? FileManager.default.removeItem(at: marker) }
        let svg = """
            <?xml version="1.0"?>
            <!DOCTYPE svg [ <!ENTITY remote SYSTEM "\(origin.url("/entity").absoluteString)"> <!ENTITY local SYSTEM "file:///etc/passwd"> ]>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="20" height="20">
              <style>@import url(\(origin.url("/style.css").absoluteString));</style>
              <rect width="20" height="20" fill="#00ff00"/>
              <image href="\(served.absoluteString)" width="20" height="20"/>
              <image xlink:href="\(marker.absoluteString)" width="20" height="20"/>
              <rect width="20" height="20" fill="url(\(origin.url("/paint.svg").absoluteString)#p)" opacity="0.5"/>
              <text y="10">&remote;&local;</text>
            </svg>
            """
        let image = try await Self.render(Data(svg.utf8))
        #expect(image.pixel(x: 10, y: 3) == (0, 255, 0, 255))  // neither image drew, the paint server fell back to none
        #expect(origin.log.requests.isEmpty)
        try await origin.shutdown()
        for name in ["svg-billion-laughs.svg", "svg-external-references.svg"] {
            let hostile = try await Self.render(try HostileFiles.data(name))
            #expect(hostile.width == 40 && hostile.pixel(x: 39, y: 1).a == 255, "\(name)")
        }
    }

    @Test("limits: too many elements and a declared size over the limits are refused before rendering")
    func limits() async throws {
        let many = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">" + String(repeating: "<g/>", count: 20_001) + "</svg>"
        #expect(throws: ImagoError.self) { try SVGDecoder().decode(Data(many.utf8), options: DecodingOptions()) }
        let huge = #"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>"#
        #expect {
            try SVGDecoder().decode(Data(huge.utf8), options: DecodingOptions())
        } throws: { error in
            (error as? ImagoError)?.code == .imageTooLarge(width: 100_000, height: 100_000, limit: .side(65_535))
        }
        var options = DecodingOptions()
        options.targetSize = PixelSize(width: 60_000, height: 60_000)
        #expect(throws: ImagoError.self) { try SVGDecoder().decode(Self.drawing, options: options) }
        await #expect(throws: ImagoError.self) { try await Self.render(Data("<svg><unclosed".utf8)) }
    }

    @Test("sanitising removes scripts, event handlers and outside references, keeps the drawing and its fragments")
    func sanitizes() async throws {
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10" onload="alert(1)">
              <script>alert(2)</script><foreignObject><iframe src="http://evil/"></iframe></foreignObject>
              <defs><rect id="r" width="10" height="10" fill="#ff0000"/></defs>
              <use xlink:href="#r" onclick="steal()"/>
              <a href="javascript:alert(3)"><circle r="2" style="fill: url(http://evil/x.svg#p)"/></a>
              <image href="http://evil/track.png"/><image href="data:image/png;base64,iVBORw0KGgo="/>
              <text>a &lt; b &amp; c</text>
            </svg>
            """
        let clean = String(decoding: try SVGSanitizer.sanitize(Data(svg.utf8)), as: UTF8.self)
        for gone in ["script", "alert", "onload", "onclick", "steal", "iframe", "foreignObject", "javascript", "evil"] {
            #expect(!clean.contains(gone), "\(gone) left in \(clean)")
        }
        for kept in ["xlink:href=\"#r\"", "data:image/png;base64", "a &lt; b &amp; c", "<rect", "fill=\"#ff0000\""] {
            #expect(clean.contains(kept), "\(kept) missing from \(clean)")
        }
        let image = try await Self.render(Data(clean.utf8))
        #expect(image.pixel(x: 8, y: 8) == (255, 0, 0, 255))
        let evasive = #"<svg xmlns="http://www.w3.org/2000/svg"><a href="&#106;avascript:x()">t</a><a href='&#x6A;ava&#10;script:y()'/></svg>"#
        let cleaned = String(decoding: try SVGSanitizer.sanitize(Data(evasive.utf8)), as: UTF8.self)
        #expect(!cleaned.contains("href") && !cleaned.contains("script"), "\(cleaned)")
        #expect(throws: ImagoError.self) { try SVGSanitizer.sanitize(Data("<html><svg/></html>".utf8)) }
        #expect(throws: ImagoError.self) { try SVGSanitizer.sanitize(Data("<svg><a></svg>".utf8)) }
    }
}
