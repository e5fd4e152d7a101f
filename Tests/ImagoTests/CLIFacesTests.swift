import Foundation
import Imago
import Testing

/// `imago info --faces`: the faces a cascade finds, in the upright full-size image's pixels.
@Suite("imago info --faces")
struct CLIFacesTests {
    @Test(
        "--json lists the faces of the scene in its pixels, the text tells them; a picture without faces lists none",
        .enabled(if: OpenCVReference.isReferenceRun))
    func faces() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scene = try await OpenCVReference.faceScene(in: directory)
        let file = directory.appendingPathComponent("scene.png")
        try PNGEncoder().encode(scene).write(to: file)
        let plain = directory.appendingPathComponent("plain.png")
        try PNGEncoder().encode(Image.test(64, 48, [UInt8](repeating: 200, count: 64 * 48 * 4))).write(to: plain)
        let run = try await imago(["info", "--json", "--faces", file.path, plain.path])
        #expect(run.status == 0)
        let infos = try #require(try JSONSerialization.jsonObject(with: run.output) as? [[String: Any]])
        let faces = (infos.first?["faces"] as? [[String: Int]]) ?? []
        // The three faces, as the library finds them.
        let expected = try FaceDetector(contentsOf: OpenCVReference.cascade("haarcascades/haarcascade_frontalface_alt.xml")).faces(in: scene)
        #expect(faces.count == 3 && faces.map { [$0["x"]!, $0["y"]!, $0["width"]!, $0["height"]!] } == expected.map { [$0.x, $0.y, $0.width, $0.height] })
        // One box centred in each face's tile (x 20…100, 120…200, 220…300; y 60…140).
        let centres = faces.map { (x: ($0["x"] ?? 0) + ($0["width"] ?? 0) / 2, y: ($0["y"] ?? 0) + ($0["height"] ?? 0) / 2) }
        #expect(Set(centres.map { ($0.x - 20) / 100 }) == [0, 1, 2] && centres.allSatisfy { (60..<140).contains($0.y) }, "\(faces)")
        #expect((infos.last?["faces"] as? [Any])?.isEmpty == true)
        let text = String(decoding: try await imago(["info", "--faces", file.path, plain.path]).output, as: UTF8.self)
        #expect(
            text.contains("  faces: \(expected[0].width)×\(expected[0].height) at \(expected[0].x),\(expected[0].y)") && text.contains("faces: none found"),
            "\(text)")
        // Without --faces, no faces key.
        let without = try await imago(["info", "--json", file.path])
        #expect(try (JSONSerialization.jsonObject(with: without.output) as? [[String: Any]])?.first?["faces"] == nil)
    }

    @Test("--face-cascade naming a file that is not a cascade fails before any input, with the reason")
    func badCascade() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bogus = directory.appendingPathComponent("bogus.xml")
        try Data("<html></html>".utf8).write(to: bogus)
        let run = try await imago(["info", "--faces", "--face-cascade", bogus.path, bogus.path], withStandardError: true)
        let text = String(decoding: run.output, as: UTF8.self)
        #expect(run.status != 0 && text.contains("--face-cascade \(bogus.path)") && text.contains("not an OpenCV storage file"), "\(text)")
    }
}
