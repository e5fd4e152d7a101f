import Foundation
import Imago
import Testing

/// Faces for smart crop: the window arithmetic, the detector's reduced search mapped back to the
/// image, and ``ImageProcessors/SmartCrop`` keeping faces before saliency.
@Suite("Faces in smart crop")
struct FaceDetectorTests {
    typealias Face = FaceDetector.Face

    /// The corner as an array, which compares.
    static func corner(_ width: Int, _ height: Int, _ faces: [Face]) -> [Int]? {
        FaceDetector.window(width: width, height: height, in: (1000, 500), around: faces).map { [$0.x, $0.y] }
    }

    @Test("the window holds the most face area, centred on the faces as far as the picture allows; no faces, no window")
    func window() {
        // One face: centred on it.
        #expect(Self.corner(200, 200, [Face(x: 600, y: 100, width: 60, height: 60)]) == [530, 30])
        // Near an edge: as centred as the picture allows.
        #expect(Self.corner(200, 200, [Face(x: 950, y: 450, width: 40, height: 40)]) == [800, 300])
        // Two faces too far apart for one window: the larger is held whole.
        let apart = [Face(x: 50, y: 50, width: 50, height: 50), Face(x: 800, y: 300, width: 100, height: 100)]
        let corner = Self.corner(150, 150, apart) ?? []
        #expect(corner.count == 2 && corner[0] <= 800 && corner[0] + 150 >= 900 && corner[1] <= 300 && corner[1] + 150 >= 400, "\(corner)")
        // Both fit: both held, the window centred on their middle (weighted by area).
        // (Their middle is at 350, 150: x 50 centres it; y 0 is as near as 400 rows allow.)
        #expect(Self.corner(600, 400, [Face(x: 100, y: 100, width: 100, height: 100), Face(x: 500, y: 100, width: 100, height: 100)]) == [50, 0])
        // A face larger than the window: the window lies inside it, at its middle.
        #expect(Self.corner(100, 100, [Face(x: 200, y: 100, width: 300, height: 300)]) == [300, 200])
        #expect(Self.corner(100, 100, []) == nil)
        #expect(Self.corner(100, 100, [Face(x: 5, y: 5, width: 0, height: 10)]) == nil)
    }

    @Test(
        "a picture over the search's side is searched reduced by whole blocks: the boxes are the reduced search's, scaled back",
        .enabled(if: OpenCVReference.isReferenceRun))
    func reducedSearch() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (group, _) = try await OpenCVReference.group(columns: 3, rows: 1, side: 80, in: directory)
        // Each grey pixel made a 3×3 block: the search reduces by 3 and sees the group itself.
        let (width, height) = (group.width * 3, group.height * 3)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let grey = group.pixels[(y / 3) * group.width + x / 3]
                paint(&pixels, width: width, x, y, (grey, grey, grey))
            }
        }
        let detector = try FaceDetector(contentsOf: OpenCVReference.cascade("haarcascades/haarcascade_frontalface_alt.xml"), maxSide: 400)
        let image = Image.test(width, height, pixels)
        let found = await offThePool { detector.faces(in: image) }
        let direct = await offThePool {
            detector.cascade.detect(in: group, options: .thumbor(width: group.width, height: group.height))
        }
        #expect(found.count == 3, "\(found)")
        let expected = Set(direct.map { Face(x: $0.x * 3, y: $0.y * 3, width: $0.width * 3, height: $0.height * 3) })
        #expect(Set(found) == expected)
        // Largest first.
        #expect(zip(found, found.dropFirst()).allSatisfy { $0.width * $0.height >= $1.width * $1.height })
    }

    @Test("SmartCrop with a face detector keeps the faces where saliency alone takes the colourful board", .enabled(if: OpenCVReference.isReferenceRun))
    func smartCropKeepsFaces() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scene = try await OpenCVReference.faceScene(in: directory)
        let detector = try FaceDetector(contentsOf: OpenCVReference.cascade("haarcascades/haarcascade_frontalface_alt.xml"))
        let plain = try ImageProcessors.SmartCrop(width: 240, height: 240)
        let withFaces = try ImageProcessors.SmartCrop(width: 240, height: 240, faces: detector)
        let salient = await offThePool { plain.origin(in: scene) }
        let facing = await offThePool { withFaces.origin(in: scene) }
        #expect(salient.x + 240 > 780, "saliency alone: \(salient)")
        #expect(facing.x + 240 <= 330, "with faces: \(facing)")
        // The window holds two whole faces of the three (each 80 wide, 20 apart).
        let result = try await offThePool { try withFaces.process(scene) }
        let inside = await offThePool { detector.faces(in: result) }
        #expect(result.width == 240 && result.height == 240 && inside.count >= 2, "\(inside)")
        #expect(plain.identifier != withFaces.identifier && withFaces.identifier.contains(detector.cascade.digest))
        #expect(plain != withFaces)
    }
}
