import AsyncHTTPClient
import Foundation
import Glibc
import Imago
import NIOCore
import Testing

@testable import ImagoServer

/// The same thumbor URLs sent to thumbor 7.8 itself and to `imago serve --dialect thumbor`, over
/// the same folder of images (its file loader, the same key): the same status, format and size,
/// and pixels within a stated tolerance. Runs when `IMAGO_THUMBOR` names thumbor's executable
/// (`make test-thumbor` sets it from the bench venv); `meta/` JSON compared in its numbers.
@Suite("imago serve as thumbor, against thumbor 7.8", .serialized, .enabled(if: ThumborPeer.executable != nil))
struct ThumborParityTests {
    /// Mean absolute difference per channel allowed: resamplers and JPEG encoders differ (JPEG
    /// answers also carry thumbor's dropped alpha); a crop off by two pixels on the 8-pixel
    /// checkerboard is far above either (checked below on every coordinate answer).
    /// GIF answers are each resampler's output cut to 256 colours (thumbor resizes GIF frames
    /// nearest-neighbour, as Pillow does for palette images).
    static func tolerance(_ type: String?) -> Double {
        switch type {
        case "image/jpeg": 6
        case "image/gif": 4
        default: 2
        }
    }

    /// Every grammar element and every filter, alone and combined. "smart" has no detectors in a
    /// stock thumbor, so only its status, format and size are compared.
    static let urls: [String] = [
        "300x200/coords.png", "200x0/coords.png", "0x100/coords.png", "origx100/coords.png", "-300x-200/coords.png", "-0x-0/coords.png",
        "fit-in/100x100/coords.png", "full-fit-in/100x100/coords.png", "adaptive-fit-in/100x200/coords.png", "adaptive-full-fit-in/100x200/coords.png",
        "fit-in/500x500/coords.png", "50x40:250x200/100x80/coords.png", "50x40:250x200/coords.png", "left/top/150x150/coords.png",
        "right/bottom/150x150/coords.png", "center/middle/150x60/coords.png", "right/20x200/coords.png", "trim/border.png", "trim:bottom-right:20/border.png",
        "trim/30x30:150x110/border.png", "800x600/coords.png", "40x30/photo.jpg", "400x100/photo.jpg", "fit-in/120x120/alpha.png",
        "filters:brightness(30)/coords.png", "filters:brightness(-40)/photo.jpg", "filters:contrast(40)/coords.png", "filters:contrast(-30)/photo.jpg",
        "filters:rgb(10,-20,30)/coords.png", "filters:saturation(0.3)/photo.jpg", "filters:saturation(1.8)/coords.png",
        "filters:colorize(50,0,25,ff0000)/coords.png", "filters:equalize()/photo.jpg",
        "filters:curve([(0,0),(64,100),(255,255)],[(0,0),(255,200)],[(0,30),(255,255)],[(0,0),(128,100),(255,255)])/coords.png",
        "filters:convolution(1;2;1;2;4;2;1;2;1,3,true)/coords.png", "filters:convolution(-1;-1;-1;-1;8;-1;-1;-1;-1,3,false)/photo.jpg",
        "filters:noise(30,7)/coords.png", "filters:round_corner(20,255,0,0)/coords.png", "filters:round_corner(30|15,0,0,255)/photo.jpg",
        "filters:round_corner(25,0,0,0,1)/alpha.png", "filters:sharpen(2,1,true)/photo.jpg", "filters:sharpen(1.5,0.5,false)/coords.png",
        "filters:blur(3)/coords.png", "filters:blur(2,5)/photo.jpg", "filters:grayscale()/coords.png", "filters:rotate(90)/coords.png",
        "filters:rotate(270)/photo.jpg", "filters:rotate(45)/coords.png", "filters:proportion(0.5)/coords.png", "fit-in/400x200/filters:fill(red)/coords.png",
        "fit-in/300x300/filters:fill(00ff00)/photo.jpg", "fit-in/300x300/filters:fill(transparent)/alpha.png", "fit-in/300x200/filters:fill(auto)/photo.jpg",
        "fit-in/300x300/filters:fill(blur)/photo.jpg", "fit-in/300x300/filters:fill(blue,true)/alpha.png", "filters:background_color(blue)/alpha.png",
        "filters:background_color(ff8800)/alpha.png", "100x100/filters:format(webp)/coords.png", "100x100/filters:format(png)/photo.jpg",
        "100x100/filters:format(jpeg)/alpha.png", "filters:format(nope)/coords.png", "filters:quality(40)/photo.jpg", "filters:max_bytes(3000)/photo.jpg",
        "800x600/filters:no_upscale()/coords.png", "fit-in/800x600/filters:upscale()/coords.png", "100x200/filters:stretch()/coords.png",
        "100x100/filters:focal(20x20:60x60)/coords.png", "150x50/filters:focal(200x150:260x200)/coords.png", "filters:strip_exif():strip_icc()/photo.jpg",
        "filters:max_age(60)/coords.png", "filters:watermark(alpha.png,10,-10,50)/coords.png", "filters:watermark(alpha.png,center,center,0,50)/photo.jpg",
        "filters:watermark(alpha.png,repeat,repeat,30,20,20)/photo.jpg", "filters:watermark(alpha.png,-20p,10p,0)/coords.png",
        "filters:frame(frame.png)/coords.png", "filters:autojpg()/coords.png", "filters:nosuchfilter(1):brightness(10)/coords.png",
        "filters:brightness(abc)/coords.png", "200x100/filters:brightness(10):contrast(20):grayscale():round_corner(10,255,255,255)/photo.jpg",
        "-fit-in/100x100/coords.png", "debug/100x100/filters:focal(20x20:60x60)/coords.png", "smart/150x150/coords.png", "missing.png", "../etc/passwd",
        "video.gif", "100x0/video.gif", "60x60/video.gif", "anim.gif", "fit-in/80x80/anim.gif", "50x50/anim.gif", "-100x0/anim.gif",
        "filters:brightness(30)/video.gif", "filters:format(png)/anim.gif", "filters:format(gif)/coords.png",
    ]

