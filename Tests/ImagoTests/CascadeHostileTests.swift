import Foundation
import Imago
import Testing

/// Cascade files and pictures that try to break the detectors: each file is refused with a reason
/// or read into a cascade that never reads outside its tables; each picture gives an answer.
@Suite("Hostile cascades and pictures")
struct CascadeHostileTests {
    /// A small valid cascade: a 4×4 window, one stage of one stump on a two-rectangle feature.
    static func cascade(
        window: String = "<width>4</width><height>4</height>", stageType: String = "BOOST", featureType: String = "HAAR",
        nodes: String = "0 -1 0 0.5", leaves: String = "-1 1", threshold: String = "0",
        features: String = "<_><rects><_>0 0 4 2 -1.</_><_>0 2 4 2 1.</_></rects></_>", maxCatCount: String = "0"
    ) -> Data {
        Data(
            """
            <?xml version="1.0"?>
            <opencv_storage>
            <cascade type_id="opencv-cascade-classifier"><stageType>\(stageType)</stageType>
              <featureType>\(featureType)</featureType>\(window)
              <featureParams><maxCatCount>\(maxCatCount)</maxCatCount></featureParams>
              <stageNum>1</stageNum>
              <stages><_><maxWeakCount>1</maxWeakCount><stageThreshold>\(threshold)</stageThreshold>
                <weakClassifiers><_><internalNodes>\(nodes)</internalNodes><leafValues>\(leaves)</leafValues></_></weakClassifiers></_></stages>
              <features>\(features)</features>
            </cascade>
            </opencv_storage>
            """.utf8)
    }

    /// A picture whose top half is dark and bottom half light, which the small cascade accepts.
    static func edges(width: Int, height: Int) -> GrayPlane {
        GrayPlane(width: width, height: height, pixels: (0..<(width * height)).map { ($0 / width) % 4 < 2 ? 20 : 230 })
    }

    @Test("the small cascade is read and finds windows, so the refusals below are the changes alone")
    func theBaseCascadeWorks() throws {
        let cascade = try CascadeClassifier(xml: Self.cascade())
        #expect(cascade.windowWidth == 4 && cascade.featureKind == .haar)
        let found = cascade.detect(in: Self.edges(width: 16, height: 16), options: .init(minNeighbors: 0))
        #expect(!found.isEmpty)
    }

