import Foundation
import Imago
import Testing

@testable import ImagoServer

/// imgproxy Pro's face-aware crops in `imago serve`: `g:obj:face` (and `objw`) holds the faces the
/// server's face cascade finds, `IMGPROXY_SMART_CROP_FACE_DETECTION` puts them before saliency in
/// `g:sm`, and `IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP` decides a picture without them.
@Suite("imgproxy's face-aware crops")
struct ImgproxyFacesTests {
    static let cascade = OpenCVReference.cascade("haarcascades/haarcascade_frontalface_alt.xml")

    @Test("obj and objw gravities are read with their classes; faces answer face, all or no class; a bad objw is a 400's reason")
    func parsing() throws {
        func gravity(_ option: String) throws -> Gravity { try ProcessingOptions(parsing: [option]).gravity }
        #expect(try gravity("g:obj:face").wantsFaces)
        #expect(try gravity("g:obj").wantsFaces)
        #expect(try gravity("gravity:obj:cat:all").wantsFaces)
        #expect(try !gravity("g:obj:cat:dog").wantsFaces)
        #expect(try gravity("g:objw:face:2:cat:3").objectClasses == ["face", "cat"])
        #expect(try !gravity("g:objw:face:0:cat:3").wantsFaces)
        #expect(try !gravity("g:objw:face:0").wantsFaces)
        #expect(try ProcessingOptions(parsing: ["c:100:100:obj:face"]).crop?.gravity?.wantsFaces == true)
        #expect(throws: ServerError.self) { try gravity("g:objw:face") }
        #expect(throws: ServerError.self) { try gravity("g:objw:face:x") }
        // Extend and watermark gravities take no objects, as imgproxy's.
        #expect(throws: ServerError.self) { try ProcessingOptions(parsing: ["ex:1:obj"]) }
        // The classes are part of the key.
        #expect(try ProcessingOptions(parsing: ["g:obj:face"]).key != ProcessingOptions(parsing: ["g:obj:cat"]).key)
    }

    @Test("the settings are read from IMGPROXY_* and IMAGO_* variables; a cascade named, or needed, that cannot be read stops the service naming it")
    func settings() throws {
        let values = try ServerSettings.values(
            arguments: [],
            environment: [
                "IMGPROXY_SMART_CROP_FACE_DETECTION": "true", "IMGPROXY_OBJECT_DETECTION_FALLBACK_TO_SMART_CROP": "false",
                "IMAGO_FACE_CASCADE": "/x/faces.xml",
            ])
        let configuration = try ServerSettings.configuration(values).configuration
        #expect(configuration.imgproxySmartCropFindsFaces && !configuration.imgproxyObjectsFallBackToSmart && configuration.faceCascade == "/x/faces.xml")
        let named = #expect(throws: ServerError.self) { try ImageService(configuration: configuration) }
        #expect(named?.message.contains("/x/faces.xml") == true, "\(String(describing: named))")
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.xml")
        try Data("<opencv_storage><cascade><stageType>BOOST</stageType>".utf8).write(to: broken)
        var needed = ServerConfiguration()
        needed.faceCascade = broken.path
        let refused = #expect(throws: ServerError.self) { try ImageService(configuration: needed) }
        #expect(refused?.message.contains(broken.path) == true)
        // Without a cascade named and without face-aware smart crop, a missing default is no error.
        #expect(try ImgproxyDialect.faceSettings(ServerConfiguration()).smartCropFindsFaces == false)
    }

    /// The board's red and green pixels in `image`.
    static func boardPixels(_ image: Image) -> Int {
        let pixels = image.pixels
        return (0..<image.width * image.height).filter { abs(Int(pixels[$0 * 4]) - Int(pixels[$0 * 4 + 1])) > 100 }.count
    }

    /// The faces `cascade` finds in the answer to `options` on the face scene.
    static func facesIn(_ server: ServerHarness, _ url: URL, _ options: [String], detector: FaceDetector) async throws -> (Int, Image) {
        let answer = try await server.get(ServerHarness.path(url.absoluteString, options, extension: "png"))
        #expect(answer.status == 200, "\(options): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
        let image = try DecoderRegistry.standard().decode(answer.body)
        return await (offThePool { detector.faces(in: image) }.count, image)
    }

    @Test(
        "g:obj:face and face-aware g:sm hold the faces; plain g:sm takes the colourful board; no face falls back to smart or the centre",
        .enabled(if: OpenCVReference.isReferenceRun))
    func crops() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let picture = try await OpenCVReference.faceScene(in: directory)
        let scene = try PNGEncoder().encode(picture)
        // The same scene with the faces painted over: nothing for the cascade to find.
        var blank = picture.pixels
        for y in 0..<picture.height { for x in 0..<340 { paint(&blank, width: picture.width, x, y, (128, 128, 128)) } }
        let faceless = try PNGEncoder().encode(Image.test(picture.width, picture.height, blank))
        let detector = try FaceDetector(contentsOf: Self.cascade)
        let crop = ["rs:fill:240:240"]
        try await withServer { server in
            let url = server.origin.serve(scene, at: "/scene.png")
            let (objectFaces, _) = try await Self.facesIn(server, url, crop + ["g:obj:face"], detector: detector)
            #expect(objectFaces >= 2)
            let (smartFaces, smart) = try await Self.facesIn(server, url, crop + ["g:sm"], detector: detector)
            #expect(smartFaces == 0)
            // The board is red and green (19,200 pixels): the plain smart crop holds most of it.
            #expect(Self.boardPixels(smart) > 15_000)
            // A class no detector finds falls back to smart gravity, as imgproxy's default.
            let (catFaces, cat) = try await Self.facesIn(server, url, crop + ["g:obj:cat"], detector: detector)
            #expect(catFaces == 0 && cat.pixels == smart.pixels)
            // So does a picture without faces.
            let empty = server.origin.serve(faceless, at: "/faceless.png")
            let (_, unfound) = try await Self.facesIn(server, empty, crop + ["g:obj:face"], detector: detector)
            let (_, emptySmart) = try await Self.facesIn(server, empty, crop + ["g:sm"], detector: detector)
            #expect(unfound.pixels == emptySmart.pixels && Self.boardPixels(unfound) > 15_000)
        }
        try await withServer({
            $0.imgproxySmartCropFindsFaces = true
            $0.imgproxyObjectsFallBackToSmart = false
            $0.faceCascade = Self.cascade.path
        }) { server in
            let url = server.origin.serve(scene, at: "/scene.png")
            let (smartFaces, _) = try await Self.facesIn(server, url, crop + ["g:sm"], detector: detector)
            #expect(smartFaces >= 2)
            // The crop option's own gravity too.
            let (cropFaces, _) = try await Self.facesIn(server, url, ["c:240:240:obj:face"], detector: detector)
            #expect(cropFaces >= 2)
            // Nothing to find, no fallback to smart: the centre, as g:ce.
            let (_, cat) = try await Self.facesIn(server, url, crop + ["g:obj:cat"], detector: detector)
            let (_, centre) = try await Self.facesIn(server, url, crop + ["g:ce"], detector: detector)
            #expect(cat.pixels == centre.pixels)
            let empty = server.origin.serve(faceless, at: "/faceless.png")
            let (_, unfound) = try await Self.facesIn(server, empty, crop + ["g:obj:face"], detector: detector)
            let (_, emptyCentre) = try await Self.facesIn(server, empty, crop + ["g:ce"], detector: detector)
            #expect(unfound.pixels == emptyCentre.pixels && Self.boardPixels(unfound) == 0)
        }
    }
}