    @Test("the same URLs give thumbor's status, format, size and pixels")
    func images() async throws {
        try await ThumborPeer.with { peer, server in
            try await Self.compare(Self.urls, peer, server)
        }
    }

    /// thumbor.conf's MAX_WIDTH/MAX_HEIGHT: the box asked for is clamped, and a source over the
    /// limits is normalised on load (its manual crop moved with it; `meta/` does not list that
    /// resize). The second file sets MAX_HEIGHT alone, under which thumbor's arithmetic leaves a
    /// landscape image as it is, and a short FILTERS list, whose other filters are skipped.
    @Test("thumbor.conf's MAX_WIDTH, MAX_HEIGHT and FILTERS, read by both from the same file")
    func limits() async throws {
        let paths = [
            "coords.png", "300x200/coords.png", "0x300/coords.png", "origx300/coords.png", "50x40:250x200/100x80/coords.png", "50x40:250x200/coords.png",
            "fit-in/500x500/coords.png", "-300x-200/coords.png", "trim/border.png", "photo.jpg", "40x30/photo.jpg", "anim.gif", "100x0/video.gif",
            "100x100/filters:focal(20x20:60x60)/coords.png", "800x600/filters:no_upscale()/coords.png", "filters:autojpg()/coords.png",
            "portrait.jpg", "100x100/portrait.jpg", "10x10:200x300/portrait.jpg",
        ]
        let meta = ["meta/300x200/coords.png", "meta/50x40:250x200/100x80/coords.png", "meta/coords.png"]
        try await ThumborPeer.with(settings: "MAX_WIDTH = 250\nMAX_HEIGHT = 220") { peer, server in
            try await Self.compare(paths, peer, server)
            try await Self.compareMeta(meta, peer, server)
        }
        let filters = ["filters:contrast(40):brightness(20)/coords.png", "filters:format(webp):quality(30)/photo.jpg", "filters:autojpg()/coords.png"]
        try await ThumborPeer.with(settings: "MAX_HEIGHT = 100\nFILTERS = ['thumbor.filters.brightness', 'thumbor.filters.format']") { peer, server in
            try await Self.compare(paths + filters, peer, server)
            try await Self.compareMeta(meta, peer, server)
        }
    }