    @Test(
        "broken files are refused with a reason",
        arguments: [
            ("not XML", Data("hello".utf8)),
            ("cut short", Self.cascade().prefix(300)),
            ("unclosed", Data("<opencv_storage><cascade>".utf8)),
            ("closed by another tag", Data("<opencv_storage><cascade></stages></opencv_storage>".utf8)),
            ("a DOCTYPE inside", Data("<opencv_storage><!DOCTYPE x><cascade/></opencv_storage>".utf8)),
            ("not UTF-8", Data([0x3C, 0xFF, 0xFE, 0x3E])),
            ("deeply nested", Data((String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)).utf8)),
            ("old format", Self.cascade(stageType: "")),
            ("HOG features", Self.cascade(featureType: "HOG")),
            ("a zero window", Self.cascade(window: "<width>0</width><height>4</height>")),
            ("a huge window", Self.cascade(window: "<width>100000</width><height>4</height>")),
            ("no window", Self.cascade(window: "")),
            ("a feature index past the end", Self.cascade(nodes: "0 -1 7 0.5")),
            ("a negative feature index", Self.cascade(nodes: "0 -1 -1 0.5")),
            ("a node linking to itself", Self.cascade(nodes: "1 -1 0 0.5 1 -2 0 0.5", leaves: "1 2 3")),
            ("a link backwards", Self.cascade(nodes: "1 2 0 0.5 -1 -2 0 0.5 1 -3 0 0.5", leaves: "1 2 3 4")),
            ("a leaf past the end", Self.cascade(nodes: "0 -5 0 0.5")),
            ("too few leaves", Self.cascade(leaves: "1")),
            ("a node cut short", Self.cascade(nodes: "0 -1 0")),
            ("NaN", Self.cascade(threshold: "nan")),
            ("infinity", Self.cascade(nodes: "0 -1 0 inf")),
            ("1e400", Self.cascade(leaves: "1e400 1")),
            ("a word", Self.cascade(threshold: "zero")),
            ("a fractional link", Self.cascade(nodes: "0.5 -1 0 0.5")),
            ("a rectangle outside the window", Self.cascade(features: "<_><rects><_>0 0 5 2 -1.</_><_>0 2 4 2 1.</_></rects></_>")),
            ("a negative rectangle", Self.cascade(features: "<_><rects><_>-1 0 4 2 -1.</_><_>0 2 4 2 1.</_></rects></_>")),
            ("a tilted rectangle leaving the window", Self.cascade(features: "<_><rects><_>0 0 2 2 -1.</_><_>1 0 2 2 1.</_></rects><tilted>1</tilted></_>")),
            ("four rectangles", Self.cascade(features: "<_><rects>" + String(repeating: "<_>0 0 1 1 1.</_>", count: 4) + "</rects></_>")),
            ("no features", Self.cascade(features: "")),
            (
                "an LBP grid outside the window",
                Self.cascade(featureType: "LBP", nodes: "0 -1 0 1 2 3 4 5 6 7 8", features: "<_><rect>0 0 2 2</rect></_>", maxCatCount: "256")
            ),
            (
                "LBP codes of the wrong count",
                Self.cascade(featureType: "LBP", nodes: "0 -1 0 1 2", features: "<_><rect>0 0 1 1</rect></_>", maxCatCount: "256")
            ),
            (
                "a code word past 32 bits",
                Self.cascade(featureType: "LBP", nodes: "0 -1 0 1 2 3 4 5 6 7 4294967296", features: "<_><rect>0 0 1 1</rect></_>", maxCatCount: "256")
            ),
        ] as [(String, Data)])
    func refused(_ name: String, _ data: Data) {
        #expect(throws: CascadeClassifier.LoadError.self, "\(name)") { try CascadeClassifier(xml: data) }
    }

    @Test("a file larger than the bound is refused before it is parsed")
    func tooLarge() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("large.xml")
        var data = Self.cascade()
        data.append(Data(repeating: 0x20, count: CascadeClassifier.maxFileSize))
        try data.write(to: file)
        let error = #expect(throws: CascadeClassifier.LoadError.self) { try CascadeClassifier(contentsOf: file) }
        #expect(error?.description == "larger than \(CascadeClassifier.maxFileSize) bytes")
        #expect(throws: CascadeClassifier.LoadError.self) { try CascadeClassifier(contentsOf: directory.appendingPathComponent("missing.xml")) }
    }

    @Test("tilted features, trees and LBP codes read from small files detect without trapping")
    func otherKindsRun() throws {
        let tilted = try CascadeClassifier(
            xml: Self.cascade(features: "<_><rects><_>2 0 2 1 -1.</_><_>2 1 1 1 2.</_></rects><tilted>1</tilted></_>"))
        _ = tilted.detect(in: Self.edges(width: 12, height: 12), options: .init(minNeighbors: 0))
        let tree = try CascadeClassifier(xml: Self.cascade(nodes: "1 -1 0 0.5 0 -2 0 0.1", leaves: "1 2 3"))
        _ = tree.detect(in: Self.edges(width: 12, height: 12), options: .init(minNeighbors: 0))
        let lbp = try CascadeClassifier(
            xml: Self.cascade(
                featureType: "LBP", nodes: "0 -1 0 -1 -1 -1 -1 -1 -1 -1 -1", leaves: "1 -1", features: "<_><rect>0 0 1 1</rect></_>", maxCatCount: "256"))
        #expect(lbp.featureKind == .lbp)
        #expect(!lbp.detect(in: Self.edges(width: 12, height: 12), options: .init(minNeighbors: 0)).isEmpty, "every code is in the set")
    }

    @Test(
        "degenerate pictures: empty, one row, one column, smaller than the window, flat black, flat white, noise",
        arguments: [(0, 0), (1, 50), (50, 1), (3, 3), (4, 4), (64, 64)])
    func degeneratePictures(_ width: Int, _ height: Int) throws {
        let cascade = try CascadeClassifier(xml: Self.cascade())
        var generator = SystemRandomNumberGenerator()
        let count = width * height
        for pixels in [
            [UInt8](repeating: 0, count: count), [UInt8](repeating: 255, count: count), (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) },
        ] {
            let plane = GrayPlane(width: width, height: height, pixels: pixels)
            let found = cascade.detect(in: plane, options: .init(scaleFactor: 1, minNeighbors: 3))
            for box in found {
                #expect(box.x >= 0 && box.y >= 0 && box.x + box.width <= width && box.y + box.height <= height)
            }
            if pixels.allSatisfy({ $0 == pixels.first }) { #expect(found.isEmpty, "a flat picture has no contrast to test") }
            #expect(CornerDetector().corners(in: plane).count <= 20)
        }
    }

    @Test("a picture that every window passes stops adding hits at the bound (4,096) and still answers")
    func everyWindowPasses() throws {
        // A threshold no sum can miss: every window with contrast passes; 0 neighbours keeps each hit.
        let cascade = try CascadeClassifier(xml: Self.cascade(threshold: "-10"))
        let found = cascade.detect(in: Self.edges(width: 128, height: 128), options: .init(scaleFactor: 1.1, minNeighbors: 0))
        #expect(found.count == 4096)
        let grouped = cascade.detect(in: Self.edges(width: 128, height: 128), options: .init(scaleFactor: 1.1, minNeighbors: 3))
        #expect(grouped.count < 4096)
    }
}
