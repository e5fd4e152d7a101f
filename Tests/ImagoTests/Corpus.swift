import Foundation
import Imago

/// The shared test corpus, `../shared/corpus` beside the project root (see its README).
enum Corpus {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static func files(_ folder: String, extension ext: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == ext }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(path))
    }

    /// A corpus PNG's pixels as stored, its colour (PngSuite's `gAMA` of 1.0) not applied: the
    /// reference for a file another tool made from it, which carries no colour of its own.
    static func storedPixels(_ path: String) throws -> Image {
        var options = DecodingOptions()
        options.colorProfileHandling = .keep
        return try PNGDecoder().decode(try data(path), options: options)
    }

    /// The reference PNG for a corpus file: the `.png` of the same stem, or of a shorter stem
    /// (`video-001.q50.420.progressive.jpeg` → `video-001.png`), as the corpus README says.
    static func reference(for file: URL) -> URL? {
        var stem = file.deletingPathExtension().lastPathComponent
        while true {
            let candidate = root.appendingPathComponent("jpeg/\(stem).png")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            guard let dot = stem.lastIndex(of: ".") else { return nil }
            stem = String(stem[..<dot])
        }
    }

    /// The corpus progressive JPEG with its last scan repeated 600 times: the progressive-JPEG DoS.
    static func progressiveScanBomb() throws -> Data {
        let data = try Corpus.data("jpeg/video-001.progressive.jpeg")
        guard let end = data.lastRange(of: Data([0xFF, 0xD9]))?.lowerBound,
            let lastScan = data[..<end].lastRange(of: Data([0xFF, 0xDA]))?.lowerBound
        else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var bomb = Data(data[..<end])
        for _ in 0..<600 { bomb.append(data[lastScan..<end]) }
        bomb.append(contentsOf: [0xFF, 0xD9])
        return bomb
    }

    /// Whether two pixel buffers are identical; a Bool, so a failure does not print megabytes.
    static func samePixels(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a == b
    }

    /// The mean absolute difference per channel (R, G, B), rounded down, as Go's averageDelta.
    static func meanDifference(_ a: Image, _ b: Image) -> Int {
        precondition(a.width == b.width && a.height == b.height)
        var sum = 0, count = 0
        for (index, (x, y)) in zip(a.pixels, b.pixels).enumerated() where index % 4 != 3 {
            sum += abs(Int(x) - Int(y))
            count += 1
        }
        return sum / max(count, 1)
    }

    /// The largest difference of any channel between two images of one size.
    static func maxDifference(_ a: Image, _ b: Image) -> Int {
        precondition(a.width == b.width && a.height == b.height)
        return zip(a.pixels, b.pixels).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }
}

/// Real files from public repositories, kept in `Tests/Samples` with their origin (its README).
enum Samples {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Samples")

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }
}