    /// Sends each of `paths` to both; expects the same status, type, size, frames and pixels
    /// within ``tolerance(_:)``, and that the tolerance would see a crop two pixels off.
    static func compare(_ paths: [String], _ peer: ThumborPeer.Client, _ server: ServerHarness) async throws {
        var failures: [String] = []
        var report = ["url\tstatus\ttype\tsize\tmean difference"]
        for path in paths {
            let ours = try await server.get("/unsafe/" + path)
            let theirs = try await peer.get("/unsafe/" + path)
            let label = "\(path): thumbor \(theirs.status) \(theirs.header("Content-Type") ?? "-"), imago \(ours.status) \(ours.header("Content-Type") ?? "-")"
            guard ours.status == theirs.status else {
                failures.append(label)
                continue
            }
            guard theirs.status == 200 else {
                report.append("\(path)\t\(theirs.status)\t-\t-\t-")
                continue
            }
            guard ours.header("Content-Type") == theirs.header("Content-Type") else {
                failures.append(label)
                continue
            }
            let (a, b) = (try ThumborPeer.decode(ours.body), try ThumborPeer.decode(theirs.body))
            // thumbor 7.8's frame() reads its image mode through a pointer to a Python object
            // (`PyUnicode_AsUTF8String` cast to `char *`), so its padding and cells are not the
            // nine-patch's; Imago draws what the filter means: only the status and type compare.
            if path.contains("frame(") { continue }
            guard a.width == b.width, a.height == b.height else {
                failures.append(label + ": \(a.width)×\(a.height) against \(b.width)×\(b.height)")
                continue
            }
            guard a.frames.count == b.frames.count else {
                failures.append(label + ": \(a.frames.count) frames against \(b.frames.count)")
                continue
            }
            // smart/ has no detector in a stock thumbor; unseeded noise differs by design.
            let difference = path.contains("smart/") || path.contains("noise(") && !path.contains(",") ? nil : ThumborPeer.meanDifference(a, b)
            report.append(
                "\(path)\t200\t\(theirs.header("Content-Type") ?? "-")\t\(a.width)x\(a.height)\t" + (difference.map { String(format: "%.2f", $0) } ?? "-"))
            if let difference, difference > Self.tolerance(theirs.header("Content-Type")) {
                failures.append(label + String(format: ": mean difference %.2f", difference))
            }
            // The tolerance would catch a box two pixels off: the same answer shifted is well over it.
            if path.hasSuffix("coords.png"), !path.contains("filters:"), a.width > 8,
                ThumborPeer.meanDifference(a, b, shift: 2) <= Self.tolerance(theirs.header("Content-Type"))
            {
                failures.append(label + ": the tolerance would not see a crop two pixels off")
            }
        }
        if let file = ProcessInfo.processInfo.environment["IMAGO_PARITY_REPORT"] {
            // Each comparison adds its rows (make test-thumbor starts the file afresh).
            let previous = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            try (previous + report.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        }
        #expect(failures.isEmpty, Comment(rawValue: "\(failures.count) of \(paths.count) differ:\n" + failures.joined(separator: "\n")))
    }

    /// Sends each of `paths` (`meta/` URLs) to both; expects equal JSON.
    static func compareMeta(_ paths: [String], _ peer: ThumborPeer.Client, _ server: ServerHarness) async throws {
        for path in paths {
            let ours = try await server.get("/unsafe/" + path)
            let theirs = try await peer.get("/unsafe/" + path)
            #expect(ours.status == 200 && theirs.status == 200, "\(path)")
            #expect(ours.header("Content-Type") == "application/json", "\(path)")
            let a = try JSONSerialization.jsonObject(with: ours.body) as? NSDictionary
            let b = try JSONSerialization.jsonObject(with: theirs.body) as? NSDictionary
            #expect(
                a != nil && a == b,
                "\(path):\nimago   \(String(decoding: ours.body, as: UTF8.self))\nthumbor \(String(decoding: theirs.body, as: UTF8.self))")
        }
    }

