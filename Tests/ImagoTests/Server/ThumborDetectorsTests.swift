import Foundation
import Imago
import Testing

@testable import ImagoServer

/// thumbor's `DETECTORS` in `imago serve` without thumbor: settings read, a cascade that cannot be
/// read stops the service with its name, and `/smart/` crops around the faces of a group photo.
@Suite("thumbor's detectors in imago serve")
struct ThumborDetectorsTests {
    @Test("DETECTORS and the cascade files are read from thumbor.conf names and IMAGO_* variables; an unknown detector names its flag")
    func settings() throws {
        let values = try ServerSettings.values(
            arguments: [],
            environment: ["IMAGO_THUMBOR_DETECTORS": "thumbor.detectors.face_detector,feature_detector", "IMAGO_THUMBOR_FACE_CASCADE": "/x/face.xml"])
        let configuration = try ServerSettings.configuration(values).configuration
        #expect(configuration.thumborDetectors == [.face, .feature])
        #expect(configuration.thumborCascadeFiles.face == "/x/face.xml" && configuration.thumborCascadeFiles.profile == "haarcascade_profileface.xml")
        let unknown = try ServerSettings.values(arguments: [], environment: ["IMAGO_THUMBOR_DETECTORS": "thumbor.detectors.queued_sqs_detector"])
        #expect(throws: ServerError(status: 500, "--thumbor-detectors (IMAGO_THUMBOR_DETECTORS): Imago has no detector thumbor.detectors.queued_sqs_detector"))
        {
            try ServerSettings.configuration(unknown)
        }
    }

    @Test("a cascade file that is missing or broken stops the service with a message naming it")
    func unreadableCascade() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files = ThumborDetectors.CascadeFiles()
        files.directory = directory.path
        let missing = #expect(throws: ServerError.self) { try ThumborDetectors([.face], files: files) }
        #expect(missing?.message.contains(directory.appendingPathComponent("haarcascade_frontalface_alt.xml").path) == true, "\(String(describing: missing))")
        try Data("<opencv_storage><cascade>".utf8).write(to: directory.appendingPathComponent("haarcascade_profileface.xml"))
        let broken = #expect(throws: ServerError.self) { try ThumborDetectors([.profile], files: files) }
        #expect(broken?.message.contains("profile_detector") == true)
        var configuration = ServerConfiguration()
        configuration.thumborDetectors = [.face]
        configuration.thumborCascadeFiles = files
        #expect(throws: ServerError.self) { try ImageService(configuration: configuration) }
        // Features need no file.
        #expect(try !ThumborDetectors([.feature], files: files).isEmpty)
    }

    @Test(
        "/smart/ with face detection crops around the faces: meta/ lists them, the crop keeps them, the key differs from saliency's",
        .enabled(if: OpenCVReference.isInstalled))
    func smartCropsAroundFaces() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Three faces in a row, 80 pixels each, on a wide grey canvas: a square crop must choose.
        let (plane, _) = try await OpenCVReference.group(columns: 3, rows: 1, side: 80, in: directory)
        let rgba: [UInt8] = plane.pixels.flatMap { grey -> [UInt8] in [grey, grey, grey, 255] }
        let metadata = ImageMetadata(format: .png, originalWidth: plane.width, originalHeight: plane.height, orientationApplied: .up, hasAlpha: false)
        let photo = try PNGEncoder().encode(Image(width: plane.width, height: plane.height, frames: [.init(pixels: rgba)], metadata: metadata))
        try await withServer({
            $0.dialect = .thumbor
            $0.thumborDetectors = [.face, .feature]
        }) { server in
            let url = server.origin.serve(photo, at: "/group.png")
            let host = url.host! + ":" + String(url.port!)
            let meta = try await server.get("/unsafe/meta/100x100/smart/\(host)/group.png")
            #expect(meta.status == 200)
            let json = try #require(JSONSerialization.jsonObject(with: meta.body) as? [String: Any])["thumbor"] as? [String: Any]
            let points = (json?["focal_points"] as? [[String: Any]]) ?? []
            #expect(points.count == 3 && points.allSatisfy { ($0["origin"] as? String) == "Face Detection" }, "\(points)")
            let answer = try await server.get("/unsafe/100x100/smart/\(host)/group.png")
            #expect(answer.status == 200)
            let made = try DecoderRegistry.standard().decode(answer.body)
            #expect(made.width == 100 && made.height == 100)
            // The faces' centre of mass is the middle face: the crop holds it, not the margin.
            let crop = ((json?["operations"] as? [[String: Any]]) ?? []).first { ($0["type"] as? String) == "crop" }
            let left = (crop?["left"] as? Int) ?? -1, right = (crop?["right"] as? Int) ?? -1
            let middle = points.map { ($0["x"] as? Int) ?? 0 }.sorted()[1]
            #expect(left < middle && middle < right, "crop \(String(describing: crop)), faces at \(points)")
        }
    }
}