    @Test("meta/ answers thumbor's JSON: the same source size, frames, operations, target and focal points")
    func meta() async throws {
        let paths = [
            "meta/300x200/coords.png", "meta/fit-in/-200x100/coords.png", "meta/50x40:250x200/100x80/coords.png", "meta/trim/border.png",
            "meta/100x100/filters:focal(20x20:60x60)/coords.png", "meta/200x100/filters:proportion(0.5)/photo.jpg", "meta/100x0/video.gif",
            "meta/adaptive-full-fit-in/100x200/coords.png", "meta/fit-in/80x80/anim.gif",
        ]
        try await ThumborPeer.with { peer, server in
            try await Self.compareMeta(paths, peer, server)
        }
    }

    /// thumbor's DETECTORS (faces, then features) on photos with faces and without: the same
    /// status and size, the crop window (from `meta/`) overlapping thumbor's by at least 0.9 of its
    /// area, and the focal points within 3 pixels, with their origins and weights. The pictures
    /// are scikit-image's (the peers' venv); thumbor reads its own copy of the cascade, Imago
    /// Debian's (the same file).
    @Test("smart/ with thumbor's face and feature detectors crops where thumbor does", .enabled(if: OpenCVReference.isInstalled))
    func smartDetectors() async throws {
        let settings = "DETECTORS = ['thumbor.detectors.face_detector', 'thumbor.detectors.feature_detector']"
        try await ThumborPeer.with(settings: settings, pictures: true) { peer, server in
            let shapes = ["150x150/smart", "300x100/smart", "100x300/smart", "60x90/smart"]
            let pictures = [
                "astronaut.png", "group.png", "camera.png", "coffee.png", "chelsea.png", "astronaut.jpg", "chelsea.jpg", "2004default.jpg", "rhythm.jpg",
            ]
            // Not coords.png: its checkerboard has hundreds of corners of equal strength but for
            // rounding, and which 20 OpenCV keeps is decided by its single-precision rounding alone.
            let paths = pictures.flatMap { picture in shapes.map { "\($0)/\(picture)" } }
            try await Self.compare(paths, peer, server)
            let answered = try await server.get("/unsafe/" + paths[0])
            #expect(answered.status == 200, "the pictures are there")
            var facesFound = 0
            for path in paths {
                let ours = try await server.get("/unsafe/meta/" + path)
                let theirs = try await peer.get("/unsafe/meta/" + path)
                #expect(
                    ours.status == 200 && theirs.status == 200,
                    "\(path): imago \(ours.status) \(String(decoding: ours.body, as: UTF8.self)), thumbor \(theirs.status)")
                guard ours.status == 200, theirs.status == 200 else { continue }
                let a = try #require(JSONSerialization.jsonObject(with: ours.body) as? [String: Any])["thumbor"] as? [String: Any]
                let b = try #require(JSONSerialization.jsonObject(with: theirs.body) as? [String: Any])["thumbor"] as? [String: Any]
                let ourPoints = (a?["focal_points"] as? [[String: Any]]) ?? [], theirPoints = (b?["focal_points"] as? [[String: Any]]) ?? []
                #expect(ourPoints.count == theirPoints.count, "\(path): imago \(ourPoints), thumbor \(theirPoints)")
                // OpenCV lists its boxes in the order its threads found them: each of thumbor's
                // points must be one of Imago's.
                for reference in theirPoints {
                    let matched = ourPoints.contains { mine in
                        ["x", "y", "width", "height"].allSatisfy { abs(((mine[$0] as? Double) ?? -99) - ((reference[$0] as? Double) ?? 99)) <= 3 }
                            && (mine["origin"] as? String) == (reference["origin"] as? String)
                    }
                    #expect(matched, "\(path): thumbor's \(reference) against imago's \(ourPoints)")
                }
                facesFound += theirPoints.filter { ($0["origin"] as? String) == "Face Detection" }.count
                func cropBox(_ meta: [String: Any]?) -> [Double]? {
                    let crop = ((meta?["operations"] as? [[String: Any]]) ?? []).first { ($0["type"] as? String) == "crop" }
                    return crop.map { c in ["left", "top", "right", "bottom"].map { (c[$0] as? Double) ?? 0 } }
                }
                let ourCrop = cropBox(a), theirCrop = cropBox(b)
                #expect((ourCrop == nil) == (theirCrop == nil), "\(path): imago \(String(describing: ourCrop)), thumbor \(String(describing: theirCrop))")
                if let p = ourCrop, let q = theirCrop {
                    let overlap = max(0, min(p[2], q[2]) - max(p[0], q[0])) * max(0, min(p[3], q[3]) - max(p[1], q[1]))
                    let area = (q[2] - q[0]) * (q[3] - q[1])
                    #expect(area > 0 && overlap / area >= 0.9, "\(path): imago \(p), thumbor \(q)")
                }
            }
            #expect(facesFound > 0, "thumbor found faces in the pictures at all")
        }
    }

    @Test("URLs signed by thumbor's own signer are answered; a changed byte, a missing signature or unsafe/ when refused are thumbor's 400")
    func signatures() async throws {
        let signed = try await ThumborPeer.sign(width: 120, height: 80, image: "coords.png")
        try await ThumborPeer.with(allowsUnsafe: false) { peer, server in
            let ours = try await server.get(signed), theirs = try await peer.get(signed)
            #expect(ours.status == 200 && theirs.status == 200)
            #expect(try ThumborPeer.decode(ours.body).width == 120)
            var bytes = Array(signed.utf8)
            bytes[3] = bytes[3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let changed = String(decoding: bytes, as: UTF8.self)
            for path in [changed, signed.replacingOccurrences(of: "120x80", with: "121x80"), "/unsafe/120x80/coords.png"] {
                let ours = try await server.get(path), theirs = try await peer.get(path)
                #expect(ours.status == 400 && theirs.status == 400, "\(path): imago \(ours.status), thumbor \(theirs.status)")
            }
        }
        #expect(
            ThumborSigner.signature(for: String(signed.split(separator: "/", maxSplits: 1)[1]), key: ThumborPeer.key) == String(signed.split(separator: "/")[0])
        )
    }
}

/// thumbor 7.8 on 127.0.0.1 over a folder of test images, beside a live `imago serve --dialect thumbor`.
enum ThumborPeer {
    static let key = "imago-thumbor-parity"
    static var executable: String? { ProcessInfo.processInfo.environment["IMAGO_THUMBOR"] }

    struct Client: Sendable {
        let base: String
        let client: HTTPClient
        func get(_ path: String) async throws -> ServerHarness.Answer {
            let response = try await client.execute(HTTPClientRequest(url: base + path), timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 64 << 20)
            return ServerHarness.Answer(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
        }
    }

    static func decode(_ data: Data) throws -> Image { try DecoderRegistry.standard().decode(data) }

    /// The mean absolute difference of the two images' RGBA bytes, `a` read `shift` pixels to the
    /// right of `b` (over the columns both have).
    static func meanDifference(_ a: Image, _ b: Image, shift: Int = 0) -> Double {
        let (x, y) = (a.frames[0].pixels, b.frames[0].pixels)
        var sum = 0, count = 0
        for row in 0..<a.height {
            for column in 0..<(a.width - shift) {
                let (i, j) = ((row * a.width + column + shift) * 4, (row * b.width + column) * 4)
                for c in 0..<4 { sum += abs(Int(x[i + c]) - Int(y[j + c])) }
                count += 4
            }
        }
        return Double(sum) / Double(max(1, count))
    }

    /// A path signed by libthumbor's `CryptoURL`, run in thumbor's own Python.
    static func sign(width: Int, height: Int, image: String) async throws -> String {
        let python = URL(fileURLWithPath: executable!).deletingLastPathComponent().appendingPathComponent("python")
        let script = "from libthumbor import CryptoURL; print(CryptoURL(key='\(key)').generate(width=\(width), height=\(height), image_url='\(image)'))"
        let result = try await runProcess(python, ["-c", script])
        return String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The test images: a coordinate image (gradients over an 8-pixel checkerboard, so any
    /// misplaced crop shows), one with a white border to trim, one with alpha, a photo, an animated
    /// GIF, and a nine-patch frame.
    static func makeImages(in folder: URL) async throws {
        func write(_ width: Int, _ height: Int, alpha: Bool, _ name: String, _ pixel: (Int, Int) -> (Int, Int, Int, Int)) throws {
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            for y in 0..<height {
                for x in 0..<width {
                    let (r, g, b, a) = pixel(x, y)
                    let at = (y * width + x) * 4
                    (pixels[at], pixels[at + 1], pixels[at + 2], pixels[at + 3]) = (UInt8(r), UInt8(g), UInt8(b), UInt8(a))
                }
            }
            let metadata = ImageMetadata(format: .png, originalWidth: width, originalHeight: height, orientationApplied: .up, hasAlpha: alpha)
            try PNGEncoder().encode(Image(width: width, height: height, frames: [.init(pixels: pixels)], metadata: metadata)).write(
                to: folder.appendingPathComponent(name))
        }
        try write(320, 240, alpha: false, "coords.png") { x, y in (x * 255 / 319, y * 255 / 239, ((x / 8 + y / 8) % 2) * 200 + 20, 255) }
        try write(200, 150, alpha: false, "border.png") { x, y in
            (20..<170).contains(x) && (30..<120).contains(y) ? (x % 256, 60, ((x / 8 + y / 8) % 2) * 255, 255) : (255, 255, 255, 255)
        }
        try write(100, 80, alpha: true, "alpha.png") { x, y in
            let distance = Double((x - 50) * (x - 50) + (y - 40) * (y - 40)).squareRoot()
            return (200, x * 2, 255 - y * 3, max(0, min(255, Int(255 - distance * 6))))
        }
        // A nine-patch: black stretch markers on the top and left edges, padding markers on the right and bottom.
        try write(12, 12, alpha: true, "frame.png") { x, y in
            let edge = x == 0 || y == 0 || x == 11 || y == 11
            if edge {
                let marker = ((x == 0 || x == 11) && (3...8).contains(y)) || ((y == 0 || y == 11) && (3...8).contains(x))
                return marker ? (0, 0, 0, 255) : (0, 0, 0, 0)
            }
            return (120, 60, 30, 255)
        }
        try Corpus.data("jpeg/video-001.jpeg").write(to: folder.appendingPathComponent("photo.jpg"))
        try Corpus.data("jpeg/go-turns-two-280x360.jpeg").write(to: folder.appendingPathComponent("portrait.jpg"))
        try Corpus.data("gif/video-001.gif").write(to: folder.appendingPathComponent("video.gif"))
        // Three frames of 150×103 (gifsicle), each with its own palette, looping for ever.
        let gif = Corpus.root.appendingPathComponent("gif")
        try await runTool(
            "/usr/bin/gifsicle",
            ["--loopcount=0", "-d", "20"] + ["video-001.gif", "video-001.5bpp.gif", "video-005.gray.gif"].map { gif.appendingPathComponent($0).path }
                + ["-o", folder.appendingPathComponent("anim.gif").path])
    }

    /// Starts thumbor and `imago serve` from the same thumbor.conf (file loader over the images,
    /// the key, `settings` added), so Imago reads thumbor's own file; stops thumbor after `body`.
    static func with(
        allowsUnsafe: Bool = true, settings: String = "", pictures: Bool = false, _ body: (Client, ServerHarness) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imago-thumbor-\(UUID().uuidString)")
        let images = folder.appendingPathComponent("images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await makeImages(in: images)
        if pictures {
            // Photos with faces and without (scikit-image's), and a group of twelve faces, as PNG.
            for name in ["astronaut", "camera", "coffee", "chelsea"] {
                _ = try await runProcess(ObjectStorePeer.python, [OpenCVReference.script, "colour", name, images.appendingPathComponent("\(name).png").path])
            }
            // And two as 4:2:0 JPEG (OpenCV's default writer), whose chroma Pillow upsamples smoothly.
            for name in ["astronaut", "chelsea"] {
                _ = try await runProcess(ObjectStorePeer.python, [OpenCVReference.script, "colour", name, images.appendingPathComponent("\(name).jpg").path])
            }
            // Two of Debian's wallpapers (ukui-wallpapers), 1200 wide: photos whose corners tip over
            // with a level of chroma.
            for name in ["2004default", "rhythm"] {
                _ = try await runProcess(
                    ObjectStorePeer.python,
                    [OpenCVReference.script, "photo", "/usr/share/backgrounds/\(name).jpg", images.appendingPathComponent("\(name).jpg").path, "1200"])
            }
            _ = try await runProcess(
                ObjectStorePeer.python, [OpenCVReference.script, "group", images.appendingPathComponent("group.png").path, "4", "3", "80"])
        }
        let port = Int.random(in: 20_000...40_000)
        let conf = folder.appendingPathComponent("thumbor.conf")
        try """
        LOADER = 'thumbor.loaders.file_loader'
        FILE_LOADER_ROOT_PATH = '\(images.path)'
        SECURITY_KEY = '\(key)'
        ALLOW_UNSAFE_URL = \(allowsUnsafe ? "True" : "False")
        STORAGE = 'thumbor.storages.no_storage'
        RESULT_STORAGE = None
        # autojpg is a filter of thumbor's package that its default FILTERS leave out.
        from thumbor.filters import BUILTIN_FILTERS
        FILTERS = BUILTIN_FILTERS + ['thumbor.filters.autojpg']
        \(settings)
        """.write(to: conf, atomically: true, encoding: .utf8)
        let values = try ServerSettings.values(arguments: ["--thumbor-config", conf.path], environment: [:])
        let fromFile = try ServerSettings.configuration(values).configuration
        #expect(fromFile.dialect == .thumbor && fromFile.localRoot?.path.trimmingCharacters(in: ["/"]) == images.path.trimmingCharacters(in: ["/"]))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable!)
        process.arguments = ["-p", String(port), "-i", "127.0.0.1", "-c", conf.path, "-l", "error"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            // SIGTERM makes thumbor wait for its IO loop to drain; nothing here needs that.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try await withServer({
            $0 = fromFile
            $0.allowsPrivateAddresses = true
        }) { server in
            let peer = Client(base: "http://127.0.0.1:\(port)", client: server.client)
            // thumbor takes a moment to import its modules: its health check answers once it listens.
            var ready = false
            for _ in 0..<300 where !ready {
                ready = (try? await peer.get("/healthcheck"))?.status == 200
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            try #require(ready, "thumbor did not start")
            try await body(peer, server)
        }
    }
}
